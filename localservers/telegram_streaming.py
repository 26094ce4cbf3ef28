"""What the local Telegram server does for streamed replies: drafts, edits, deletes and per-chat limits.

``TelegramStub`` hands these methods here (``ChatWrites.METHODS``):
  * ``sendMessage`` — counted against the chat's limit, then sent as before (its text kept, for edits);
  * ``editMessageText`` — the bot's own message in that chat, HTML checked like ``sendMessage``; the same
    text again is 400 "message is not modified", an unknown message 400 "message to edit not found";
  * ``sendMessageDraft`` (Bot API 9.5+) — private chats only (a group: 400 ``TEXTDRAFT_PEER_INVALID``),
    ``draft_id`` non-zero, the text HTML-checked; the newest text of each draft is kept (``drafts``);
    ``refuse_drafts = True`` answers 404 as a Bot API server without the method does;
  * ``deleteMessage``.

Limits (Telegram publishes none exactly; these follow what bots meet, shared notes
"media-and-streaming.md"): per chat, messages and edits together at most ``burst`` (3) at once and one a
second after that (a token bucket), and in a group at most 20 a minute; drafts at most 10 a second per
chat. Beyond them the call is refused with 429 and ``retry_after`` (whole seconds, as Telegram sends it);
``rate_limited`` counts those answers. ``stopped`` is what Telegram sends when the person taps stop on a
draft (an update of kind ``stopped_message_generation``, Bot API 10.3).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Any, Protocol

from localservers.telegram_entities import check_html, utf16_len

Answer = tuple[int, dict[str, Any]]


class Call(Protocol):
    """A Bot API call as the server records it (``telegram_server.ApiCall``)."""

    method: str
    params: dict[str, str]


class BotApiServer(Protocol):
    """What these methods use of the server they belong to (``telegram_server.TelegramStub``)."""

    _cond: threading.Condition

    def _send_message(self, p: dict[str, str]) -> Answer: ...
    def _chat(self, chat_id: str) -> dict[str, Any]: ...
    def _message(self, chat: dict[str, Any], text: str) -> dict[str, Any]: ...


GROUP_PER_MINUTE = 20
DRAFTS_PER_SECOND = 10


def _bad(description: str, status: int = 400) -> tuple[int, dict[str, Any]]:
    return status, {"ok": False, "error_code": status, "description": description}


def _too_many(seconds: float) -> tuple[int, dict[str, Any]]:
    wait = max(1, math.ceil(seconds))
    return 429, {
        "ok": False,
        "error_code": 429,
        "description": f"Too Many Requests: retry after {wait}",
        "parameters": {"retry_after": wait},
    }


STOPPED = "stopped_message_generation"  # the kind of update: ``stub.update(stopped(42, 7), STOPPED)``


def stopped(chat_id: int, draft_id: int) -> dict[str, Any]:
    """What a person tapping stop on draft ``draft_id`` in private chat ``chat_id`` sends the bot."""
    return {"chat": {"id": chat_id, "type": "private", "first_name": "Ann"}, "draft_id": draft_id}


class ChatWrites:
    """Per chat: what the bot's messages say, the drafts shown, and the limits (see the module doc)."""

    METHODS = frozenset({"sendMessage", "editMessageText", "sendMessageDraft", "deleteMessage"})

    def __init__(self, stub: BotApiServer) -> None:
        self._stub = stub
        self.burst = 3
        self.per_second = 1.0
        self.limits = True  # False: no 429s at all
        self.refuse_drafts = False
        self.rate_limited = 0
        self.texts: dict[tuple[int, int], str] = {}  # (chat, message id) -> what the bot's message says
        self.drafts: dict[tuple[int, int], str] = {}  # (chat, draft id) -> the newest draft text
        self.deleted: list[tuple[int, int]] = []
        self._buckets: dict[int, tuple[float, float]] = {}  # chat -> (tokens, when counted)
        self._minute: dict[int, deque[float]] = {}
        self._draft_times: dict[int, deque[float]] = {}

    def answer(self, call: Call) -> Answer:
        """Answer one of ``METHODS``."""
        with self._stub._cond:  # a reentrant lock: the stub's own helpers take it too
            return self._answer(call)

    def _answer(self, call: Call) -> Answer:
        p = call.params
        chat = int(p.get("chat_id") or 0)
        if call.method == "sendMessageDraft":
            return self._draft(chat, p)
        if call.method == "deleteMessage":
            key = (chat, int(p.get("message_id") or 0))
            if self.texts.pop(key, None) is None:
                return _bad("Bad Request: message to delete not found")
            self.deleted.append(key)
            return 200, {"ok": True, "result": True}
        if (limited := self._limit(chat)) is not None:
            return limited
        if call.method == "sendMessage":
            status, body = self._stub._send_message(p)
            if status == 200:
                self.texts[(chat, int(body["result"]["message_id"]))] = body["result"]["text"]
            return status, body
        return self._edit(chat, p)

    def _edit(self, chat: int, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
        key = (chat, int(p.get("message_id") or 0))
        text, error = self._visible(p)
        if error:
            return _bad(error)
        if key not in self.texts:
            return _bad("Bad Request: message to edit not found")
        if self.texts[key] == text:
            return _bad(
                "Bad Request: message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        self.texts[key] = text
        message = {**self._stub._message(self._stub._chat(str(chat)), text), "message_id": key[1]}
        return 200, {"ok": True, "result": {**message, "edit_date": int(time.time())}}

    def _draft(self, chat: int, p: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if self.refuse_drafts:
            return _bad("Not Found", 404)
        if chat <= 0:
            return _bad("Bad Request: TEXTDRAFT_PEER_INVALID")
        draft_id = int(p.get("draft_id") or 0)
        if not draft_id:
            return _bad("Bad Request: draft_id must be non-zero")
        text, error = self._visible(p, empty_ok=True)
        if error:
            return _bad(error)
        if self.limits and (wait := self._window(self._draft_times, chat, 1.0, DRAFTS_PER_SECOND)) > 0:
            self.rate_limited += 1
            return _too_many(wait)
        self.drafts[(chat, draft_id)] = text
        return 200, {"ok": True, "result": True}

    def _visible(self, p: dict[str, str], *, empty_ok: bool = False) -> tuple[str, str]:
        """The text as the person would see it, or the error Telegram answers."""
        text = p.get("text", "")
        if p.get("parse_mode") == "HTML":
            text, error = check_html(text)
            if error:
                return "", f"Bad Request: can't parse entities: {error}"
        if not text.strip() and not empty_ok:
            return "", "Bad Request: message text is empty"
        if utf16_len(text) > 4096:
            return "", "Bad Request: message is too long"
        return text, ""

    def _limit(self, chat: int) -> tuple[int, dict[str, Any]] | None:
        """A 429 when the chat is over its limits (then nothing is counted), else None (counted)."""
        if not self.limits:
            return None
        now = time.monotonic()
        tokens, at = self._buckets.get(chat, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.per_second)
        wait = (1.0 - tokens) / self.per_second if tokens < 1.0 else 0.0
        if chat < 0:
            wait = max(wait, self._window(self._minute, chat, 60.0, GROUP_PER_MINUTE, count=False))
        if wait > 0:
            self.rate_limited += 1
            self._buckets[chat] = (tokens, now)
            return _too_many(wait)
        self._buckets[chat] = (tokens - 1.0, now)
        if chat < 0:
            self._minute.setdefault(chat, deque()).append(now)
        return None

    @staticmethod
    def _window(
        times: dict[int, deque[float]], chat: int, span: float, limit: int, *, count: bool = True
    ) -> float:
        """Seconds until one more call fits ``limit`` per ``span`` (0: it fits, and is counted)."""
        now = time.monotonic()
        recent = times.setdefault(chat, deque())
        while recent and now - recent[0] >= span:
            recent.popleft()
        if len(recent) >= limit:
            return recent[0] + span - now
        if count:
            recent.append(now)
        return 0.0

    def draft_texts(self, chat: int) -> list[str]:
        """The newest text of each draft shown in ``chat``."""
        return [text for (c, _), text in self.drafts.items() if c == chat]

    def reply_of(self, chat: int, message_id: int) -> str:
        """What one of the bot's messages says now (after its edits; "" once deleted)."""
        return self.texts.get((chat, message_id), "")
