"""What the local OpenAI-compatible server (``openai_server.py``) hears and sees: ``POST
/v1/audio/transcriptions`` (multipart, as the openai SDK's ``audio.transcriptions.create`` sends it) and
image content parts in chat completions — deterministic stand-ins, no model.

Hearing: the stand-in transcriber reads text written into a WAV's samples by ``speech_wav(text)`` (16-bit
mono PCM at 16 kHz, one UTF-8 byte per sample after a marker: what a test "says"), or the text registered
for the audio's SHA-256 (``stub.audio.speech[digest] = text``: any other format). A WAV with no words in it
is heard as "". Like OpenAI it refuses (400) audio that is no known format (a corrupt OGG), an audio
registered in ``refuse`` ("the audio could not be transcribed"), and — with ``wav_only`` — anything but WAV
(a local server that reads only WAV: tierclaw then converts with ffmpeg). ``script(StubReply(delay=…))``
makes the next answers slow (a transcription that times out) or failing.

Seeing: an image part is described by the text in a PNG's ``tEXt`` chunk "Description" (``described_png``
writes one: what a test "shows"), else as "an image of W×H pixels". ``vision = False`` makes every
request with an image part answer 400, as a model that cannot see does.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
import threading
import wave
import zlib
from collections import deque
from typing import Any

from localservers.multipart import multipart

TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions"
_MARK = b"TCSPEECH"
RATE = 16_000
_AUDIO_MAGIC = (b"RIFF", b"OggS", b"ID3", b"\xff\xfb", b"\xff\xf3", b"fLaC", b"\x1aE\xdf\xa3")


def speech_wav(text: str, seconds: float = 1.0) -> bytes:
    """A WAV the stand-in transcriber hears as ``text`` (16 kHz mono 16-bit; words in its samples)."""
    payload = _MARK + struct.pack("<I", len(text.encode())) + text.encode()
    samples = [b * 64 for b in payload]
    samples += [0] * max(0, int(RATE * seconds) - len(samples))
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    return out.getvalue()


def heard_in_wav(data: bytes) -> str | None:
    """The words ``speech_wav`` wrote into a WAV ("" for a WAV without any); None when not a WAV."""
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            if wav.getsampwidth() != 2:
                return ""
            frames = wav.readframes(wav.getnframes())
            channels = wav.getnchannels()
    except (wave.Error, EOFError):
        return None
    values = struct.unpack(f"<{len(frames) // 2}h", frames)[::channels]
    raw = bytes(max(0, min(255, round(v / 64))) for v in values[: 12 + 4096])
    if not raw.startswith(_MARK):
        return ""
    size = struct.unpack("<I", raw[8:12])[0]
    return raw[12 : 12 + size].decode("utf-8", "replace")


def described_png(
    description: str, width: int = 8, height: int = 8, rgb: tuple[int, int, int] = (200, 80, 40)
) -> bytes:
    """A small PNG whose ``tEXt`` "Description" the stand-in vision reads as what the image shows."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    text = b"Description\x00" + description.encode("latin-1", "replace") if description.isascii() else b""
    itxt = b"Description\x00\x00\x00\x00\x00" + description.encode() if not description.isascii() else b""
    parts = [chunk(b"IHDR", header)]
    if text:
        parts.append(chunk(b"tEXt", text))
    if itxt:
        parts.append(chunk(b"iTXt", itxt))
    parts += [chunk(b"IDAT", zlib.compress(row * height)), chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(parts)


def describe_image(data: bytes) -> str:
    """What the stand-in vision says an image shows."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        width, height = struct.unpack(">II", data[16:24])
        at = 8
        while at + 8 <= len(data):
            size = struct.unpack(">I", data[at : at + 4])[0]
            kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + size]
            if kind == b"tEXt" and body.startswith(b"Description\x00"):
                return body[12:].decode("latin-1")
            if kind == b"iTXt" and body.startswith(b"Description\x00"):
                return body[14:].split(b"\x00", 2)[-1].decode("utf-8", "replace")  # flag, method, lang, tr
            at += 12 + size
        return f"an image of {width}×{height} pixels"
    if data.startswith(b"\xff\xd8"):
        return "a JPEG photo"
    return "an image"


class StubAudio:
    """The hearing and seeing of one ``OpenAIStub``; see the module doc."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.speech: dict[str, str] = {}  # sha256 of audio bytes -> what it says
        self.refuse: set[str] = set()  # sha256 of audio the transcriber refuses
        self.wav_only = False
        self.vision = True
        self.refused_images = 0  # requests refused for their image parts (``vision = False``)
        self.requests: list[dict[str, Any]] = []  # each transcription request: fields, file name, size
        self._script: deque[Any] = deque()

    def script(self, *replies: Any) -> None:
        """Answer the next transcription requests with these ``StubReply`` objects (delay, status)."""
        with self._lock:
            self._script.extend(replies)

    def next_scripted(self) -> Any:
        with self._lock:
            return self._script.popleft() if self._script else None

    def transcribe(self, raw: bytes, content_type: str) -> tuple[int, dict[str, Any]]:
        """A transcription request: ``(status, body)``."""
        fields, files = multipart(raw, content_type) if content_type.startswith("multipart/") else ({}, {})
        upload = files.get("file")
        with self._lock:
            self.requests.append(
                {
                    **fields,
                    "file_name": upload.name if upload else "",
                    "bytes": len(upload.data) if upload else 0,
                }
            )
        if upload is None or not fields.get("model"):
            return 400, _error("'file' and 'model' are required")
        data = upload.data
        digest = hashlib.sha256(data).hexdigest()
        if digest in self.refuse:
            return 400, _error("The audio could not be transcribed.")
        if (not data.startswith(_AUDIO_MAGIC) and data[4:8] != b"ftyp") or _broken_ogg(data):
            return 400, _error("Audio file might be corrupted or unsupported")
        if self.wav_only and not data.startswith(b"RIFF"):
            return 400, _error("Unsupported audio format: this server reads WAV only")
        heard = self.speech.get(digest)
        if heard is None:
            heard = heard_in_wav(data) if data.startswith(b"RIFF") else ""
        if heard is None:
            return 400, _error("Audio file might be corrupted or unsupported")
        return 200, {"text": heard}

    def image_parts(self, body: dict[str, Any]) -> list[bytes]:
        """The images of the request's last user message (data URLs decoded)."""
        images: list[bytes] = []
        for message in body.get("messages") or []:
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            images = []
            for part in content if isinstance(content, list) else []:
                url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
                if url.startswith("data:") and "," in url:
                    images.append(base64.b64decode(url.split(",", 1)[1]))
        return images

    def describe(self, body: dict[str, Any]) -> str | None:
        """The stand-in description of the request's images (None: it has none)."""
        images = self.image_parts(body)
        if not images:
            return None
        return "; ".join(describe_image(image) for image in images)


def _broken_ogg(data: bytes) -> bool:
    """An OGG whose first page names no codec (a corrupt voice note)."""
    head = data[:200]
    return data.startswith(b"OggS") and not any(
        codec in head for codec in (b"OpusHead", b"\x01vorbis", b"FLAC")
    )


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None, "param": None}}


def transcription_text(body: dict[str, Any]) -> str:
    """The ``text`` of a transcription answer (for tests)."""
    return str(json.loads(json.dumps(body)).get("text", ""))
