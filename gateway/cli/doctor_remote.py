"""``tierclaw doctor``'s checks that ask a server: the model and the memory model (one tiny completion:
key accepted, model exists, how long it took), the embedder (one short text), and each enabled channel's
credentials (Telegram ``getMe`` and ``getWebhookInfo``; Feishu's tenant token).

Each request is made once, without retries, bounded by the setting that bounds it in the gateway
(``provider.timeoutSeconds``, ``timeoutSeconds`` of the channel). No secret reaches a ``Check``: a bot
token is part of Telegram's URLs, so every text taken from an error is cleaned of it first.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from channels.outage import plain_reason
from gateway.cli.doctor_checks import Check, hide_userinfo

if TYPE_CHECKING:
    from gateway.config import Config, ProviderConfig


def _ms(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


async def check_model(name: str, provider: ProviderConfig, model: str, model_setting: str) -> Check:
    """One chat completion of one token. ``model_setting`` names the setting that picks ``model``."""
    import openai

    from gateway.config import has_api_key
    from memory.model.openai_model import describe_openai_error

    if provider.type != "openai" or not has_api_key(provider):
        return Check(name, True, "the offline stand-in (no API key): set provider.apiKey for a real model")
    url = hide_userinfo(provider.base_url)
    client = openai.AsyncOpenAI(
        api_key=provider.api_key.get_secret_value(),
        base_url=provider.base_url,
        timeout=provider.timeout_seconds,
        max_retries=0,
    )
    started = time.monotonic()
    try:
        await client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "ping"}], max_tokens=1
        )
    except (openai.AuthenticationError, openai.PermissionDeniedError):
        return Check(name, False, f"the API key was refused by {url}", "check provider.apiKey")
    except openai.NotFoundError:
        return Check(name, False, f"model {model!r} not found at {url}", f"check {model_setting}")
    except openai.APITimeoutError:
        return Check(
            name,
            False,
            f"no answer from {url} within {provider.timeout_seconds:g} s",
            "check that server, or raise provider.timeoutSeconds",
        )
    except openai.APIConnectionError as exc:
        return Check(name, False, f"cannot reach {url}: {plain_reason(exc)}", "check provider.baseUrl")
    except openai.OpenAIError as exc:
        return Check(name, False, f"{url} answered {describe_openai_error(exc)}", "check provider.baseUrl")
    finally:
        await client.close()
    return Check(name, True, f"{model} at {url} answered in {_ms(started)}")


async def check_memory_model(config: Config) -> Check:
    """The memory model, when it differs from the main one (otherwise the model check covers it)."""
    provider, model = config.memory_provider(), config.memory_model()
    if provider is config.provider and model == config.agent.model:
        return Check("memory model", True, "the same as the model (memory.provider and memory.model unset)")
    return await check_model("memory model", provider, model, "memory.model")


async def check_embedder(config: Config) -> Check:
    """One short text embedded by the configured embedder (the local model loads for it)."""
    from memory.vectors.embedding import build_embedder

    settings = config.memory.embedding.settings()
    try:
        embedder = build_embedder(settings)
    except ValueError as exc:
        return Check("embedder", False, str(exc), "check memory.embedding")
    if embedder is None:
        return Check("embedder", True, "none: keyword search only (memory.embedding.provider)")
    started = time.monotonic()
    try:
        vectors = await embedder.embed_queries(["tierclaw doctor"])
    except Exception as exc:  # EmbeddingError and whatever the backend raised: reported, not raised
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return Check(
            "embedder",
            False,
            f"{embedder.model_key}: {reason}",
            'check memory.embedding (model, baseUrl, apiKey), or set its provider to "none"',
        )
    finally:
        await embedder.close()
    return Check("embedder", True, f"{embedder.model_key}: {vectors.shape[1]} dimensions in {_ms(started)}")


async def check_telegram(config: Config) -> list[Check]:
    """``getMe`` (the token), then ``getWebhookInfo`` (and whether ``webhook.url`` is https)."""
    import httpx

    tg = config.channels.telegram
    token = tg.token.get_secret_value()

    def clean(text: str) -> str:
        return text.replace(token, "<token>") if token else text

    if not token:
        return [Check("telegram", False, "no token", "set channels.telegram.token (from @BotFather)")]
    async with httpx.AsyncClient(timeout=tg.timeout_seconds) as http:
        try:
            me = await _bot_api(http, f"{tg.base_url}{token}/getMe")
            hook = await _bot_api(http, f"{tg.base_url}{token}/getWebhookInfo") if me.get("ok") else {}
        except httpx.HTTPError as exc:
            reason = clean(plain_reason(exc))
            return [
                Check(
                    "telegram",
                    False,
                    f"cannot reach {hide_userinfo(tg.base_url)}: {reason}",
                    "check channels.telegram.baseUrl and the network",
                )
            ]
    if not me.get("ok"):
        status = me.get("error_code", "?")
        return [
            Check(
                "telegram",
                False,
                f"the Bot API refused the token ({status})",
                "check channels.telegram.token (from @BotFather)",
            )
        ]
    bot = me.get("result") or {}
    checks = [Check("telegram", True, f"@{bot.get('username', '?')} (id {bot.get('id', '?')}), {tg.mode}")]
    checks.append(_webhook_check(tg.mode, tg.webhook.url, hook.get("result") or {}))
    return checks


async def _bot_api(http: Any, url: str) -> dict[str, Any]:
    response = await http.post(url)
    try:
        body = response.json()
    except ValueError:
        body = None
    return body if isinstance(body, dict) else {"ok": False, "error_code": response.status_code}


def _webhook_check(mode: str, configured: str, info: dict[str, Any]) -> Check:
    """The webhook as Telegram has it, against ``mode`` and ``webhook.url``."""
    name = "telegram webhook"
    current = str(info.get("url") or "")
    error = str(info.get("last_error_message") or "")
    pending = info.get("pending_update_count", 0)
    if mode == "webhook":
        if not configured.startswith("https://"):
            return Check(
                name,
                False,
                f"webhook.url is {configured or 'empty'!r}: Telegram posts to https only",
                "set channels.telegram.webhook.url to your public https address",
            )
        if error:
            return Check(
                name,
                False,
                f"Telegram's last delivery failed: {error}",
                "check that webhook.url reaches webhook.listen:port",
            )
        return Check(name, True, f"{configured} ({pending} updates waiting)")
    if current:
        return Check(name, True, f"a webhook is set ({current}); polling deletes it at start")
    return Check(name, True, f"none set, as polling needs ({pending} updates waiting)")


async def check_feishu(config: Config) -> Check:
    """Feishu's tenant token for ``appId`` + ``appSecret`` (what every API call and the websocket need)."""
    import httpx

    fs = config.channels.feishu
    domain = hide_userinfo(fs.domain_url())
    if not fs.app_id or not fs.app_secret.get_secret_value():
        return Check(
            "feishu", False, "appId or appSecret is empty", "set channels.feishu.appId and appSecret"
        )
    body = {"app_id": fs.app_id, "app_secret": fs.app_secret.get_secret_value()}
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(timeout=fs.timeout_seconds) as http:
            response = await http.post(
                f"{fs.domain_url()}/open-apis/auth/v3/tenant_access_token/internal", json=body
            )
        answer = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        return Check(
            "feishu",
            False,
            f"cannot reach {domain}: {plain_reason(exc)}",
            "check channels.feishu.domain and the network",
        )
    code = answer.get("code") if isinstance(answer, dict) else None
    if code != 0 or not answer.get("tenant_access_token"):
        msg = str(answer.get("msg", "")) if isinstance(answer, dict) else ""
        return Check(
            "feishu",
            False,
            f"Feishu refused app {fs.app_id} (code {code}: {msg})",
            "check channels.feishu.appId and appSecret (console: 凭证与基础信息)",
        )
    return Check("feishu", True, f"app {fs.app_id}: tenant token issued in {_ms(started)} ({fs.mode})")
