"""Text of Telegram messages: the kind of attachment a message carries, cutting @mentions at UTF-16
offsets, normalising /command@bot."""

from __future__ import annotations

import re
from collections.abc import Sequence

from telegram import Message, MessageEntity

# Non-text content, in the order checked (an animation is also a document).
MEDIA = ("photo", "voice", "audio", "video", "video_note", "animation", "sticker", "document")


COMMAND_RE = re.compile(r"^(/\w+)(?:@(\w+))?")


def attachment(msg: Message) -> str:
    for kind in MEDIA:
        if getattr(msg, kind):
            return kind.replace("_", " ")
    return ""


def utf16_slice(text: str, start: int, end: int) -> str:
    """Telegram's entity offsets count UTF-16 code units, not Python characters."""
    return text.encode("utf-16-le")[start * 2 : end * 2].decode("utf-16-le", errors="ignore")


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the bot's mentions (UTF-16 spans) and the comma or colon right after one."""
    if not spans:
        return text
    units = text.encode("utf-16-le")
    for start, end in sorted(spans, reverse=True):
        head = units[: start * 2].decode("utf-16-le", errors="ignore")
        tail = units[end * 2 :].decode("utf-16-le", errors="ignore")
        tail = tail[1:] if tail[:1] in (",", ":", ";") else tail
        if head.endswith(" ") and tail.startswith(" "):
            tail = tail.lstrip(" ")
        units = (head + tail).encode("utf-16-le")
    return units.decode("utf-16-le").strip()


def normalise_command(text: str, username: str) -> str:
    """``/cmd@this_bot args`` → ``/cmd args`` (the gateway recognises a leading ``/``)."""
    match = COMMAND_RE.match(text)
    if match and match.group(2) and match.group(2).casefold() == username.casefold():
        return match.group(1) + text[match.end() :]
    return text


def mention_spans(
    text: str, entities: Sequence[MessageEntity], bot_username: str, bot_id: int
) -> list[tuple[int, int]]:
    """UTF-16 ``(offset, end)`` of each @mention of the bot (by username or as a text mention)."""
    me = f"@{bot_username}".casefold()
    spans = []
    for entity in entities:
        if entity.type == MessageEntity.MENTION:
            if utf16_slice(text, entity.offset, entity.offset + entity.length).casefold() == me:
                spans.append((entity.offset, entity.offset + entity.length))
        elif entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            spans.append((entity.offset, entity.offset + entity.length))
    return spans


def replies_to(msg: Message, bot_id: int) -> bool:
    """Whether ``msg`` replies to one of the bot's own messages (a forum topic's root does not count)."""
    original = msg.reply_to_message
    return bool(
        original is not None
        and original.from_user is not None
        and original.from_user.id == bot_id
        and not original.forum_topic_created  # in a forum, every message "replies" to its topic
    )
