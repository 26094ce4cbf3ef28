"""Request bodies the local servers read: form fields (url-encoded, JSON, or ``multipart/form-data`` with
files), as python-telegram-bot, lark-oapi and the openai SDK send them (stdlib ``email`` parser)."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP


@dataclass(frozen=True)
class Upload:
    """One file of a multipart body."""

    name: str  # the file name the client gave ("" when none)
    content_type: str
    data: bytes


def form_params(raw: bytes, content_type: str) -> tuple[dict[str, str], dict[str, Upload]]:
    """The text fields (JSON values as JSON text) and the files of a request body."""
    if not raw:
        return {}, {}
    if content_type.startswith("multipart/"):
        return multipart(raw, content_type)
    if "json" in content_type:
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in json.loads(raw).items()}, {}
    pairs = urllib.parse.parse_qs(raw.decode(), keep_blank_values=True)
    return {k: v[0] for k, v in pairs.items()}, {}


def multipart(
    raw: bytes, content_type: str, file_fields: tuple[str, ...] = ()
) -> tuple[dict[str, str], dict[str, Upload]]:
    """Fields and files of a ``multipart/form-data`` body: a part with a file name or a content type is a
    file, and so is a part named in ``file_fields`` (lark-oapi sends its file parts bare)."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: dict[str, str] = {}
    files: dict[str, Upload] = {}
    for part in message.iter_parts():
        name = str(part.get_param("name", header="content-disposition") or "")
        data = part.get_payload(decode=True) or b""
        assert isinstance(data, bytes)
        filename = part.get_filename()
        if filename is not None or name in file_fields or "content-type" in part:
            files[name] = Upload(str(filename or ""), part.get_content_type(), data)
        else:
            fields[name] = data.decode("utf-8", "replace")
    return fields, files
