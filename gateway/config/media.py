"""The ``media`` section: voice notes, photos and files (README.md, "Voice notes, photos and files")."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator

from gateway.config.section import Section
from gateway.config.values import Secret

# Telegram bots may download at most 20 MB (Bot API getFile); the default holds both channels to it.
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


class TranscriptionConfig(Section):
    """The OpenAI-compatible ``audio/transcriptions`` endpoint (OpenAI, Groq, a local faster-whisper or
    speaches server). Empty ``baseUrl`` / ``apiKey``: the main provider's."""

    base_url: str = ""
    api_key: Secret = SecretStr("")
    model: str = "whisper-1"
    language: str = ""  # ISO-639-1 ("en", "zh"); "" lets the model detect it
    # Convert to 16 kHz mono WAV with ffmpeg before sending: for a server that reads WAV only (whisper.cpp's
    # whisper-server started without --convert). OpenAI, Groq and speaches take OGG/Opus as it comes.
    convert_to_wav: bool = False
    timeout_seconds: float = Field(60.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if value.strip() and (parts.scheme not in ("http", "https") or not parts.netloc):
            raise ValueError(
                'expected "" (the main provider) or an http(s) URL such as "https://api.groq.com/openai/v1"'
            )
        return value.strip()


class MediaConfig(Section):
    """What tierclaw does with the voice notes, photos and files it receives."""

    # The largest file downloaded, understood and kept (Telegram's own limit for bots is 20 MB).
    max_bytes: int = Field(DEFAULT_MAX_BYTES, ge=1024, le=100 * 1024 * 1024)
    # Keep each file's bytes in the memory database (so it can be sent back from any gateway).
    keep_bytes: bool = True
    # Who describes a photo when the main model cannot see (provider.vision): "" = the memory model.
    describe_model: str = ""
    # Tries of a download or a transcription that failed for a reason that may pass (network, 5xx, timeout).
    attempts: int = Field(3, ge=1, le=10)
    transcription: TranscriptionConfig = Field(default_factory=TranscriptionConfig)
