"""The relevance floor's stand-out rule on the reply path (issue 26): for a question about the person's
own life, a memory whose cosine stands above the rest of their memories reaches the model even below the
absolute cosine floor; chit-chat the gate lets through keeps the absolute floor."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.app import relevance_floor
from gateway.assistant import Assistant, AssistantSettings
from gateway.config import Config
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Fact
from memory.retrieval.gate import personal_question, should_retrieve
from memory.sessions import SessionStore

OWNER = "telegram:1"
DIM = 8
TARGET = {"en": "I work as a nurse at the General", "zh": "我在市医院当护士"}
OTHERS = {
    "en": ["Lyon is where my family comes from", "Tuesday is bin day", "Blue suits me best"],
    "zh": ["我家在杭州", "周二倒垃圾", "蓝色最衬我"],
}
# Each language: a personal question and a chatty line the gate lets through, neither sharing a word
# with the target, both pointing at it in the vector space as strongly.
QUESTION = {"en": "What do I earn my bread with?", "zh": "我靠什么谋生？"}
CHATTER = {
    "en": "my whole week has been so tiring and sad, honestly, nothing went right",
    "zh": "我今天真的好累好难过啊，一点都不想动了",
}


def _unit(cosine: float, other: int) -> np.ndarray:
    """A unit vector whose cosine with the first axis is ``cosine``."""
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[other] = cosine, math.sqrt(1.0 - cosine * cosine)
    return v


class FixedEmbedder:
    """The engine's embedder interface with a fixed vector per text (our protocol, not a client library)."""

    model_key = "test:fixed@8"
    uses_local_cores = False

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    async def close(self) -> None:
        pass


class RecordingModel:
    label = "recording"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def reply(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return "ok"


@pytest.fixture
async def bot(engine: MemoryEngine, tmp_path: Path) -> AsyncIterator[Assistant]:
    vectors: dict[str, np.ndarray] = {}
    for lang in ("en", "zh"):
        # The target stands 0.05 above the others' median, below the absolute floors (0.84 / 0.865).
        vectors[TARGET[lang]] = _unit(0.82, 1)
        for i, text in enumerate(OTHERS[lang]):
            vectors[text] = _unit(0.77, 2 + i)
        vectors[QUESTION[lang]] = vectors[CHATTER[lang]] = _unit(1.0, 1)
    engine.embedder = FixedEmbedder(vectors)
    assistant = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=RecordingModel(),
        settings=AssistantSettings(workspace=tmp_path, floor=relevance_floor(Config())),
        extraction=ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            OfflineMemoryModel(),
            ExtractionSettings(quiet_gap=3600),
        ),
    )
    try:
        yield assistant
    finally:
        assert assistant.extraction is not None
        await assistant.extraction.close()


async def _memories(bot: Assistant, owner_lang: str, text: str) -> list[str]:
    await bot.handle(InboundMessage(channel="telegram", chat_id="1", sender_id="1", text=text))
    model = bot.chat_model
    assert isinstance(model, RecordingModel)
    return [m.content for m in model.requests[-1].memories]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_memory_that_stands_out_answers_a_personal_question_but_not_chatter(
    engine: MemoryEngine, bot: Assistant, lang: str
) -> None:
    await engine.write_many(OWNER, [Fact(TARGET[lang]), *(Fact(t) for t in OTHERS[lang])])
    assert personal_question(QUESTION[lang]) and should_retrieve(QUESTION[lang])
    assert should_retrieve(CHATTER[lang]) and not personal_question(CHATTER[lang])
    assert await _memories(bot, lang, QUESTION[lang]) == [TARGET[lang]]
    assert await _memories(bot, lang, CHATTER[lang]) == []
