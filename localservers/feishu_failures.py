"""Per-chat refusals of the local Feishu server: a chat the bot was removed from answers every send with
Feishu's code 230002 ("Bot/User can NOT be out of the chat."), as the real open platform does — every
time, not for the next send only (``FeishuStub.fail_sends`` scripts those). For deliveries refused for
good (README "Reminders").

    feishu.chat_refusals.bot_removed("oc_chat_1")
"""

from __future__ import annotations

import threading

BOT_REMOVED = (400, 230002, "Bot/User can NOT be out of the chat.")


class ChatRefusals:
    """The chats whose sends are refused, and with which (HTTP status, code, msg)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_chat: dict[str, tuple[int, int, str]] = {}

    def bot_removed(self, chat_id: str) -> None:
        with self._lock:
            self._by_chat[chat_id] = BOT_REMOVED

    def clear(self, chat_id: str) -> None:
        with self._lock:
            self._by_chat.pop(chat_id, None)

    def refusal(self, kind: str, target: str) -> tuple[int, int, str] | None:
        """The refusal of a ``create`` in a refused chat (``target`` is "chat_id:<id>"), else None."""
        if kind != "create":
            return None
        with self._lock:
            return self._by_chat.get(target.split(":", 1)[-1])
