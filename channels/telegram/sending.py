"""Sending and editing Telegram messages: Markdown rendered to HTML, a plain-text retry where Telegram cannot
parse it, pieces cut smaller where it finds them too long, and the retries a send may take.

Shared by the channel's ``send`` and its streamed replies (``streaming.py``). Every call goes through
``call``, which waits out a chat's ``RetryAfter`` first (``ChatPace``: one 429 pauses every send and edit
of that chat, not just the one that met it) and retries only what is safe to retry (its docstring).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from telegram import Bot, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, NetworkError, RetryAfter

from channels.chunks import split_text
from channels.telegram.failures import may_have_arrived, retry_after
from channels.telegram.html import markdown_to_html
from channels.telegram.pace import ChatPace

log = logging.getLogger("tierclaw.channels")

MAX_MESSAGE = 4096  # telegram.constants.MessageLimit.MAX_TEXT_LENGTH
MIN_PIECE = 64  # "message is too long" re-splits stop here
T = TypeVar("T")
Render = Callable[[str], str]  # Markdown to Telegram HTML


@dataclass(frozen=True)
class Retries:
    """How a send is retried (the channel's knobs: ``TelegramChannel.send_attempts`` …)."""

    attempts: int  # tries in all on 429s and on requests that never reached Telegram
    ambiguous: int  # retries after a failure that may have delivered the message
    max_retry_after: float  # a longer flood wait is not slept through: the call fails instead
    backoff: Callable[[int], float]  # seconds before try n + 1 after n failures


async def call(request: Callable[[], Awaitable[T]], retries: Retries, pace: ChatPace, chat_id: str) -> T:
    """A Bot API call with retries that never send a message more than twice.

    sendMessage has no idempotency key, so a retry after Telegram already took the message shows it
    twice. Failures are therefore sorted by whether the request may have been processed:

    - **not processed**: a 429 (Telegram refused it; the whole chat waits ``retry_after``) and a request
      that never left this machine (connection refused or reset while connecting, connect or pool
      timeout): retried with backoff, up to ``attempts`` tries in all;
    - **maybe processed**: a read or write timeout, a connection lost after the request was written,
      and any 5xx (Telegram's front end answers 502/504 when its backend was slow, which may still have
      sent the message): retried at most ``ambiguous`` (1) time, because a lost reply is worse than a
      duplicate, but a flaky link must not post the same message four times.

    Other errors (400s, 403…) are raised at once.
    """
    attempt = ambiguous = 0
    while True:
        attempt += 1
        if (paused := pace.paused_for(chat_id)) > 0:  # a 429 met by another call of this chat
            if paused > retries.max_retry_after:
                raise RetryAfter(int(paused) + 1)
            await asyncio.sleep(paused)
        try:
            return await request()
        except RetryAfter as exc:
            wait = retry_after(exc)
            pace.pause(chat_id, wait)
            if attempt >= retries.attempts or wait > retries.max_retry_after:
                raise
            log.info("[telegram] rate limited by Telegram; retrying in %.0f s", wait)
        except BadRequest:
            raise
        except NetworkError as exc:  # includes TimedOut and 5xx answers
            if may_have_arrived(exc):
                ambiguous += 1
                if ambiguous > retries.ambiguous or attempt >= retries.attempts:
                    raise
                log.info("[telegram] sending may have failed (%s); retrying once", exc)
            elif attempt >= retries.attempts:
                raise
            else:
                log.debug("[telegram] send failed (%s); retrying", exc)
            await asyncio.sleep(retries.backoff(attempt))


@dataclass(frozen=True)
class Outbox:
    """Where a chat's messages go: the bot (asked for when a call goes out: a stream may open before the
    channel has started, when the gateway resumes replies at start), the chat, its retries and pace."""

    bot_of_channel: Callable[[], Bot]
    chat_id: str
    retries: Retries
    pace: ChatPace

    @property
    def bot(self) -> Bot:
        return self.bot_of_channel()

    async def send_text(
        self, text: str, reply_to: str = "", render: Render = markdown_to_html
    ) -> list[Message]:
        """``text`` as ≤4096-character HTML messages; the first one replies to ``reply_to``. ``render``:
        a streamed reply's final text passes the renderer its drafts used (html.py, ``DraftRenderer``)."""
        sent: list[Message] = []
        for piece in split_text(text, MAX_MESSAGE):
            sent.extend(await self.send_piece(piece, reply_to, html=True, render=render))
            reply_to = ""
        return sent

    async def send_piece(
        self, markdown: str, reply_to: str, *, html: bool = True, render: Render = markdown_to_html
    ) -> list[Message]:
        """One piece; sent as plain text if Telegram cannot parse its HTML, cut smaller if too long."""
        reply = (
            ReplyParameters(message_id=int(reply_to), allow_sending_without_reply=True)
            if reply_to.isdigit()
            else None
        )
        text = render(markdown) if html else markdown
        try:
            message = await call(
                lambda: self.bot.send_message(
                    self.chat_id, text, parse_mode=ParseMode.HTML if html else None, reply_parameters=reply
                ),
                self.retries,
                self.pace,
                self.chat_id,
            )
            self.pace.sent(self.chat_id)
            return [message]
        except BadRequest as exc:
            reason = exc.message.casefold()
            if html and "can't parse entities" in reason:
                log.info(
                    "[telegram] Telegram could not parse a reply chunk as HTML (%s); sent it as plain text",
                    exc,
                )
                return await self.send_piece(markdown, reply_to, html=False)
            if "message is too long" in reason and len(markdown) > MIN_PIECE:
                sent: list[Message] = []
                for piece in split_text(markdown, max(MIN_PIECE, len(markdown) // 2)):
                    sent.extend(await self.send_piece(piece, reply_to, html=html, render=render))
                    reply_to = ""
                return sent
            raise

    async def edit_piece(
        self, message_id: int, markdown: str, *, html: bool = True, render: Render = markdown_to_html
    ) -> None:
        """Make message ``message_id`` show ``markdown`` (as plain text if its HTML cannot be parsed);
        the same text again is no change, not a failure. ``render``: a message edited as a reply grows
        passes its ``DraftRenderer`` (html.py), which renders the same, re-parsing only the open end."""
        text = render(markdown) if html else markdown
        try:
            await call(
                lambda: self.bot.edit_message_text(
                    text, self.chat_id, message_id, parse_mode=ParseMode.HTML if html else None
                ),
                self.retries,
                self.pace,
                self.chat_id,
            )
            self.pace.sent(self.chat_id)
        except BadRequest as exc:
            reason = exc.message.casefold()
            if "message is not modified" in reason:
                return
            if html and "can't parse entities" in reason:
                await self.edit_piece(message_id, markdown, html=False)
                return
            raise
