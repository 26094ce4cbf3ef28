"""What a Feishu message event holds, and the InboundMessage it becomes (mentions, text and
attachments, reply target), plus the ids that make sends idempotent."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from lark_oapi.api.im.v1 import (
    P2ImMessageReceiveV1,
)

from channels.base import InboundMessage
from channels.feishu.media import media_refs
from channels.feishu.post import post_media, post_plain_text

# lark's EventDispatcherHandler reads these with a case-sensitive dict.get.
LARK_HEADERS = ("X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature", "X-Request-Id")


CHANNEL_NAME = "feishu"


@dataclass(frozen=True, slots=True)
class Mention:
    key: str  # the placeholder in the text, e.g. "@_user_1"
    open_id: str
    name: str


@dataclass(frozen=True, slots=True)
class FeishuEvent:
    """The parts of an ``im.message.receive_v1`` event the channel uses (plain data, thread-safe)."""

    event_id: str
    message_id: str
    chat_id: str
    chat_type: str  # "p2p" or "group"
    sender_open_id: str
    sender_type: str  # "user", "app", ...
    message_type: str  # "text", "post", "image", ...
    content: str  # the message content, a JSON string
    mentions: tuple[Mention, ...] = ()


def event_from_lark(data: P2ImMessageReceiveV1) -> FeishuEvent:
    """Copy the fields we need out of the SDK's event object (missing parts become empty strings)."""
    header = data.header
    event = data.event
    message = getattr(event, "message", None)
    sender = getattr(event, "sender", None)
    sender_ids = getattr(sender, "sender_id", None)
    mentions = tuple(
        Mention(
            key=m.key or "",
            open_id=getattr(m.id, "open_id", None) or "",
            name=m.name or "",
        )
        for m in (getattr(message, "mentions", None) or [])
    )
    return FeishuEvent(
        event_id=getattr(header, "event_id", None) or "",
        message_id=getattr(message, "message_id", None) or "",
        chat_id=getattr(message, "chat_id", None) or "",
        chat_type=getattr(message, "chat_type", None) or "",
        sender_open_id=getattr(sender_ids, "open_id", None) or "",
        sender_type=getattr(sender, "sender_type", None) or "",
        message_type=getattr(message, "message_type", None) or "",
        content=getattr(message, "content", None) or "",
        mentions=mentions,
    )


def inbound_message(event: FeishuEvent, bot_open_id: str) -> InboundMessage | None:
    """The gateway's message for ``event``, or None when a group message does not @mention the bot.

    ``bot_open_id`` empty means unknown: then any mention counts as the bot (see the module doc).
    """
    is_bot = {m.key: (m.open_id == bot_open_id if bot_open_id else True) for m in event.mentions}
    mentions_bot = any(is_bot.values())
    is_group = event.chat_type != "p2p"
    if is_group and not mentions_bot:
        return None
    text, attachment = text_and_attachment(event.message_type, event.content)
    for mention in sorted(event.mentions, key=lambda m: len(m.key), reverse=True):  # @_user_10 before _1
        if not mention.key:
            continue
        if is_bot[mention.key]:
            text = text.replace(mention.key + " ", "").replace(mention.key, "")
        else:
            text = text.replace(mention.key, f"@{mention.name}" if mention.name else "")
    return InboundMessage(
        channel=CHANNEL_NAME,
        chat_id=event.chat_id,
        sender_id=event.sender_open_id,
        text=text.strip(),
        message_id=event.message_id,
        is_group=is_group,
        mentions_bot=mentions_bot,
        attachment=attachment,
        delivery_id=event.event_id,
        media=media_refs(event.message_type, event.content),
    )


def text_and_attachment(message_type: str, content: str) -> tuple[str, str]:
    try:
        body: Any = json.loads(content) if content else {}
    except json.JSONDecodeError:
        body = {}
    if message_type == "text":
        return str(body.get("text") or "") if isinstance(body, dict) else "", ""
    if message_type == "post":
        text = post_plain_text(body)
        return text, "" if text else post_media(body)
    # image, file, audio, media, sticker, and anything else we cannot read (cards, shared chats, …)
    return "", message_type or "message"


def message_uuid(target: str, index: int, text: str) -> str:
    """Feishu's idempotency key (≤ 50 chars) for piece ``index`` of a reply to ``target``."""
    digest = hashlib.sha256(f"{target}\x00{index}\x00{text}".encode()).hexdigest()
    return f"tc-{digest[:40]}"


def lark_headers(headers: Any) -> dict[str, str]:
    """Request headers as a dict with lark's signature headers under the exact names lark looks up."""
    out = {str(k): str(v) for k, v in headers.items()}
    lowered = {k.lower(): v for k, v in out.items()}
    for name in LARK_HEADERS:
        if name.lower() in lowered:
            out[name] = lowered[name.lower()]
    return out
