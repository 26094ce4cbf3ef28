"""Per-chat refusals of the local Telegram server: a chat whose user blocked the bot (403 "Forbidden: bot
was blocked by the user") or that no longer exists (400 "Bad Request: chat not found"), as Telegram answers
``sendMessage`` for them — every time, not for the next call only (``TelegramStub.fail`` scripts those).
The reminder tests use it for deliveries the platform refuses for good (README "Reminders").

    tg.chat_refusals.block(42)        # every sendMessage to chat 42 is now refused with 403
    tg.chat_refusals.gone(77)         # … to chat 77 with 400 chat not found
    tg.chat_refusals.clear(42)
"""

from __future__ import annotations

import threading

BLOCKED = (403, "Forbidden: bot was blocked by the user")
CHAT_NOT_FOUND = (400, "Bad Request: chat not found")


class ChatRefusals:
    """The chats ``sendMessage`` is refused for, and how."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_chat: dict[str, tuple[int, str]] = {}

    def block(self, chat_id: int | str) -> None:
        """The user blocked the bot: 403 from now on."""
        with self._lock:
            self._by_chat[str(chat_id)] = BLOCKED

    def gone(self, chat_id: int | str) -> None:
        """The chat does not exist (deleted, or never did): 400 from now on."""
        with self._lock:
            self._by_chat[str(chat_id)] = CHAT_NOT_FOUND

    def clear(self, chat_id: int | str) -> None:
        """Answer the chat normally again."""
        with self._lock:
            self._by_chat.pop(str(chat_id), None)

    def refusal(self, method: str, params: dict[str, str]) -> tuple[int, str] | None:
        """(status, description) for a call to a refused chat, else None."""
        if method not in ("sendMessage", "sendChatAction", "editMessageText"):
            return None
        with self._lock:
            return self._by_chat.get(str(params.get("chat_id", "")))
