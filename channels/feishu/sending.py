"""Sending to Feishu: a reply cut into messages (``post`` for Markdown, ``text`` otherwise) and the retries
every open-api call of the channel may take.

Shared by the channel's ``send`` and its streaming cards (``cardkit.py``). Each piece of a reply is a
Reply API call on the inbound message (``create`` in the chat when there is nothing to reply to) with a
``uuid`` derived from the target, the piece's index and its text, so a retried send never posts twice
(Feishu keeps a uuid for 1 h). A refused ``post`` is sent again as plain ``text``. HTTP 429, rate-limit
codes, 5xx and network errors are retried a few times with backoff (honouring ``x-ogw-ratelimit-reset``);
any other refusal raises ``FeishuApiError`` with Feishu's code and message. The SDK fetches the tenant
token with a blocking ``requests`` call even from its async methods, so every call runs in a worker
thread (``asyncio.to_thread``) and the event loop never waits on the network.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

import lark_oapi as lark
import requests

from channels.base import ChannelError, OutboundMessage
from channels.chunks import split_text
from channels.feishu.events import message_uuid
from channels.feishu.open_api import (
    MAX_RETRY_WAIT_SECONDS,
    FeishuApiError,
    http_status,
    post_message,
    reset_seconds,
    retryable,
)
from channels.feishu.post import reply_body, text_content

log = logging.getLogger("tierclaw.channels")

CHUNK_LIMIT = 4000  # characters per message; a post body may be ~30 KB, 4000 CJK characters are ~12 KB
MAX_SEND_ATTEMPTS = 4
R = TypeVar("R", bound=lark.BaseResponse)


class FeishuSendError(ChannelError):
    """Feishu did not answer a call, however often it was tried."""


class Sender:
    """The channel's calls to Feishu; ``retry_base`` gives the first backoff (the channel's knob)."""

    def __init__(self, client: lark.Client, retry_base: Callable[[], float]) -> None:
        self.client = client
        self._retry_base = retry_base

    async def send(self, message: OutboundMessage) -> None:
        """Send the reply as one or more messages; raise FeishuApiError on refusal."""
        for index, piece in enumerate(split_text(message.text, CHUNK_LIMIT)):
            await self._send_piece(message, index, piece)

    async def _send_piece(self, message: OutboundMessage, index: int, piece: str) -> None:
        uuid = message_uuid(message.reply_to or message.chat_id, index, piece)
        msg_type, content = reply_body(piece)
        resp = await self.post(message, msg_type, content, uuid)
        if not resp.success() and msg_type == "post" and not retryable(resp):
            log.warning(
                "[feishu] a Markdown reply was refused (code %s: %s); sending it as plain text",
                resp.code,
                resp.msg,
            )
            resp = await self.post(message, "text", text_content(piece), uuid)
        if not resp.success():
            action = f"reply to {message.reply_to}" if message.reply_to else f"send to {message.chat_id}"
            raise FeishuApiError(action, resp.code, resp.msg, http_status(resp))

    async def post(
        self, message: OutboundMessage, msg_type: str, content: str, uuid: str
    ) -> lark.BaseResponse:
        """One message (a reply to ``message.reply_to``, else new in its chat), retried where safe: the
        uuid makes it idempotent."""
        return await self.call(lambda: post_message(self.client, message, msg_type, content, uuid))

    async def call(self, request: Callable[[], R], *, attempts: int = MAX_SEND_ATTEMPTS) -> R:
        """A sync SDK call in a worker thread, retried on rate limits, 5xx and network errors; the last
        answer (success or refusal) is returned, no answer at all raises ``FeishuSendError``."""
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                resp = await asyncio.to_thread(request)
            except (requests.RequestException, ValueError) as exc:  # network, timeout, non-JSON answer
                if last:
                    raise FeishuSendError(f"no answer from Feishu: {type(exc).__name__}: {exc}") from None
                await asyncio.sleep(self.backoff(attempt))
                continue
            if resp.success() or not retryable(resp) or last:
                return resp
            log.warning("[feishu] send got code %s (HTTP %s); retrying", resp.code, http_status(resp))
            reset = reset_seconds(resp)
            await asyncio.sleep(reset if reset is not None else self.backoff(attempt))
        raise AssertionError("unreachable")

    def backoff(self, attempt: int) -> float:
        return min(self._retry_base() * 2**attempt, MAX_RETRY_WAIT_SECONDS)
