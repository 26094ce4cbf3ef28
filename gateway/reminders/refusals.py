"""Whether a platform refused a reminder for good (README "Reminders"): the bot was blocked or removed,
the chat is gone — sending again cannot help, so the reminder is marked failed with one log line instead
of being retried. Everything else (a timeout, a 5xx, a rate limit the channel gave up on) is retried with
backoff by ``delivery.py``. The channel libraries are imported only when their error is the one raised."""

from __future__ import annotations

# Telegram answers these to sendMessage when the chat cannot be reached any more (403 and 400 texts).
TELEGRAM_GONE = (
    "chat not found",
    "user not found",
    "bot was blocked",
    "bot was kicked",
    "user is deactivated",
    "bot is not a member",
    "have no rights to send",
    "peer_id_invalid",
    "group chat was deactivated",
    "chat_write_forbidden",
)
# Feishu's codes for a chat or person the bot can no longer write to.
FEISHU_GONE = frozenset(
    {
        230002,  # the bot is not in the chat
        230006,  # the app's bot ability is not activated
        230013,  # the bot is not available to this user
        230017,  # the user has blocked the bot / left
        230027,  # no permission to send to this chat
        230035,  # the chat does not exist / was dissolved
        232009,  # the chat was dissolved
    }
)


def refused_for_good(exc: BaseException) -> str | None:
    """Why sending can never succeed, or None when another try may."""
    module = type(exc).__module__
    if module.startswith("telegram"):
        from telegram.error import BadRequest, Forbidden

        text = str(getattr(exc, "message", exc))
        if isinstance(exc, Forbidden):
            return f"Telegram refused for good (403): {text}"
        if isinstance(exc, BadRequest) and any(part in text.casefold() for part in TELEGRAM_GONE):
            return f"Telegram refused for good (400): {text}"
        return None
    if type(exc).__name__ == "FeishuApiError":
        code = getattr(exc, "code", None)
        if code in FEISHU_GONE:
            return f"Feishu refused for good: {exc}"
    return None
