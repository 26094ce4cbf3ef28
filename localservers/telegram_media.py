"""Files on the local Telegram Bot API server (``telegram_server.py``): voice, photo and document updates,
``getFile`` and the file downloads (``GET /file/bot<token>/<file_path>``), and the send methods
(``sendPhoto``, ``sendDocument``, ``sendVoice``, ``sendAudio``, ``sendVideo``, ``sendVideoNote``) by file
id or upload — what python-telegram-bot's ``get_file`` / ``download_to_memory`` and ``send_*`` call.

    voice = tg.files.message(tg, "voice", wav_bytes, mime="audio/ogg")    # a message with a new file
    tg.push(voice)
    tg.files.fail_downloads(500, 500)         # the next two downloads fail (then they work)
    tg.files.sent                              # files the bot sent: (method, chat_id, SentFile)

As Telegram does: ``getFile`` answers 400 "file is too big" for a file over 20 MB and "wrong file_id" for
an id it does not know (``forget(file_id)`` plays a file Telegram no longer has); a file id the bot got
from an upload can be sent again.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from localservers.multipart import Upload

DOWNLOAD_LIMIT = 20 * 1024 * 1024
SEND_METHODS = {
    "sendPhoto": "photo",
    "sendDocument": "document",
    "sendVoice": "voice",
    "sendAudio": "audio",
    "sendVideo": "video",
    "sendVideoNote": "video_note",
}
FILE_METHODS = frozenset({"getFile", *SEND_METHODS})


class Call(Protocol):
    """What ``telegram_server.ApiCall`` carries that this module reads."""

    method: str
    params: dict[str, str]
    files: dict[str, Upload]


@dataclass
class StoredFile:
    """A file the server holds: its bytes and what Telegram says of it."""

    file_id: str
    unique_id: str
    data: bytes
    path: str
    mime: str = ""
    name: str = ""
    size: int | None = None  # what getFile and the message say (None: the real size)

    @property
    def said_size(self) -> int:
        return len(self.data) if self.size is None else self.size


@dataclass
class SentFile:
    """A file the bot sent: by id (``file_id`` of a file already held) or uploaded."""

    kind: str
    chat_id: str
    file: StoredFile
    uploaded: bool
    caption: str = ""
    reply_to: int | None = None
    at: float = field(default_factory=time.monotonic)


class TelegramFiles:
    """The files of one ``TelegramStub``; see the module doc."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, StoredFile] = {}
        self._ids = itertools.count(1)
        self._download_faults: deque[int] = deque()
        self.sent: list[SentFile] = []
        self.downloads: list[str] = []  # file paths downloaded, in order

    def add(
        self, data: bytes, *, kind: str = "document", mime: str = "", name: str = "", size: int | None = None
    ) -> StoredFile:
        """Hold ``data`` as a new file; ``size`` overrides the size Telegram says (a 21 MB file without
        its bytes)."""
        with self._lock:
            n = next(self._ids)
        ext = {"voice": "oga", "photo": "jpg", "video": "mp4", "video_note": "mp4", "audio": "mp3"}
        suffix = name.rsplit(".", 1)[-1] if "." in name else ext.get(kind, "bin")
        stored = StoredFile(
            f"{kind}-{n}-id", f"{kind}-{n}-uniq", data, f"{kind}s/file_{n}.{suffix}", mime, name, size
        )
        with self._lock:
            self._files[stored.file_id] = stored
        return stored

    def forget(self, file_id: str) -> None:
        """Telegram no longer knows this file id (getFile and sending by it fail)."""
        with self._lock:
            self._files.pop(file_id, None)

    def get(self, file_id: str) -> StoredFile | None:
        with self._lock:
            return self._files.get(file_id)

    def fail_downloads(self, *statuses: int) -> None:
        """The next downloads answer these HTTP statuses instead of the file."""
        with self._lock:
            self._download_faults.extend(statuses)

    def payload(self, stored: StoredFile, kind: str, duration: int = 3) -> Any:
        """The field a message carries for ``stored`` as ``kind``, as Telegram sends it."""
        base: dict[str, Any] = {
            "file_id": stored.file_id,
            "file_unique_id": stored.unique_id,
            "file_size": stored.said_size,
        }
        if kind == "photo":
            thumb = {**base, "file_id": stored.file_id + "-s", "file_size": 0, "width": 90, "height": 90}
            thumb.pop("file_size")
            return [thumb, {**base, "width": 1280, "height": 960}]
        if stored.mime:
            base["mime_type"] = stored.mime
        if stored.name:
            base["file_name"] = stored.name
        if kind in ("voice", "audio"):
            return {**base, "duration": duration}
        if kind in ("video", "video_note"):
            return {**base, "duration": duration, "width": 90, "height": 90, "length": 90}
        return base

    def message(
        self,
        stub: Any,
        kind: str,
        data: bytes,
        *,
        caption: str | None = None,
        mime: str = "",
        name: str = "",
        size: int | None = None,
        sender: dict | None = None,
        chat: dict | None = None,
    ) -> dict:
        """A message from ``sender`` (default user 42) carrying a new file of ``kind`` with ``data``."""
        stored = self.add(data, kind=kind, mime=mime, name=name, size=size)
        msg: dict = stub.message(None, sender=sender, chat=chat)
        msg[kind] = self.payload(stored, kind)
        if caption is not None:
            msg["caption"] = caption
        return msg

    # --- the Bot API ---------------------------------------------------------------------------------

    def answer(self, call: Call, stub: Any) -> tuple[int, dict]:
        """getFile and the send methods."""
        if call.method == "getFile":
            stored = self.get(call.params.get("file_id", ""))
            if stored is None:
                return _bad("Bad Request: wrong file_id or the file is temporarily unavailable")
            if stored.said_size > DOWNLOAD_LIMIT:
                return _bad("Bad Request: file is too big")
            return 200, {
                "ok": True,
                "result": {
                    "file_id": stored.file_id,
                    "file_unique_id": stored.unique_id,
                    "file_size": stored.said_size,
                    "file_path": stored.path,
                },
            }
        kind = SEND_METHODS[call.method]
        field_name = "video_note" if kind == "video_note" else kind
        upload = call.files.get(field_name)
        if upload is not None:
            stored = self.add(upload.data, kind=kind, mime=upload.content_type, name=upload.name)
        else:
            held = self.get(call.params.get(field_name, ""))
            if held is None:
                return _bad(
                    "Bad Request: wrong remote file identifier specified: wrong padding in the string"
                )
            stored = held
        chat_id = call.params.get("chat_id", "0")
        reply = call.params.get("reply_parameters")
        sent = SentFile(
            kind, chat_id, stored, upload is not None, call.params.get("caption", ""), _reply_id(reply)
        )
        with self._lock:
            self.sent.append(sent)
        msg = stub._message(stub._chat(chat_id), "")
        msg.pop("text", None)
        msg[kind] = self.payload(stored, kind)
        return 200, {"ok": True, "result": msg}

    def send_local_file(self, stub: Any, body: Any) -> tuple[int, dict]:
        """``POST /local/send-file`` ``{"path": …, "caption": …}``: user 42 sends that file (by hand)."""
        from pathlib import Path

        path = Path(str((body or {}).get("path", ""))).expanduser()
        if not path.is_file():
            return 400, {"ok": False, "description": f"no file {path}"}
        kind = send_local_file_kind(path.suffix.lower())
        mime = {"voice": "audio/ogg", "photo": "image/jpeg"}.get(kind, "")
        caption = (body or {}).get("caption")
        message = self.message(stub, kind, path.read_bytes(), caption=caption, mime=mime, name=path.name)
        return 200, {"ok": True, "message_id": stub.push(message), "kind": kind}

    def download(self, path: str) -> tuple[int, bytes]:
        """``GET /file/bot<token>/<path>``: the file's bytes, or a scripted failure, or 404."""
        with self._lock:
            fault = self._download_faults.popleft() if self._download_faults else None
            self.downloads.append(path)
            stored = next((f for f in self._files.values() if f.path == path), None)
        if fault is not None:
            return fault, b'{"ok":false,"error_code":%d,"description":"scripted"}' % fault
        if stored is None:
            return 404, b'{"ok":false,"error_code":404,"description":"Not Found"}'
        return 200, stored.data


def send_local_file_kind(suffix: str) -> str:
    """The kind a file from disk is sent as: a photo, a voice note, else a document."""
    if suffix in (".png", ".jpg", ".jpeg", ".gif", ".webp"):
        return "photo"
    return "voice" if suffix in (".ogg", ".oga", ".opus", ".wav") else "document"


def _reply_id(raw: str | None) -> int | None:
    import json

    if not raw:
        return None
    value = json.loads(raw)
    return int(value.get("message_id", 0)) or None if isinstance(value, dict) else None


def _bad(description: str) -> tuple[int, dict]:
    return 400, {"ok": False, "error_code": 400, "description": description}
