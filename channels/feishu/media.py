"""Voice notes, photos and files on Feishu / Lark: the references a message carries, downloading them
(``im.v1.message_resource.get``: the resources of a message the bot received — ``im.v1.file.get`` would
refuse files the bot did not upload itself, code 234008), and sending a file back (uploaded with
``im.v1.image.create`` / ``im.v1.file.create``, then sent as an ``image``, ``audio`` or ``file`` message).

Feishu says no size in the event: a file's size is known once downloaded (Feishu allows 100 MB), and
``media.maxBytes`` is checked then. Audio messages are Opus voice notes; ``media`` messages are videos
(kept as files); images inside a rich-text ``post`` are fetched like image messages. The SDK's calls are
synchronous (its token fetch is a blocking ``requests`` call): they run in a worker thread.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

import lark_oapi as lark
import requests
from lark_oapi.api.im.v1 import (
    CreateFileRequest,
    CreateFileRequestBody,
    CreateImageRequest,
    CreateImageRequestBody,
    GetMessageResourceRequest,
)

from channels.base import OutboundMessage
from channels.encodable import encodable
from channels.feishu.open_api import http_status, post_message
from channels.media import MediaError, MediaRef, OutgoingFile

log = logging.getLogger("tierclaw.channels")

# Upload types of im.v1.file.create (anything else is "stream").
_FILE_TYPES = {"audio/ogg": "opus", "audio/opus": "opus", "video/mp4": "mp4", "application/pdf": "pdf"}
_DOC_TYPES = {".doc": "doc", ".docx": "doc", ".xls": "xls", ".xlsx": "xls", ".ppt": "ppt", ".pptx": "ppt"}


def media_refs(message_type: str, content: str) -> tuple[MediaRef, ...]:
    """The media of a received message: an image, an audio (voice note), a file, a video (``media``), or
    the images and videos of a ``post``."""
    try:
        body: Any = json.loads(content) if content else {}
    except json.JSONDecodeError:
        return ()
    if not isinstance(body, dict):
        return ()
    if message_type == "post":
        return tuple(ref for element in _post_elements(body) if (ref := _element_ref(element)))
    ref = _body_ref(message_type, body)
    return (ref,) if ref else ()


def _body_ref(message_type: str, body: dict[str, Any]) -> MediaRef | None:
    name = encodable(str(body.get("file_name") or ""))
    duration = int(body.get("duration") or 0) // 1000  # milliseconds
    if message_type == "image" and body.get("image_key"):
        return MediaRef("image", str(body["image_key"]), "image/*")
    if message_type == "audio" and body.get("file_key"):
        return MediaRef("voice", str(body["file_key"]), "audio/ogg", 0, name, "", duration)
    if message_type == "file" and body.get("file_key"):
        return MediaRef("file", str(body["file_key"]), "", 0, name)
    if message_type == "media" and body.get("file_key"):
        return MediaRef("video", str(body["file_key"]), "video/mp4", 0, name, "", duration)
    return None


def _post_elements(body: dict[str, Any]) -> list[dict[str, Any]]:
    post = body if "content" in body else next((v for v in body.values() if isinstance(v, dict)), {})
    rows = post.get("content") if isinstance(post, dict) else None
    if not isinstance(rows, list):
        return []
    return [e for row in rows if isinstance(row, list) for e in row if isinstance(e, dict)]


def _element_ref(element: dict[str, Any]) -> MediaRef | None:
    if element.get("tag") == "img" and element.get("image_key"):
        return MediaRef("image", str(element["image_key"]), "image/*")
    if element.get("tag") == "media" and element.get("file_key"):
        return MediaRef("video", str(element["file_key"]), "video/mp4")
    return None


def _failure(resp: lark.BaseResponse, action: str) -> MediaError:
    status = http_status(resp) or 0
    detail = f"{action}: code {resp.code} ({resp.msg}), HTTP {status}"
    if status == 429 or status >= 500:
        return MediaError("unreachable", detail)
    if status == 404:
        return MediaError("gone", detail)
    return MediaError("refused", detail)


def fetch_resource(client: lark.Client, message_id: str, ref: MediaRef, limit: int) -> bytes:
    """The bytes of ``ref`` of message ``message_id`` (synchronous: run it in a thread)."""
    request = (
        GetMessageResourceRequest.builder()
        .message_id(message_id)
        .file_key(ref.file_id)
        .type("image" if ref.kind == "image" else "file")
        .build()
    )
    try:
        resp = client.im.v1.message_resource.get(request)
    except (requests.RequestException, ValueError) as exc:
        raise MediaError("unreachable", f"{type(exc).__name__}: {exc}") from None
    if not resp.success() or resp.file is None:
        raise _failure(resp, "message_resource.get")
    data = resp.file.getvalue() if isinstance(resp.file, io.BytesIO) else resp.file.read()
    if not data:
        raise MediaError("empty")
    if len(data) > limit:
        raise MediaError("too_big", f"{len(data)} bytes")
    return bytes(data)


def upload(client: lark.Client, file: OutgoingFile) -> tuple[str, str]:
    """Upload ``file``; ``(msg_type, content)`` of the message that shows it (synchronous)."""
    if file.data is None:
        raise MediaError("gone", "the bytes were not kept")
    try:
        if file.kind in ("photo", "image") or file.mime.startswith("image/"):
            body = CreateImageRequestBody.builder().image_type("message").image(io.BytesIO(file.data)).build()
            resp = client.im.v1.image.create(CreateImageRequest.builder().request_body(body).build())
            if not resp.success() or resp.data is None or not resp.data.image_key:
                raise _failure(resp, "image.create")
            return "image", json.dumps({"image_key": resp.data.image_key})
        file_type = _file_type(file)
        builder = CreateFileRequestBody.builder().file_type(file_type).file_name(file.name or "file")
        if file.duration:
            builder = builder.duration(file.duration * 1000)
        body_f = builder.file(io.BytesIO(file.data)).build()
        resp_f = client.im.v1.file.create(CreateFileRequest.builder().request_body(body_f).build())
        if not resp_f.success() or resp_f.data is None or not resp_f.data.file_key:
            raise _failure(resp_f, "file.create")
    except (requests.RequestException, ValueError) as exc:
        raise MediaError("unreachable", f"{type(exc).__name__}: {exc}") from None
    msg_type = "audio" if file_type == "opus" else "file"
    return msg_type, json.dumps({"file_key": resp_f.data.file_key})


def _file_type(file: OutgoingFile) -> str:
    if file.mime in _FILE_TYPES:
        return _FILE_TYPES[file.mime]
    dot = file.name.rfind(".")
    return _DOC_TYPES.get(file.name[dot:].lower(), "stream") if dot >= 0 else "stream"


class FeishuMedia:
    """The media parts of ``FeishuChannel`` (``FetchesMedia``, ``SendsFiles``), mixed into it."""

    client: lark.Client

    async def fetch_media(self, message_id: str, ref: MediaRef, limit: int) -> bytes:
        """The bytes of ``ref`` (``fetch_resource``, in a worker thread)."""
        return await asyncio.to_thread(fetch_resource, self.client, message_id, ref, limit)

    async def send_file(self, chat_id: str, file: OutgoingFile, reply_to: str = "") -> str:
        """Upload ``file`` and send it to the chat (a reply to ``reply_to`` when given); its key."""
        msg_type, content = await asyncio.to_thread(upload, self.client, file)
        key = next(iter(json.loads(content).values()))
        target = OutboundMessage("feishu", chat_id, "", reply_to=reply_to)
        uuid = f"tc-file-{key}"[:50]
        try:
            resp = await asyncio.to_thread(post_message, self.client, target, msg_type, content, uuid)
        except (requests.RequestException, ValueError) as exc:
            raise MediaError("unreachable", f"{type(exc).__name__}: {exc}") from None
        if not resp.success():
            raise _failure(resp, "send the file")
        return str(key)
