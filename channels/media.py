"""Media a person sends or is sent: what a channel reports of it, and the two optional channel parts that
fetch it and send a file back (README.md, "Voice notes, photos and files").

A channel puts a ``MediaRef`` per voice note, photo or file on the ``InboundMessage`` it delivers — only
the platform's reference (file id or key, kind, type, size, name), never the bytes: the gateway stores the
message with its references before anything is downloaded, and its chat worker fetches the bytes after it
claimed the message (``FetchesMedia``). A file goes back with ``SendsFiles`` (Telegram: by its file id
while that still works, else uploaded; Feishu: uploaded).

A failure says whether trying again can help (``MediaError.permanent``): a file too big, empty, gone or
refused never comes; a network error, a timeout or a 5xx may.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# Telegram bots may download files of at most 20 MB (Bot API getFile); ``media.maxBytes`` defaults to it.
TELEGRAM_DOWNLOAD_LIMIT = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class MediaRef:
    """One piece of media of a message, as the platform names it."""

    kind: str  # "voice", "audio", "video_note", "photo", "document", "video", "image", "file", "media"
    file_id: str  # Telegram file_id, Feishu file_key or image_key
    mime: str = ""  # the type the platform says ("" unknown)
    size: int = 0  # bytes as the platform says (0: unknown until downloaded)
    name: str = ""  # the file's name, when it has one
    unique_id: str = ""  # Telegram's file_unique_id (the same file sent twice has the same one)
    duration: int = 0  # seconds, for voice, audio and video

    @property
    def is_audio(self) -> bool:
        """Whether it is heard: voice notes, audio files, video notes (their sound)."""
        return self.kind in ("voice", "audio", "video_note")


@dataclass(frozen=True, slots=True)
class OutgoingFile:
    """A file to send to a chat: by ``file_id`` when the platform still knows it, else ``data``."""

    kind: str  # the kind it was received as ("photo", "voice", "document", "image", "file", …)
    name: str
    mime: str = ""
    data: bytes | None = None  # None: only ``file_id`` can send it
    file_id: str = ""  # the platform's id of this file (Telegram: reusable by the same bot)
    caption: str = ""
    duration: int = 0


class MediaError(RuntimeError):
    """Fetching or sending a file failed. ``reason``: "too_big", "empty", "gone" (the platform no longer
    has it, or never gave it to this bot), "refused" (the platform said no), "unreachable" (network,
    timeout, 5xx). ``permanent``: trying again cannot help (every reason but "unreachable")."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail

    @property
    def permanent(self) -> bool:
        return self.reason != "unreachable"


@runtime_checkable
class FetchesMedia(Protocol):
    """Optional part of a channel: download one piece of media of a message it delivered."""

    async def fetch_media(self, message_id: str, ref: MediaRef, limit: int) -> bytes:
        """The bytes of ``ref`` (of message ``message_id``); ``MediaError`` when they cannot be had,
        "too_big" beyond ``limit`` bytes (checked before downloading when the platform says the size)."""
        ...


@runtime_checkable
class SendsFiles(Protocol):
    """Optional part of a channel: send a file to a chat."""

    async def send_file(self, chat_id: str, file: OutgoingFile, reply_to: str = "") -> str:
        """Send ``file``; returns the platform's id of the file sent (Telegram's new file_id, Feishu's
        key) for next time. ``MediaError`` when it cannot be sent."""
        ...
