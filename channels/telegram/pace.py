"""How fast the bot may write to each chat: Telegram's per-chat limits as the channel keeps them.

Telegram does not publish exact limits (about one message a second per chat, 20 a minute in a group; edits
count). Two things are kept per chat: when the bot last sent or edited there (a streamed reply's edits wait
``every`` seconds after it: ``channels.telegram.streamEvery``), and until when Telegram asked it to wait —
a 429's ``retry_after`` holds *every* send and edit of that chat, not only the call that met it
(shared notes, "media-and-streaming.md": peers that kept editing drew waits of minutes).

Why not python-telegram-bot's ``AIORateLimiter``: a ``RetryAfter`` there halts *every* request of the bot
(one busy group would stall fifty other chats), and it queues each call until it may go — for a streamed
reply that means stale frames sent late, where dropping them for the newest text is right.
"""

from __future__ import annotations

import time
from collections.abc import Callable

KEPT_CHATS = 4096  # beyond this many chats, those idle for an hour are forgotten
IDLE_S = 3600.0


class ChatPace:
    """Per chat: the last send or edit, and a ``RetryAfter`` pause (see the module doc)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last: dict[str, float] = {}
        self._paused_until: dict[str, float] = {}

    def sent(self, chat_id: str) -> None:
        """The bot just sent or edited a message in the chat."""
        self._last[chat_id] = self._clock()
        if len(self._last) > KEPT_CHATS:
            self._forget_idle()

    def pause(self, chat_id: str, seconds: float) -> None:
        """Telegram answered 429: nothing goes to the chat for ``seconds``."""
        until = self._clock() + seconds
        self._paused_until[chat_id] = max(self._paused_until.get(chat_id, 0.0), until)

    def paused_for(self, chat_id: str) -> float:
        """Seconds left of the chat's 429 pause (0: none)."""
        until = self._paused_until.get(chat_id)
        if until is None:
            return 0.0
        left = until - self._clock()
        if left <= 0:
            del self._paused_until[chat_id]
            return 0.0
        return left

    def next_in(self, chat_id: str, every: float) -> float:
        """Seconds until the chat may get its next edit: ``every`` after the last send or edit, and not
        before its pause ends."""
        since = self._clock() - self._last.get(chat_id, float("-inf"))
        return max(self.paused_for(chat_id), every - since, 0.0)

    def _forget_idle(self) -> None:
        now = self._clock()
        for chat_id in [c for c, at in self._last.items() if now - at > IDLE_S]:
            del self._last[chat_id]
