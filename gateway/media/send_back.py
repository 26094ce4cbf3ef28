"""Sending a kept attachment back to the chat that asks for it ("send me that cat photo again",
"把上次那份合同发我"): Telegram by the file's id while it still works (else uploaded from the kept bytes),
Feishu uploaded; each send is kept as an "out" attachment of the asking message (answered again after a
crash: the same row, not a second one).

The main model does it with its ``attachment_send`` tool (``tools.py``); the offline stand-in, which has
no tools, does it when a message asks for a file back (``asks_for_a_file``) and the search finds one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from channels.base import Channel, InboundMessage
from channels.media import MediaError, OutgoingFile, SendsFiles
from memory.attachments import AttachmentLog, kinds_named
from memory.store.attachments import AttachmentRow, NewAttachment

log = logging.getLogger("tierclaw.gateway")

_SEND = re.compile(
    r"\b(?:send|resend|forward|share|show)\b.{0,40}\b(?:me|again|back)\b|\b(?:send|resend)\b"
    r"|(?:再?发(?:给)?我|重发|发一下|发过来|再发|给我看|找出来)",
    re.I,
)


def asks_for_a_file(text: str) -> bool:
    """Whether a message asks for an attachment back: a send verb and a kind ("photo", "文件", …)."""
    return bool(_SEND.search(text)) and bool(kinds_named(text))


@dataclass(frozen=True)
class SendResult:
    """What became of a send: ``ok``, the row sent, and why not (``reason``) when it failed."""

    ok: bool
    row: AttachmentRow | None = None
    reason: str = ""


class FileSender:
    """Sends an owner's kept attachments to a chat through its channel (``SendsFiles``)."""

    def __init__(self, attachments: AttachmentLog, channels: Mapping[str, Channel]) -> None:
        self.attachments = attachments
        self.channels = channels

    async def send(self, owner: str, msg: InboundMessage, attachment_id: int) -> SendResult:
        """Send attachment ``attachment_id`` of ``owner`` to ``msg``'s chat (a reply to ``msg``)."""
        row = await self.attachments.get(owner, attachment_id)
        if row is None:
            return SendResult(False, None, "no such attachment")
        channel = self.channels.get(msg.channel)
        if not isinstance(channel, SendsFiles):
            return SendResult(False, row, "this chat cannot receive files")
        same_platform = row.channel == msg.channel
        data = await self.attachments.file_bytes(owner, attachment_id)
        if data is None and not (same_platform and row.file_key):
            return SendResult(False, row, "its file was not kept")
        outgoing = OutgoingFile(
            row.kind,
            row.file_name or _name_for(row),
            row.mime,
            data,
            row.file_key if same_platform else "",
        )
        try:
            new_key = await channel.send_file(msg.chat_id, outgoing, msg.message_id)
        except MediaError as exc:
            log.warning("[gateway] %s: sending attachment %d failed (%s)", msg.chat_key, row.id, exc.reason)
            return SendResult(False, row, exc.reason)
        if same_platform and new_key and new_key != row.file_key:
            await self.attachments.set_file_key(owner, row.id, new_key)
        out = NewAttachment(
            "out",
            msg.channel,
            msg.chat_id,
            msg.message_id or f"inbox-{msg.inbox_id}",
            row.id,
            row.kind,
            row.mime,
            row.size,
            row.file_name,
            new_key or row.file_key,
            "",
        )
        await self.attachments.keep(owner, out)
        log.info("[gateway] %s: sent attachment %d back", msg.chat_key, row.id)
        return SendResult(True, row)


def _name_for(row: AttachmentRow) -> str:
    ext = {
        "image/png": "png",
        "image/jpeg": "jpg",
        "audio/ogg": "ogg",
        "audio/wav": "wav",
        "application/pdf": "pdf",
    }
    return f"{row.kind}-{row.id}.{ext.get(row.mime, 'bin')}"


async def offline_send_back(sender: FileSender, owner: str, msg: InboundMessage, text: str) -> str:
    """The offline stand-in's answer to an ask for a file back: the best match sent, or why not."""
    from gateway.media.words import say
    from memory.text.wording import is_chinese

    chinese = is_chinese(text)
    hits = await sender.attachments.search(owner, text, k=1)
    if not hits:
        return say("not_found", chinese)
    row = hits[0].row
    result = await sender.send(owner, msg, row.id)
    name = row.file_name or row.caption or f"#{row.id}"
    if not result.ok:
        return say("send_failed", chinese, name=name, reason=result.reason)
    return say("sent_back", chinese, name=name, date=row.created_at[:10])
