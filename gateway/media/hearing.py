"""Voice and audio → text through the OpenAI-compatible ``audio/transcriptions`` endpoint (OpenAI's
``whisper-1`` or ``gpt-4o-mini-transcribe``, Groq, a local faster-whisper or speaches server).

OGG/Opus (Telegram's and Feishu's voice notes) goes as it comes; with ``convert_to_wav`` it is first
converted to 16 kHz mono WAV with ffmpeg, for a server that reads WAV only (whisper.cpp's whisper-server
without ``--convert``; ``tierclaw doctor`` checks ffmpeg then). A refusal (400: a corrupt or unsupported
audio) is final; a timeout, a 5xx, a 429 or a lost connection may pass and is tried again by the caller.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger("tierclaw.gateway")

FFMPEG_SECONDS = 60.0


class HearingError(RuntimeError):
    """A transcription failed: ``reason`` "refused" (the audio), "timeout", "unreachable" (may pass),
    "not_configured" (the endpoint has no such model, or refused the key), "corrupt" (ffmpeg could not
    read it)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason

    @property
    def permanent(self) -> bool:
        return self.reason not in ("timeout", "unreachable")


@dataclass
class Transcriber:
    """One transcription endpoint and model."""

    client: AsyncOpenAI
    model: str
    language: str = ""
    convert_to_wav: bool = False

    @property
    def label(self) -> str:
        return f"{self.model} at {self.client.base_url}"

    async def transcribe(self, data: bytes, name: str, mime: str) -> str:
        """The words heard in ``data``."""
        import openai

        if self.convert_to_wav and not data.startswith(b"RIFF"):
            data, name, mime = await to_wav(data), _wav_name(name), "audio/wav"
        file = (name or "audio.ogg", data, mime or "application/octet-stream")
        try:
            if self.language:
                result = await self.client.audio.transcriptions.create(
                    model=self.model, file=file, language=self.language
                )
            else:
                result = await self.client.audio.transcriptions.create(model=self.model, file=file)
        except openai.APITimeoutError:
            raise HearingError("timeout") from None
        except openai.APIConnectionError as exc:
            raise HearingError("unreachable", type(exc).__name__) from None
        except (openai.AuthenticationError, openai.NotFoundError, openai.PermissionDeniedError) as exc:
            raise HearingError("not_configured", f"HTTP {exc.status_code}") from None
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409, 429) or exc.status_code >= 500:
                raise HearingError("unreachable", f"HTTP {exc.status_code}") from None
            raise HearingError("refused", f"HTTP {exc.status_code}") from None
        return str(getattr(result, "text", "") or "").strip()


def _wav_name(name: str) -> str:
    stem = name.rsplit(".", 1)[0] if "." in name else (name or "audio")
    return f"{stem}.wav"


def ffmpeg_path() -> str | None:
    """Where ffmpeg is, if installed (``tierclaw doctor``)."""
    return shutil.which("ffmpeg")


async def to_wav(data: bytes) -> bytes:
    """``data`` (any audio ffmpeg reads) as 16 kHz mono 16-bit WAV; ``HearingError("corrupt")`` when
    ffmpeg cannot read it, ``("not_configured")`` when ffmpeg is missing."""
    binary = ffmpeg_path()
    if binary is None:
        raise HearingError("not_configured", "ffmpeg is not installed (media.transcription.convertToWav)")
    process = await asyncio.create_subprocess_exec(
        binary,
        "-nostdin",
        "-loglevel",
        "error",
        "-i",
        "pipe:0",
        "-ar",
        "16000",
        "-ac",
        "1",
        "-c:a",
        "pcm_s16le",
        "-f",
        "wav",
        "pipe:1",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(data), FFMPEG_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise HearingError("corrupt", "ffmpeg took too long") from None
    if process.returncode != 0 or not out:
        line = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise HearingError("corrupt", line[0][:200])
    return out
