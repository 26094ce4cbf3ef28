"""The media parts from the config: the transcriber (``media.transcription``, the main provider's URL and
key where unset), the eyes (the main model with ``provider.vision``; ``media.describeModel`` or the memory
model on the memory provider), the summariser (the memory model), the file sender. Without a key the
offline stand-in keeps media without hearing or seeing it (and still reads documents: that needs no model).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from channels.base import Channel
from gateway.config import Config, ProviderConfig, has_api_key
from gateway.media.documents import warm_up
from gateway.media.hearing import Transcriber
from gateway.media.seeing import Eye, Vision
from gateway.media.send_back import FileSender
from gateway.media.service import MediaService, MediaSettings
from gateway.media.summary import Summariser
from memory.attachments import AttachmentLog

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@dataclass
class MediaParts:
    """What the assistant uses for media, and the HTTP clients to close."""

    service: MediaService
    sender: FileSender
    clients: list[AsyncOpenAI] = field(default_factory=list)

    def start(self) -> None:
        """Import the document libraries in the background (the first file then does not wait)."""
        threading.Thread(target=warm_up, name="media-warm-up", daemon=True).start()

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        self.clients.clear()


def _usable(provider: ProviderConfig) -> bool:
    return provider.type == "openai" and has_api_key(provider)


def _client(base_url: str, api_key: str, timeout: float, retries: int) -> AsyncOpenAI:
    from openai import AsyncOpenAI

    return AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=retries)


def build_media(config: Config, attachments: AttachmentLog, channels: Mapping[str, Channel]) -> MediaParts:
    """Everything of ``media`` the config asks for (nothing contacts a server here)."""
    clients: list[AsyncOpenAI] = []

    def client(base_url: str, api_key: str, timeout: float, retries: int = 0) -> AsyncOpenAI:
        made = _client(base_url, api_key, timeout, retries)
        clients.append(made)
        return made

    media, provider = config.media, config.provider
    t = media.transcription
    key = t.api_key.get_secret_value() or provider.api_key.get_secret_value()
    transcriber = None
    if key and t.model and (t.base_url or provider.type == "openai"):
        transcriber = Transcriber(
            client(t.base_url or provider.base_url, key, t.timeout_seconds),
            t.model,
            t.language,
            t.convert_to_wav,
        )
    main = None
    if _usable(provider) and provider.vision != "off":
        main_client = client(provider.base_url, provider.api_key.get_secret_value(), provider.timeout_seconds)
        main = Eye(main_client, config.agent.model, provider.vision)
    memory_provider = config.memory_provider()
    describer = summariser = None
    if _usable(memory_provider):
        memory_client = client(
            memory_provider.base_url,
            memory_provider.api_key.get_secret_value(),
            memory_provider.timeout_seconds,
        )
        if memory_provider.vision != "off":
            describer = Eye(
                memory_client, media.describe_model or config.memory_model(), memory_provider.vision
            )
        summariser = Summariser(memory_client, config.memory_model())
    service = MediaService(
        attachments,
        channels,
        transcriber=transcriber,
        vision=Vision(main, describer),
        summariser=summariser,
        settings=MediaSettings(media.max_bytes, media.keep_bytes, media.attempts),
        offline=not _usable(provider),
    )
    return MediaParts(service, FileSender(attachments, channels), clients)
