"""Voice notes, photos and files on Telegram: the references a message carries, downloading them
(``getFile`` + the file URL, through python-telegram-bot's ``get_file`` / ``download_to_memory``) and
sending a file back (by its file_id while Telegram still knows it, else uploaded).

Bots may download files of at most 20 MB; a file the message says is bigger is refused before any request
(``MediaError("too_big")``), and so is one ``getFile`` calls too big. A photo comes in several sizes: the
largest within the limit is taken. Videos, animations and video notes are kept as files (a video note's
sound is transcribed). Stickers are not media to keep: they stay an ``attachment`` without references.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from telegram import Bot, InputFile, Message, ReplyParameters
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError

from channels.encodable import encodable
from channels.media import MediaError, MediaRef, OutgoingFile

log = logging.getLogger("tierclaw.channels")

# (message attribute, kind, default mime) of the media kept, in the order checked.
_KINDS = (
    ("voice", "voice", "audio/ogg"),
    ("audio", "audio", "audio/mpeg"),
    ("video_note", "video_note", "video/mp4"),
    ("document", "document", "application/octet-stream"),
    ("video", "video", "video/mp4"),
    ("animation", "video", "video/mp4"),
)


def media_refs(msg: Message, limit: int = 20 * 1024 * 1024) -> tuple[MediaRef, ...]:
    """The media of ``msg`` to fetch: the largest photo size within ``limit`` (else the smallest), a
    voice note, an audio, a video note, a document or a video."""
    if msg.photo:
        sizes = sorted(msg.photo, key=lambda p: (p.width * p.height, p.file_size or 0))
        fitting = [p for p in sizes if (p.file_size or 0) <= limit] or sizes[:1]
        best = fitting[-1]
        return (MediaRef("photo", best.file_id, "image/jpeg", best.file_size or 0, "", best.file_unique_id),)
    for attribute, kind, default_mime in _KINDS:
        item = getattr(msg, attribute, None)
        if item is None:
            continue
        name = encodable(getattr(item, "file_name", None) or "")
        return (
            MediaRef(
                kind,
                item.file_id,
                getattr(item, "mime_type", None) or default_mime,
                item.file_size or 0,
                name,
                item.file_unique_id,
                int(getattr(item, "duration", 0) or 0),
            ),
        )
    return ()


def _failure(exc: TelegramError) -> MediaError:
    """What a failed Bot API call means for a file: gone or too big for good, else maybe next time."""
    text = str(exc)
    if isinstance(exc, BadRequest):
        if "too big" in text.casefold():
            return MediaError("too_big", text)
        return MediaError("gone", text)  # wrong file_id, file not found, temporarily unavailable is rare
    if isinstance(exc, (Forbidden, InvalidToken)):
        return MediaError("refused", text)
    if isinstance(exc, (RetryAfter, NetworkError)):
        return MediaError("unreachable", text)
    return MediaError("refused", text)


async def fetch(bot: Bot, ref: MediaRef, limit: int) -> bytes:
    """The bytes of ``ref`` (see the module doc for the limits)."""
    if ref.size > limit:
        raise MediaError("too_big", f"{ref.size} bytes")
    try:
        file = await bot.get_file(ref.file_id)
        if (file.file_size or 0) > limit:
            raise MediaError("too_big", f"{file.file_size} bytes")
        out = io.BytesIO()
        await file.download_to_memory(out)
    except TelegramError as exc:
        raise _failure(exc) from None
    except RuntimeError as exc:  # no file_path: Telegram would not give it
        raise MediaError("gone", str(exc)) from None
    data = out.getvalue()
    if not data:
        raise MediaError("empty")
    if len(data) > limit:
        raise MediaError("too_big", f"{len(data)} bytes")
    return data


async def send(bot: Bot, chat_id: str, file: OutgoingFile, reply_to: str = "") -> str:
    """Send ``file`` to the chat: by file_id first (the same bot may send a file it received again), then
    uploaded when Telegram no longer knows the id; the file_id of what was sent."""
    reply = int(reply_to) if reply_to.isdigit() else None
    if file.file_id:
        try:
            return await _send_as(bot, chat_id, file, file.file_id, reply)
        except BadRequest as exc:
            if file.data is None:
                raise _failure(exc) from None
            log.info("[telegram] a kept file's id no longer works (%s); uploading it again", exc)
        except TelegramError as exc:
            raise _failure(exc) from None
    if file.data is None:
        raise MediaError("gone", "neither a file id nor the bytes")
    try:
        return await _send_as(bot, chat_id, file, InputFile(file.data, filename=file.name or "file"), reply)
    except TelegramError as exc:
        raise _failure(exc) from None


async def _send_as(
    bot: Bot, chat_id: str, file: OutgoingFile, what: str | InputFile, reply: int | None
) -> str:
    """One send call of the right kind; the file_id Telegram gives the sent file. A voice note uploaded
    again goes as a voice note only when it is OGG (Telegram's requirement), else as a document."""
    kwargs: dict[str, Any] = {
        "caption": file.caption or None,
        "reply_parameters": (
            ReplyParameters(message_id=reply, allow_sending_without_reply=True) if reply else None
        ),
    }
    by_id = isinstance(what, str)
    if file.kind == "photo":
        sent = await bot.send_photo(chat_id, what, **kwargs)
        return sent.photo[-1].file_id if sent.photo else ""
    if file.kind == "voice" and (by_id or file.mime == "audio/ogg"):
        sent = await bot.send_voice(chat_id, what, **kwargs)
        return sent.voice.file_id if sent.voice else ""
    if file.kind == "audio":
        sent = await bot.send_audio(chat_id, what, **kwargs)
        return sent.audio.file_id if sent.audio else ""
    if file.kind == "video_note" and by_id:
        sent = await bot.send_video_note(chat_id, what, reply_parameters=kwargs["reply_parameters"])
        return sent.video_note.file_id if sent.video_note else ""
    if file.kind == "video" and by_id:
        sent = await bot.send_video(chat_id, what, **kwargs)
        return sent.video.file_id if sent.video else ""
    sent = await bot.send_document(chat_id, what, **kwargs)
    return sent.document.file_id if sent.document else ""


class TelegramMedia:
    """The media parts of ``TelegramChannel`` (``FetchesMedia``, ``SendsFiles``), mixed into it."""

    def _bot(self) -> Bot:  # the channel's
        raise NotImplementedError

    async def fetch_media(self, message_id: str, ref: MediaRef, limit: int) -> bytes:
        """The bytes of ``ref`` (``fetch``)."""
        return await fetch(self._bot(), ref, limit)

    async def send_file(self, chat_id: str, file: OutgoingFile, reply_to: str = "") -> str:
        """Send ``file`` to the chat (``send``)."""
        return await send(self._bot(), chat_id, file, reply_to)
