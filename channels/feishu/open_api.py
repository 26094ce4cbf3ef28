"""Feishu open-api calls and how their answers are read: sending a message, the error a refusal raises,
and whether (and after how long) a failed call is worth retrying."""

from __future__ import annotations

import asyncio
import contextlib
import json

import lark_oapi as lark
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)

from channels.base import OutboundMessage
from channels.outage import plain_reason

RATE_LIMIT_CODES = frozenset({99991400, 230020, 11232})  # app, per-chat and custom-bot rate limits

# Longest wait between two attempts of a send (also caps Feishu's own rate-limit reset hint).
MAX_RETRY_WAIT_SECONDS = 30.0


class FeishuApiError(RuntimeError):
    """Feishu refused an API call; carries its ``code``, ``msg`` and HTTP status (never a secret)."""

    def __init__(self, action: str, code: int | None, msg: str | None, status: int | None) -> None:
        super().__init__(f"Feishu refused to {action}: code {code} ({msg or 'no message'}), HTTP {status}")
        self.code = code
        self.msg = msg
        self.status = status


def http_status(resp: lark.BaseResponse) -> int | None:
    """The HTTP status of the answer, when the SDK kept it."""
    return getattr(resp.raw, "status_code", None)


def retryable(resp: lark.BaseResponse) -> bool:
    """Rate limits, 429 and 5xx are worth another attempt; other refusals are final."""
    status = http_status(resp) or 0
    return status == 429 or status >= 500 or resp.code in RATE_LIMIT_CODES


def reset_seconds(resp: lark.BaseResponse) -> float | None:
    """Feishu's ``x-ogw-ratelimit-reset`` (seconds until the limit resets), capped; None if absent."""
    headers = getattr(resp.raw, "headers", None) or {}
    for name, value in headers.items():
        if name.lower() == "x-ogw-ratelimit-reset":
            with contextlib.suppress(ValueError):
                return max(0.0, min(float(value), MAX_RETRY_WAIT_SECONDS))
    return None


BOT_INFO_URI = "/open-apis/bot/v3/info"


async def read_bot_open_id(client: lark.Client) -> tuple[str, str]:
    """The bot's open_id from the bot info API (this also fetches the tenant token, in a thread), or
    ``("", what went wrong)``."""
    request = (
        lark.BaseRequest.builder()
        .http_method(lark.HttpMethod.GET)
        .uri(BOT_INFO_URI)
        .token_types({lark.AccessTokenType.TENANT})
        .build()
    )
    try:
        resp = await asyncio.to_thread(client.request, request)
    except Exception as exc:  # token refused (its text has code and msg only), network, non-JSON
        return "", plain_reason(exc)  # "connection refused", not urllib3's "Max retries exceeded …"
    if not resp.success():
        return "", f"code {resp.code} ({resp.msg})"
    try:
        open_id = json.loads(resp.raw.content).get("bot", {}).get("open_id", "")
    except (ValueError, AttributeError):
        open_id = ""
    return (str(open_id), "") if open_id else ("", "no open_id in the answer")


def post_message(
    client: lark.Client, message: OutboundMessage, msg_type: str, content: str, uuid: str
) -> lark.BaseResponse:
    """Send one piece with the SDK's sync call: a reply to ``message.reply_to`` when set, else a new message
    in ``message.chat_id``. Run it in a worker thread (the token fetch inside it blocks); ``uuid`` makes a
    retry idempotent."""
    if message.reply_to:
        body = (
            ReplyMessageRequestBody.builder()
            .msg_type(msg_type)
            .content(content)
            .reply_in_thread(False)
            .uuid(uuid)
            .build()
        )
        request = ReplyMessageRequest.builder().message_id(message.reply_to).request_body(body).build()
        return client.im.v1.message.reply(request)
    create = (
        CreateMessageRequestBody.builder()
        .receive_id(message.chat_id)
        .msg_type(msg_type)
        .content(content)
        .uuid(uuid)
        .build()
    )
    request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(create).build()
    return client.im.v1.message.create(request)
