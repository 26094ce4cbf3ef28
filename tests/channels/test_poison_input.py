"""Poison input is skipped, never fatal: whole getUpdates batches and Feishu callback bodies of any shape
(property tests over what a platform, a proxy or an attacker could send)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from telegram import Update

from channels.feishu.callback import Refusal, refusal
from channels.telegram.failures import parse_updates

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def good_update(update_id: int) -> dict[str, Any]:
    user = {"id": 42, "is_bot": False, "first_name": "Ann"}
    chat = {"id": 42, "type": "private", "first_name": "Ann"}
    return {
        "update_id": update_id,
        "message": {"message_id": update_id, "date": 1_700_000_000, "chat": chat, "from": user, "text": "hi"},
    }


def batch_of(items: list[Any]) -> list[Any]:
    """A batch as Telegram would number it (ids 1, 2, …): None becomes a good update, a dict a message
    with that content, anything else stays junk without an id."""
    out: list[Any] = []
    for number, item in enumerate(items, start=1):
        if item is None:
            out.append(good_update(number))
        elif isinstance(item, dict):
            out.append({"update_id": number, "message": item})
        else:
            out.append(item)
    return out


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.none() | JSON, max_size=8).map(batch_of))
def test_any_getupdates_batch_parses_what_it_can_and_skips_the_rest(batch: list[Any]) -> None:
    updates, skip_to = parse_updates(batch, None)
    assert all(isinstance(u, Update) for u in updates)
    taken = {u.update_id for u in updates}
    good = {
        item["update_id"]
        for item in batch
        if isinstance(item, dict) and item == good_update(item["update_id"])
    }
    assert good <= taken  # every good update is taken
    numbered = [item["update_id"] for item in batch if isinstance(item, dict)]
    bad = [i for i in numbered if i not in taken]
    assert skip_to == (max(bad) + 1 if bad else 0)  # past every numbered update that did not parse


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode())), st.booleans())
def test_any_callback_body_gets_an_answer_never_an_exception(body: bytes, encrypted: bool) -> None:
    headers = {"X-Lark-Signature": "0" * 64, "X-Lark-Request-Timestamp": "1", "X-Lark-Request-Nonce": "n"}
    key = "encrypt-key" if encrypted else ""
    verdict = refusal(body, headers, encrypt_key=key, verification_token="token")
    assert verdict is None or (isinstance(verdict, Refusal) and verdict.status in (400, 401, 403))
    if verdict is not None:
        assert json.loads(verdict.body()) in (
            {"msg": "bad request"},
            {"msg": "unauthorized"},
            {"msg": "forbidden"},
        )


@given(JSON.filter(lambda v: isinstance(v, dict)))
def test_an_event_body_with_an_encrypt_field_that_is_not_ours_is_refused(event: dict) -> None:
    body = json.dumps({**event, "encrypt": "not base64 at all ~~~"}).encode()
    verdict = refusal(body, {}, encrypt_key="encrypt-key", verification_token="token")
    assert verdict is not None and verdict.status == 403
