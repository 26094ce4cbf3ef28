"""Build the main model and the memory model from the configuration.

``provider.type = "offline"``, or an ``"openai"`` provider without an API key, gives the labelled offline
models, so tierclaw always starts; ``notice`` then says plainly how to configure a real model. The memory
model uses ``memory.provider`` when given, else the main provider, sharing its client.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gateway.agent import ChatModel, OpenAIChatModel
from gateway.config import Config, ProviderConfig, has_api_key
from gateway.log_setup import home_relative
from gateway.offline_chat import OfflineChatModel, offline_hint
from memory.model.keeper import FactKeeper
from memory.model.offline_model import OfflineMemoryModel
from memory.model.protocol import MemoryModel

if TYPE_CHECKING:  # openai (about a second to import) loads only when a provider has a key
    from openai import AsyncOpenAI

    from memory.vectors.usage import MemoryEmbedder

NO_KEY_NOTICE = (
    "No API key configured, so tierclaw answers with its offline model (it shows what it remembers and\n"
    "says which of your facts it keeps).\n"
    "To use a real model: set provider.apiKey in ~/.tierclaw/config.json (`tierclaw onboard` writes a "
    "starter file)\nor export TIERCLAW_PROVIDER_API_KEY=sk-... (OPENAI_API_KEY works too); any "
    "OpenAI-compatible endpoint works via provider.baseUrl / TIERCLAW_PROVIDER_BASE_URL."
)
OFFLINE_NOTICE = 'provider.type is "offline": answering with the offline model.'


@dataclass(slots=True)
class Models:
    """The two models and the HTTP clients behind them (closed by ``close``)."""

    chat: ChatModel
    memory: MemoryModel
    notice: str | None = None
    clients: list[AsyncOpenAI] = field(default_factory=list)

    async def close(self) -> None:
        """Close the HTTP clients."""
        for client in self.clients:
            await client.close()
        self.clients.clear()


def make_client(provider: ProviderConfig) -> AsyncOpenAI:
    """An AsyncOpenAI client for one provider, with the configured timeout and retries, on the SDK's
    aiohttp transport (``gateway/model_http.py``: less of the event loop's CPU a request than httpx)."""
    from openai import AsyncOpenAI

    from gateway.model_http import http_client

    return AsyncOpenAI(
        api_key=provider.api_key.get_secret_value(),
        base_url=provider.base_url,
        timeout=provider.timeout_seconds,
        max_retries=provider.max_retries,
        http_client=http_client(),  # None: the SDK's own httpx client
    )


def _usable(provider: ProviderConfig) -> bool:
    return provider.type == "openai" and has_api_key(provider)


def build_models(config: Config, embedder: MemoryEmbedder | None = None) -> Models:
    """The main and memory models the configuration asks for (offline where no key is set); the offline
    ones share one fact keeper on ``embedder`` (the engine's: the learned head reads its vectors)."""
    keeper = FactKeeper(embedder)
    clients: dict[int, AsyncOpenAI] = {}

    def client_for(provider: ProviderConfig) -> AsyncOpenAI:
        if id(provider) not in clients:
            clients[id(provider)] = make_client(provider)
        return clients[id(provider)]

    notice: str | None = None
    chat: ChatModel
    if _usable(config.provider):
        chat = OpenAIChatModel(
            client_for(config.provider),
            config.agent.model,
            max_tokens=config.agent.max_tokens,
            temperature=config.agent.temperature,
        )
    memory_provider = config.memory_provider()
    if _usable(memory_provider):
        from memory.model.openai_model import OpenAIMemoryModel

        memory: MemoryModel = OpenAIMemoryModel(
            client_for(memory_provider), config.memory_model(), max_tokens=config.memory_max_tokens()
        )
    else:
        memory = OfflineMemoryModel(keeper=keeper)

    if not _usable(config.provider):
        # The offline keeper runs locally and costs no call: what the stand-in promises is kept at once
        # (unless exitFlush 0 says not to wait for extraction); a language model extracts after the gap.
        at_once = isinstance(memory, OfflineMemoryModel) and config.memory.extraction.exit_flush > 0
        chat = OfflineChatModel(keeper, remembers_at_once=at_once)
        notice = OFFLINE_NOTICE if config.provider.type == "offline" else NO_KEY_NOTICE
    return Models(chat=chat, memory=memory, notice=notice, clients=list(clients.values()))


def no_answer_hint(config: Config) -> str:
    """What the log says to check when a reply misses ``agent.replyDeadline``: the model's URL and name,
    and the two settings that bound the wait (never the key)."""
    provider = config.provider
    if not _usable(provider):
        return "the offline model did not answer; check agent.replyDeadline"
    return (
        f"the model {config.agent.model!r} at {provider.base_url} did not answer — check that server, "
        f"provider.timeoutSeconds ({provider.timeout_seconds:g} s per try, {provider.max_retries} retries) "
        f"and agent.replyDeadline ({config.agent.reply_deadline:g} s)"
    )


def offline_hint_for(config: Config) -> Callable[[str], str]:
    """The stand-in's "how to get real answers" for this config: it names the file in use (a trial's own
    ``~/tierclaw-local.json``, not the default) and, when that file chose ``provider.type: "offline"``,
    says that a key alone will not change it."""
    where = home_relative(config.source) if config.source is not None else None
    return functools.partial(offline_hint, config_file=where, chosen=config.provider.type == "offline")
