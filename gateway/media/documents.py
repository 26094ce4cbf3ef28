"""A file's real type (from its first bytes, not what the platform or the name claims) and its text:
PDF (pypdf), DOCX (python-docx), plain text, Markdown, CSV and JSON (charset detected by
charset-normalizer). Anything else is kept as a file with its name and type.

What cannot be read is a ``Unreadable`` with a reason the person is told (``words.py``): an encrypted PDF,
a PDF with no text layer (scanned pages), a DOCX whose zip would unpack to far more than it weighs (a zip
bomb: refused before python-docx opens it), a file that is not what its type says and not readable as
anything else. The libraries are imported when a document is read, so the gateway starts without them.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

MAX_TEXT_CHARS = 1_000_000  # of one document's text kept and indexed (a 500-page book is about this)
DOCX_MAX_UNPACKED = 64 * 1024 * 1024  # a DOCX whose parts unpack to more than this is refused
DOCX_MAX_RATIO = 100  # … or whose parts are compressed more than this (a zip bomb's signature)
TEXT_TYPES = ("text/", "application/json", "application/csv", "application/x-ndjson")
TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".csv", ".tsv", ".json", ".log", ".yaml", ".yml")

_MAGIC = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
    (b"\x1aE\xdf\xa3", "video/webm"),
)


class Unreadable(ValueError):
    """A document whose text cannot be had: ``reason`` is "encrypted", "no_text", "zip_bomb", "corrupt"."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class DocumentText:
    """A document's text and what it is (``pages`` for a PDF, else 0)."""

    text: str
    kind: str  # "pdf", "docx", "text"
    pages: int = 0
    truncated: bool = False


def warm_up() -> None:
    """Import the document libraries (a second or so together) so the first file does not wait for them:
    the gateway runs this in a background thread at start (``build.MediaParts.start``)."""
    import charset_normalizer  # noqa: F401
    import docx  # noqa: F401
    import pypdf  # noqa: F401


def sniff(data: bytes, claimed: str = "", name: str = "") -> str:
    """The MIME type ``data`` really is (its first bytes), else what was claimed, else by the name."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        return "audio/mp4" if claimed.startswith("audio/") else "video/mp4"
    if data.startswith(b"PK\x03\x04"):
        return _zip_type(data, claimed, name)
    if claimed and claimed not in ("application/octet-stream", "image/*"):
        return claimed
    if name.lower().endswith(TEXT_SUFFIXES) or _looks_like_text(data):
        return "text/plain"
    return "application/octet-stream"


def _zip_type(data: bytes, claimed: str, name: str) -> str:
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except zipfile.BadZipFile:
        return "application/zip"
    if "word/document.xml" in names:
        return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return claimed if claimed.startswith("application/vnd.openxmlformats") else "application/zip"


def _looks_like_text(data: bytes) -> bool:
    sample = data[:4096]
    return bool(sample) and b"\x00" not in sample


def readable(mime: str, name: str = "") -> bool:
    """Whether ``read_text`` reads files of this (sniffed) type."""
    return (
        mime == "application/pdf"
        or mime.endswith("wordprocessingml.document")
        or mime.startswith(TEXT_TYPES)
        or name.lower().endswith(TEXT_SUFFIXES)
    )


def read_text(data: bytes, mime: str) -> DocumentText:
    """The text of a PDF, DOCX or text file (run it in a worker thread: parsing is CPU work)."""
    if mime == "application/pdf":
        return _pdf(data)
    if mime.endswith("wordprocessingml.document"):
        return _docx(data)
    return _plain(data)


def _cut(text: str) -> tuple[str, bool]:
    return (text[:MAX_TEXT_CHARS], True) if len(text) > MAX_TEXT_CHARS else (text, False)


def _pdf(data: bytes) -> DocumentText:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except Unreadable:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, NotImplementedError) as exc:
        if "encrypt" in str(exc).lower() or "password" in str(exc).lower():
            raise Unreadable("encrypted") from None
        raise Unreadable("corrupt", type(exc).__name__) from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise Unreadable("no_text", f"{len(pages)} pages")
    cut, truncated = _cut(text)
    return DocumentText(cut, "pdf", len(pages), truncated)


def _docx(data: bytes) -> DocumentText:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except zipfile.BadZipFile:
        raise Unreadable("corrupt", "not a zip") from None
    unpacked = sum(i.file_size for i in infos)
    packed = sum(i.compress_size for i in infos) or 1
    if unpacked > DOCX_MAX_UNPACKED or unpacked / packed > DOCX_MAX_RATIO:
        raise Unreadable("zip_bomb", f"{unpacked} bytes unpacked from {packed}")
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise Unreadable("corrupt", type(exc).__name__) from None
    lines = [p.text for p in document.paragraphs if p.text.strip()]
    for table in document.tables:
        lines += [" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows]
    text = "\n".join(lines)
    if not text.strip():
        raise Unreadable("no_text")
    cut, truncated = _cut(text)
    return DocumentText(cut, "docx", 0, truncated)


def _plain(data: bytes) -> DocumentText:
    from charset_normalizer import from_bytes

    best = from_bytes(data[: 4 * MAX_TEXT_CHARS]).best()
    if best is None:
        raise Unreadable("corrupt", "no text encoding fits")
    text = str(best).replace("\x00", "")
    if not text.strip():
        raise Unreadable("no_text")
    cut, truncated = _cut(text)
    return DocumentText(cut, "text", 0, truncated)
