"""``tierclaw doctor``'s check of Feishu streaming cards: does Feishu let this app create a CardKit card?

A streamed reply on Feishu is a CardKit card (``channels/feishu/cardkit.py``), which needs the app scope
``cardkit:card:write``. Without it the gateway still answers — each reply whole at the end, with one log
line — so the check creates one small card (never sent to anyone: an unsent card entity expires) and says
which of the two a person will get, and what to grant for streaming. Asked once, without retries,
bounded by ``channels.feishu.timeoutSeconds``; no secret reaches the ``Check``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from channels.outage import plain_reason
from gateway.cli.doctor_checks import Check

if TYPE_CHECKING:
    from gateway.config import Config

NAME = "feishu streaming cards"
PROBE_CARD = {
    "schema": "2.0",
    "config": {"streaming_mode": False, "update_multi": True},
    "body": {"elements": [{"tag": "markdown", "element_id": "reply", "content": "tierclaw doctor"}]},
}


async def check_feishu_cards(config: Config) -> Check:
    """Create one card entity with the app's tenant token (see the module doc)."""
    import httpx

    fs = config.channels.feishu
    if not (fs.stream_cards and config.agent.stream):
        return Check(NAME, True, "off (channels.feishu.streamCards or agent.stream): replies are sent whole")
    credentials = {"app_id": fs.app_id, "app_secret": fs.app_secret.get_secret_value()}
    try:
        async with httpx.AsyncClient(base_url=fs.domain_url(), timeout=fs.timeout_seconds) as http:
            token = await http.post("/open-apis/auth/v3/tenant_access_token/internal", json=credentials)
            answer = await http.post(
                "/open-apis/cardkit/v1/cards",
                json={"type": "card_json", "data": json.dumps(PROBE_CARD)},
                headers={"Authorization": f"Bearer {token.json().get('tenant_access_token', '')}"},
            )
        body = answer.json()
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return Check(
            NAME, False, f"could not ask Feishu: {plain_reason(exc)}", "check channels.feishu.domain"
        )
    code = body.get("code") if isinstance(body, dict) else None
    if code == 0:
        return Check(NAME, True, "CardKit accepted a card: replies stream as cards (Feishu clients 7.20+)")
    msg = str(body.get("msg", ""))[:120] if isinstance(body, dict) else ""
    return Check(
        NAME,
        False,
        f"CardKit refused a card (code {code}: {msg}): replies are sent whole at the end",
        "grant the app the scope cardkit:card:write (开发者后台 → 权限管理) and publish a version, or set "
        "channels.feishu.streamCards to false",
    )
