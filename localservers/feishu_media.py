"""Files on the local Feishu open platform (``feishu_server.py``): messages carrying an image, an audio,
a file or a video (and a ``post`` with images), their resources
(``GET /open-apis/im/v1/messages/:message_id/resources/:file_key?type=image|file`` — what lark-oapi's
``im.v1.message_resource.get`` calls), and uploads (``POST /open-apis/im/v1/images``, ``…/files``) that an
``image`` / ``file`` / ``audio`` message then shows.

    event = feishu.media.event("audio", ogg_bytes, name="voice.opus")    # a p2p message with a resource
    await feishu.push_event(event)
    feishu.media.fail_resources(500)           # the next resource request fails
    feishu.media.uploads                        # what the bot uploaded

A resource is served only for the message it was sent in (as Feishu: another message's id is refused),
and an unknown key answers code 234003 (file not found).
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid as uuid_module
from collections import deque
from dataclasses import dataclass
from typing import Any

from localservers.feishu_payloads import message_event
from localservers.multipart import Upload, multipart

RESOURCE_MARK = "/resources/"
IMAGES_PATH = "/open-apis/im/v1/images"
FILES_PATH = "/open-apis/im/v1/files"


@dataclass(frozen=True)
class Uploaded:
    """A file the bot uploaded: ``key`` (image_key or file_key), what it said of it, the bytes."""

    key: str
    kind: str  # "image" or "file"
    file_type: str
    name: str
    data: bytes


class FeishuMedia:
    """The resources and uploads of one ``FeishuStub``; see the module doc."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._resources: dict[tuple[str, str], bytes] = {}
        self._ids = itertools.count(1)
        self._faults: deque[int] = deque()
        self.uploads: list[Uploaded] = []
        self.fetched: list[tuple[str, str, str]] = []  # (message_id, key, type) of each resource request

    def resource(self, message_id: str, data: bytes, kind: str = "file") -> str:
        """Hold ``data`` as a resource of message ``message_id``; its key."""
        key = f"{'img' if kind == 'image' else 'file'}_v3_stub_{next(self._ids)}"
        with self._lock:
            self._resources[(message_id, key)] = data
        return key

    def fail_resources(self, *statuses: int) -> None:
        """The next resource requests answer these HTTP statuses."""
        with self._lock:
            self._faults.extend(statuses)

    def event(
        self,
        message_type: str,
        data: bytes,
        *,
        name: str = "",
        duration_ms: int = 3000,
        sender: str = "ou_alice",
        chat_id: str = "oc_chat_alice",
        text: str = "",
    ) -> dict[str, Any]:
        """A p2p message event of ``message_type`` (image, audio, file, media, post) carrying ``data``."""
        message_id = "om_" + uuid_module.uuid4().hex[:20]
        key = self.resource(message_id, data, "image" if message_type in ("image", "post") else "file")
        content: dict[str, Any]
        if message_type == "image":
            content = {"image_key": key}
        elif message_type == "audio":
            content = {"file_key": key, "duration": duration_ms}
        elif message_type == "media":
            content = {"file_key": key, "image_key": "", "file_name": name, "duration": duration_ms}
        elif message_type == "post":
            content = {
                "title": "",
                "content": [[{"tag": "text", "text": text}], [{"tag": "img", "image_key": key}]],
            }
        else:
            content = {"file_key": key, "file_name": name}
        return message_event(
            text,
            sender=sender,
            chat_id=chat_id,
            message_type=message_type,
            content=content,
            message_id=message_id,
        )

    # --- the open API --------------------------------------------------------------------------------

    def get_resource(self, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str] | None]:
        """``GET …/messages/:message_id/resources/:file_key``: the bytes, or Feishu's error."""
        head, _, key = path.partition(RESOURCE_MARK)
        message_id = head.rsplit("/", 1)[-1]
        with self._lock:
            self.fetched.append((message_id, key, query.get("type", "")))
            fault = self._faults.popleft() if self._faults else None
            data = self._resources.get((message_id, key))
        if fault is not None:
            return fault, {"code": 1 if fault >= 500 else 99991400, "msg": "scripted failure"}, None
        if query.get("type") not in ("image", "file"):
            return 400, {"code": 234001, "msg": "Invalid request param: type"}, None
        if data is None:
            return 400, {"code": 234003, "msg": "File not in msg."}, None
        disposition = {"Content-Disposition": f'attachment; filename="{key}"'}
        return 200, data, disposition

    def upload(self, path: str, raw: bytes, content_type: str) -> tuple[int, Any, dict[str, str] | None]:
        """``POST /open-apis/im/v1/images`` or ``…/files`` (multipart): the new key."""
        fields, files = (
            multipart(raw, content_type, ("image", "file"))
            if content_type.startswith("multipart/")
            else ({}, {})
        )
        image = path == IMAGES_PATH
        upload: Upload | None = files.get("image" if image else "file")
        if upload is None or not upload.data:
            return 400, {"code": 234001, "msg": "Invalid request param: the file is empty"}, None
        key = f"{'img' if image else 'file'}_v3_up_{next(self._ids)}"
        stored = Uploaded(
            key,
            "image" if image else "file",
            fields.get("file_type", ""),
            fields.get("file_name", upload.name),
            upload.data,
        )
        with self._lock:
            self.uploads.append(stored)
        return 200, {"code": 0, "msg": "success", "data": {("image_key" if image else "file_key"): key}}, None

    def uploaded(self, key: str) -> Uploaded | None:
        """The upload with this key."""
        with self._lock:
            return next((u for u in self.uploads if u.key == key), None)

    def send_local_file(self, stub: Any, body: Any) -> tuple[int, Any, dict[str, str] | None]:
        """``POST /local/send-file`` ``{"path": …, "caption": …}``: a message carrying that file from
        ``ou_alice`` on the websocket (by hand, beside ``/local/say``)."""
        from pathlib import Path

        path = Path(str((body or {}).get("path", ""))).expanduser()
        if not path.is_file():
            return 400, {"code": 1, "msg": f"no file {path}"}, None
        suffix = path.suffix.lower()
        kind = (
            "image"
            if suffix in (".png", ".jpg", ".jpeg", ".gif", ".webp")
            else ("audio" if suffix in (".ogg", ".opus", ".oga", ".wav", ".mp3", ".m4a") else "file")
        )
        event = self.event(kind, path.read_bytes(), name=path.name)
        try:
            frame_id = stub.send_event(event)
        except AssertionError as exc:
            return 409, {"code": 1, "msg": str(exc)}, None
        return 200, {"code": 0, "msg": "ok", "frame_id": frame_id, "kind": kind}, None


def content_of(sent_content: Any) -> dict[str, Any]:
    """A sent message's content as a dict (the stub keeps it parsed)."""
    return sent_content if isinstance(sent_content, dict) else json.loads(sent_content or "{}")
