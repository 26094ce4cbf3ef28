"""``MediaService``: one message's voice notes, photos and files, from references to what the reply is made
of — after the chat worker claimed the message (docs/architecture.md, "The path of one message").

For each piece: the attachment row is kept first (so it is findable by caption, name and date whatever
happens next), the bytes are fetched (``fetching.py``), their real type read (``documents.sniff``), and
then it is heard (``hearing.py``), seen (``seeing.py``) or read (``documents.py``); what came of it is
recorded on the row with the bytes. A message answered again after a crash finds its rows already
understood and does not fetch again.

The result, ``MediaTurn``, is what the assistant goes on with: the message's text from then on (a voice
note's transcript; "[photo: …]" with the description; "[file …: summary]"), the images for a main model
that sees, the documents' text for the model, and the lines the person is shown first (what was heard, and
every problem in one plain sentence in their language: ``words.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from channels.base import Channel, InboundMessage
from channels.media import MediaError, MediaRef
from gateway.media.documents import Unreadable, read_text, readable, sniff
from gateway.media.fetching import fetch
from gateway.media.hearing import HearingError, Transcriber
from gateway.media.seeing import SeeingError, Vision, data_url
from gateway.media.words import kind_name, platform_name, quoted, say, size_text
from memory.attachments import AttachmentLog, NewAttachment, Understanding
from memory.store.attachments import AttachmentRow
from memory.text.wording import is_chinese

log = logging.getLogger("tierclaw.gateway")

DOCUMENT_CHARS = 12_000  # of a document's text sent to the model with the message
SUMMARY_CHARS = 600  # a document's text longer than this is summarised for memory


@dataclass
class MediaTurn:
    """What one message's media came to (see the module doc)."""

    text: str
    notices: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)  # data URLs for a main model that sees
    documents: list[str] = field(default_factory=list)  # each document's text, delimited, for the model
    attachment_ids: list[int] = field(default_factory=list)
    understood: bool = False  # something was heard, seen or read (else only kept, or failed)


@dataclass
class MediaSettings:
    """``media`` of the config, as the service uses it."""

    max_bytes: int = 20 * 1024 * 1024
    keep_bytes: bool = True
    attempts: int = 3
    backoff: float = 0.5


@dataclass
class _Piece:
    """One attachment while it is understood."""

    ref: MediaRef
    row: AttachmentRow
    chinese: bool
    line: str = ""  # what the message's text says of it
    notice: str = ""


