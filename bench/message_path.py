"""The real message path with a recording main model: what the conversation-recall benchmarks drive.

``bench.conversation_recall`` (and through it ``bench.everyday --mode ask``) and ``bench.retrieval_misses``
send questions as a person's messages through ``gateway.assistant.Assistant.handle`` (identity, gate,
retrieval, relevance floor, prompt building) and read the request the main model would have received.
``open_path`` builds that path once for all of them: the engine, the embedder (warmed: model load is
start-up cost), the offline extraction (its quiet gap never passes during a run, so the queries do not
become memories) and the assistant, with ``memory.topK`` as the product's config has it.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.embedding_option import attach_embedder
from gateway.agent import ChatRequest
from gateway.assistant import Assistant, AssistantSettings
from gateway.config import Config
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.retrieval.ranking import RelevanceFloor
from memory.sessions import SessionStore
from memory.vectors.embedding import EmbeddingSettings


class RecordingModel:
    """The main model's place in the path: keeps each request, answers "ok" (no model time measured)."""

    label = "recording"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def reply(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return "ok"


@dataclass(slots=True)
class MessagePath:
    """One opened path: the engine the memories are written to, the assistant the messages go through,
    and the recording model holding every request it received."""

    engine: MemoryEngine
    assistant: Assistant
    model: RecordingModel


def default_top_k() -> int:
    """``memory.topK`` as a fresh config has it (the product's default, not ``AssistantSettings``')."""
    return Config().memory.top_k


@asynccontextmanager
async def open_path(
    db_path: str | Path,
    embedding: EmbeddingSettings | None,
    floor: RelevanceFloor,
    top_k: int | None = None,
) -> AsyncIterator[MessagePath]:
    """The message path over a memory at ``db_path`` (``embedding`` None: keyword only), closed on exit.

    ``top_k``: the memories a question gets (default ``default_top_k()``)."""
    engine = await MemoryEngine.open(db_path)
    embedder = attach_embedder(engine, embedding) if embedding is not None else None
    try:
        if embedder is not None:
            await embedder.embed_query("warm up")  # model load is start-up cost
        model = RecordingModel()
        extraction = ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            OfflineMemoryModel(),
            ExtractionSettings(quiet_gap=86_400.0),
        )
        try:
            with tempfile.TemporaryDirectory() as workspace:
                settings = AssistantSettings(
                    workspace=Path(workspace),
                    floor=floor,
                    top_k=default_top_k() if top_k is None else top_k,
                )
                assistant = Assistant(
                    engine=engine,
                    sessions=SessionStore(engine.store.sessions),
                    chat_model=model,
                    settings=settings,
                    extraction=extraction,
                )
                yield MessagePath(engine, assistant, model)
        finally:
            await extraction.close()
    finally:
        if embedder is not None:
            await embedder.close()
        await engine.close()