class MediaService:
    """Understands and keeps the media of messages (``Assistant.handle`` calls ``understand``)."""

    def __init__(
        self,
        attachments: AttachmentLog,
        channels: Mapping[str, Channel],
        *,
        transcriber: Transcriber | None,
        vision: Vision,
        summariser: object | None = None,
        settings: MediaSettings | None = None,
        offline: bool = False,
    ) -> None:
        self.attachments = attachments
        self.channels = channels
        self.transcriber = transcriber
        self.vision = vision
        self.summariser = summariser
        self.settings = settings or MediaSettings()
        self.offline = offline  # the main model is the offline stand-in (its wording)

    async def understand(self, msg: InboundMessage, owner: str, chinese: bool | None = None) -> MediaTurn:
        """Keep, fetch and understand every piece of ``msg``'s media (see the module doc)."""
        caption = msg.text.strip()
        speaks_chinese = is_chinese(caption) if chinese is None or caption else chinese
        turn = MediaTurn(text=caption)
        lines: list[str] = []
        for part, ref in enumerate(msg.media):
            piece = await self._keep(msg, owner, part, ref, caption, speaks_chinese)
            turn.attachment_ids.append(piece.row.id)
            await self._one(msg, owner, piece, turn)
            if piece.line:
                lines.append(piece.line)
            if piece.notice:
                turn.notices.append(piece.notice)
        turn.text = "\n".join([*lines, caption] if caption else lines)
        return turn

    async def _keep(
        self, msg: InboundMessage, owner: str, part: int, ref: MediaRef, caption: str, chinese: bool
    ) -> _Piece:
        new = NewAttachment(
            "in",
            msg.channel,
            msg.chat_id,
            msg.message_id or f"inbox-{msg.inbox_id}",
            part,
            ref.kind,
            ref.mime if ref.mime != "image/*" else "",
            ref.size,
            ref.name,
            ref.file_id,
            caption,
        )
        attachment_id, _ = await self.attachments.keep(owner, new)
        row = await self.attachments.get(owner, attachment_id)
        assert row is not None
        return _Piece(ref, row, chinese)

    async def _one(self, msg: InboundMessage, owner: str, piece: _Piece, turn: MediaTurn) -> None:
        """Understand one piece (or reuse what an earlier answer of this message understood)."""
        if piece.row.status == "understood":
            self._reuse(piece, turn)
            return
        name = kind_name(piece.ref.kind, piece.chinese)
        try:
            data = await fetch(
                self.channels.get(msg.channel),
                msg.message_id,
                piece.ref,
                limit=self.settings.max_bytes,
                attempts=self.settings.attempts,
                backoff=self.settings.backoff,
            )
        except MediaError as exc:
            log.warning(
                "[gateway] %s: could not download a %s (%s)", msg.chat_key, piece.ref.kind, exc.reason
            )
            piece.notice = self._fetch_failure(exc, piece, msg.channel, name)
            piece.line = f"[{name}]"
            await self.attachments.understood(owner, piece.row, Understanding("failed"))
            return
        mime = sniff(data, piece.ref.mime, piece.ref.name)
        found = await self._by_type(msg, piece, data, mime, turn)
        found.mime = mime
        if self.settings.keep_bytes:
            found.data = data
        await self.attachments.understood(owner, piece.row, found)

    def _fetch_failure(self, exc: MediaError, piece: _Piece, channel: str, name: str) -> str:
        chinese = piece.chinese
        if exc.reason == "too_big":
            size = piece.ref.size or _size_in(exc.detail)
            return say(
                "too_big",
                chinese,
                kind=name,
                size=size_text(size) if size else "?",
                limit=size_text(self.settings.max_bytes),
            )
        if exc.reason in ("empty", "gone", "refused", "unreachable"):
            return say(exc.reason, chinese, kind=name, platform=platform_name(channel, chinese))
        return say("unreachable", chinese, kind=name, platform=platform_name(channel, chinese))

    async def _by_type(
        self, msg: InboundMessage, piece: _Piece, data: bytes, mime: str, turn: MediaTurn
    ) -> Understanding:
        """Hear, see or read the piece by what it really is."""
        ref, chinese = piece.ref, piece.chinese
        claimed = ref.mime if ref.mime not in ("", "image/*", "application/octet-stream") else ""
        if claimed and _family(claimed) != _family(mime) and _family(mime) != "other":
            piece.notice = say(
                "wrong_type",
                chinese,
                name=ref.name or kind_name(ref.kind, chinese),
                claimed=claimed,
                actual=mime,
            )
            log.warning("[gateway] %s: a %s claimed %s but is %s", msg.chat_key, ref.kind, claimed, mime)
        family = _family(mime)
        if family == "audio" or (ref.is_audio and family == "video"):
            return await self._hear(msg, piece, data, mime, turn)
        if family == "image":
            return await self._see(piece, data, mime, turn)
        if readable(mime, ref.name):
            return await self._read(piece, data, mime, turn)
        label = ref.name or kind_name(ref.kind, chinese)
        key = "kept_video" if family == "video" else "kept_file"
        piece.notice = piece.notice or say(key, chinese, name=label, type=mime)
        piece.line = f"[{kind_name(ref.kind, chinese)} {ref.name}]".replace(" ]", "]")
        return Understanding("kept")

    async def _hear(
        self, msg: InboundMessage, piece: _Piece, data: bytes, mime: str, turn: MediaTurn
    ) -> Understanding:
        name = kind_name(piece.ref.kind, piece.chinese)
        if self.transcriber is None:
            piece.notice = say("offline_hear" if self.offline else "cannot_hear", piece.chinese, kind=name)
            piece.line = f"[{name}]"
            return Understanding("kept")
        try:
            heard = await self._transcribe(data, piece.ref, mime)
        except HearingError as exc:
            log.warning("[gateway] %s: a %s was not transcribed (%s)", msg.chat_key, piece.ref.kind, exc)
            key = {"timeout": "hear_timeout", "unreachable": "hear_down", "not_configured": "cannot_hear"}
            piece.notice = say(key.get(exc.reason, "bad_audio"), piece.chinese, kind=name)
            piece.line = f"[{name}]"
            return Understanding("failed")
        if not heard:
            piece.notice = say("heard_nothing", piece.chinese, kind=name)
            piece.line = f"[{name}]"
            return Understanding("understood")
        piece.chinese = is_chinese(heard) if not msg.text.strip() else piece.chinese
        piece.notice = say("heard", piece.chinese, text=quoted(heard))
        piece.line = heard
        turn.understood = True
        return Understanding("understood", transcription=heard)

    async def _transcribe(self, data: bytes, ref: MediaRef, mime: str) -> str:
        """The transcript, tried again while the failure may pass."""
        assert self.transcriber is not None
        pause = self.settings.backoff
        for attempt in range(1, self.settings.attempts + 1):
            try:
                return await self.transcriber.transcribe(data, ref.name or _audio_name(ref, mime), mime)
            except HearingError as exc:
                if exc.permanent or attempt == self.settings.attempts:
                    raise
            await asyncio.sleep(pause)
            pause *= 2
        raise HearingError("unreachable")

    async def _see(self, piece: _Piece, data: bytes, mime: str, turn: MediaTurn) -> Understanding:
        name = kind_name(piece.ref.kind, piece.chinese)
        try:
            description, by_main = await self.vision.describe(data, mime, piece.chinese)
        except SeeingError:
            piece.notice, piece.line = say("see_down", piece.chinese, kind=name), f"[{name}]"
            return Understanding("failed")
        if not description:
            piece.notice = say("offline_see" if self.offline else "cannot_see", piece.chinese, kind=name)
            piece.line = f"[{name}]"
            return Understanding("kept")
        if by_main and self.vision.main_sees():
            turn.images.append(data_url(data, mime))
        piece.line = f"[{name}: {description}]"
        turn.understood = True
        return Understanding("understood", description=description)

    async def _read(self, piece: _Piece, data: bytes, mime: str, turn: MediaTurn) -> Understanding:
        label = piece.ref.name or kind_name(piece.ref.kind, piece.chinese)
        try:
            document = await asyncio.to_thread(read_text, data, mime)
        except Unreadable as exc:
            log.warning("[gateway] a document was not read (%s)", exc)
            piece.notice = say(exc.reason, piece.chinese, name=label)
            piece.line = f"[{kind_name(piece.ref.kind, piece.chinese)} {label}]"
            return Understanding("failed" if exc.reason != "no_text" else "kept")
        summary = await self._summary(document.text, piece.chinese)
        safe = label.replace('"', "'").replace("<", "(").replace(">", ")")  # the name cannot close the tag
        turn.documents.append(f'<document name="{safe}">\n{document.text[:DOCUMENT_CHARS]}\n</document>')
        piece.line = f"[{kind_name(piece.ref.kind, piece.chinese)} {label}: {summary}]"
        if self.offline:
            piece.notice = say("offline_read", piece.chinese, name=label, words=len(document.text.split()))
        turn.understood = True
        return Understanding("understood", description=summary, extracted_text=document.text)

    async def _summary(self, text: str, chinese: bool) -> str:
        """What memory keeps of a document: its text when short, else a summary (the memory model's, or
        its first lines offline)."""
        flat = " ".join(text.split())
        if len(flat) <= SUMMARY_CHARS:
            return flat
        summarise = getattr(self.summariser, "summarise", None)
        if summarise is not None:
            try:
                made = await summarise(text, chinese)
                if made:
                    return str(made)
            except Exception as exc:  # a summary is a nicety: the lead of the text serves
                log.warning("[gateway] summarising a document failed: %s", type(exc).__name__)
        return flat[: SUMMARY_CHARS - 1] + "…"

    def _reuse(self, piece: _Piece, turn: MediaTurn) -> None:
        """An earlier answer of this message understood the piece: use what it kept."""
        row = piece.row
        name = kind_name(row.kind, piece.chinese)
        if row.transcription:
            piece.line, piece.notice = (
                row.transcription,
                say("heard", piece.chinese, text=quoted(row.transcription)),
            )
        elif row.kind in ("photo", "image") or row.mime.startswith("image/"):
            piece.line = f"[{name}: {row.description}]"
        else:
            piece.line = f"[{name} {row.file_name}: {row.description}]"
        turn.understood = True


def _family(mime: str) -> str:
    head = mime.split("/", 1)[0]
    return head if head in ("audio", "image", "video", "text") else ("document" if mime else "other")


def _audio_name(ref: MediaRef, mime: str) -> str:
    ext = {
        "audio/ogg": "ogg",
        "audio/wav": "wav",
        "audio/mpeg": "mp3",
        "audio/mp4": "m4a",
        "video/mp4": "mp4",
    }
    return f"{ref.kind}.{ext.get(mime, 'ogg')}"


def _size_in(detail: str) -> int:
    head = detail.split(" ", 1)[0]
    return int(head) if head.isdigit() else 0
