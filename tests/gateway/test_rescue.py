"""The rescue on the reply path (issue 35): a message the learned gate refused still gets the one memory
that stands far out from the person's others (``RelevanceFloor.rescues``); what a rule refuses never does,
and a lift of 0 turns it off. The shipped embedder and head, both stores."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from bench.message_path import RecordingModel
from gateway.app import relevance_floor
from gateway.assistant import Assistant, AssistantSettings
from gateway.config import Config
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Fact
from memory.retrieval.gate import should_retrieve
from memory.retrieval.question import question_focus
from memory.retrieval.ranking import RelevanceFloor
from memory.sessions import SessionStore
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import LocalEmbedder

OWNER = "telegram:1"
SWIMMING = "我每周三晚上去游泳"
MEMORIES = [
    "我在一家物流公司做调度",
    "我老公是中学体育老师",
    "我们家的猫叫年糕",
    "我对青霉素过敏",
    SWIMMING,
    "我的车是一辆白色的比亚迪",
    "我妈住在洛阳老家",
    "我每个月房贷四千二",
]
# Round 44: someone of the person's, named in a memory, asked after by name in a question the head refuses.
WIFE = "我老伴儿叫孙翠萍"
WIFE_BIRTHDAY = "老伴儿生日是腊月初八"
SON = "大儿子国栋在大连开出租"
NAMED = [WIFE, WIFE_BIRTHDAY, SON]
# A question typed fast, without its mark: the head reads no question about the person's life in it.
REFUSED = "今晚游泳不"


@pytest.fixture
async def shipped(engine: MemoryEngine) -> AsyncIterator[MemoryEngine]:
    """The engine with the shipped embedder (the head reads only its vectors) and the memories."""
    engine.embedder = CachedEmbedder(LocalEmbedder(), engine.store.vectors)
    await engine.write_many(OWNER, [Fact(m) for m in [*MEMORIES, *NAMED]])
    try:
        yield engine
    finally:
        await engine.embedder.close()


@pytest.fixture
async def bots(shipped: MemoryEngine, tmp_path: Path) -> AsyncIterator[Callable[..., Assistant]]:
    """Assistants on the shipped engine, each with the configured floor and the given rescue cuts."""
    made: list[Assistant] = []

    def bot(**rescue: float) -> Assistant:
        floor = replace(relevance_floor(Config()), **rescue)
        assistant = Assistant(
            engine=shipped,
            sessions=SessionStore(shipped.store.sessions),
            chat_model=RecordingModel(),
            settings=AssistantSettings(workspace=tmp_path, floor=floor),
            extraction=ExtractionService(
                shipped,
                ExtractionBuffer(shipped.store.buffer),
                OfflineMemoryModel(),
                ExtractionSettings(quiet_gap=3600),
            ),
        )
        made.append(assistant)
        return assistant

    try:
        yield bot
    finally:
        for assistant in made:
            assert assistant.extraction is not None
            await assistant.extraction.close()


async def _recalled(bot: Assistant, text: str) -> list[str]:
    return [hit.content for hit in await bot._recall(OWNER, text)]


@pytest.mark.both_stores
async def test_a_refused_question_gets_the_memory_that_stands_out_only_when_the_rescue_is_on(
    shipped: MemoryEngine, bots: Callable[..., Assistant]
) -> None:
    projects = await shipped.known_projects(OWNER)
    on = bots(rescue_lift_zh=0.05, rescue_gap=0.01)
    assert await on._wants_memory(REFUSED, projects) is None  # the head refused it
    stand = await shipped.stand_out(OWNER, REFUSED)
    assert stand is not None and stand.lift >= 0.05 and stand.gap >= 0.01
    assert await _recalled(on, REFUSED) == [SWIMMING]
    # off, or a cut it does not reach, or the English cut only: nothing
    assert await _recalled(bots(rescue_lift_zh=0.0, rescue_gap=0.01), REFUSED) == []
    assert await _recalled(bots(rescue_lift_zh=stand.lift + 0.01), REFUSED) == []
    assert await _recalled(bots(rescue_lift_zh=0.05, rescue_gap=stand.gap + 0.01), REFUSED) == []
    assert await _recalled(bots(rescue_lift=0.05, rescue_lift_zh=0.0), REFUSED) == []


async def test_what_a_rule_refuses_is_never_rescued(bots: Callable[..., Assistant]) -> None:
    bot = bots(rescue_lift=0.001, rescue_lift_zh=0.001)
    for text in ("你好", "谢谢", "早上好", "thanks!", "/help", "👍"):
        assert not should_retrieve(text, frozenset(), learned=True), text
        assert await _recalled(bot, text) == [], text


async def test_an_archived_memory_is_not_rescued(
    shipped: MemoryEngine, bots: Callable[..., Assistant]
) -> None:
    """The owner's vectors may be a moment behind an archive by another process: the row is read live."""
    bot = bots(rescue_lift_zh=0.05)
    stand = await shipped.stand_out(OWNER, REFUSED)
    assert stand is not None
    assert await shipped.archive(OWNER, stand.memory_id)
    assert await shipped._retriever.hit_of(OWNER, stand) is None
    assert SWIMMING not in await _recalled(bot, REFUSED)


async def test_bench_retrieval_misses_puts_a_rescued_line_down_to_the_rescue(
    shipped: MemoryEngine, bots: Callable[..., Assistant]
) -> None:
    """bench.retrieval_misses names the rescue, not a floor rule, for a line the gate refused."""
    from bench.retrieval_misses import _chitchat_row

    row = await _chitchat_row(shipped, bots(rescue_lift_zh=0.05), OWNER, REFUSED)
    assert row["rule"] == "rescue" and row["personal"] is None and row["lift"] >= 0.05


async def test_the_rescue_reads_only_the_vector_the_gate_asked_for(shipped: MemoryEngine) -> None:
    """A message whose embedding failed or timed out for the gate is not embedded again for the rescue."""
    floor = RelevanceFloor(rescue_lift_zh=0.05)
    assert await shipped.rescue(OWNER, REFUSED, floor) == []  # nothing asked for its vector yet
    await shipped.embedding.query(question_focus(REFUSED))  # what the gate's head does
    assert [h.content for h in await shipped.rescue(OWNER, REFUSED, floor)] == [SWIMMING]


async def test_bench_retrieval_misses_gives_a_refused_question_what_the_rescue_read(
    shipped: MemoryEngine, bots: Callable[..., Assistant]
) -> None:
    """A question the gate refused (and the rescue did not take) carries its nearest memory's lift and gap,
    whether that memory is the answer, and how far below its cut the head read it (round 35)."""
    from bench.retrieval_misses import _diagnose
    from memory.head.model import load_head

    swimming = next(m.id for m in await shipped.list(OWNER) if m.content == SWIMMING)
    row = await _diagnose(shipped, bots(), OWNER, REFUSED, swimming, shown=[], first=False)
    stand = await shipped.stand_out(OWNER, REFUSED)
    assert stand is not None and stand.memory_id == swimming
    assert row["why"] == "gate" and row["nearest"] is True
    assert row["lift"] == round(stand.lift, 3) and row["gap"] == round(stand.gap, 3)
    query = await shipped.embedding.query(question_focus(REFUSED))
    assert query is not None
    margin = load_head().gate_margin(query, REFUSED)
    assert margin < 0 and row["gate_margin"] == round(margin, 2)  # refused: below the cut
    other = next(m.id for m in await shipped.list(OWNER) if m.content != SWIMMING)
    assert (await _diagnose(shipped, bots(), OWNER, REFUSED, other, shown=[], first=False))[
        "nearest"
    ] is False


@pytest.mark.both_stores
async def test_a_refused_question_naming_someone_gets_memory_when_a_memory_names_them(
    shipped: MemoryEngine, bots: Callable[..., Assistant]
) -> None:
    """Round 44 (``memory/text/names.py``): with the stand-out rescue off, a question the head refused that
    names one of the person's people by name gets what a question about the person's own life gets, when a
    memory names them too: the answer need not name them ("老伴儿生日…")."""
    bot = bots(rescue_lift=0.0, rescue_lift_zh=0.0)
    projects = await shipped.known_projects(OWNER)
    for text, memory in (("翠萍生日", WIFE_BIRTHDAY), ("国栋几岁了", SON), ("國棟手機號", SON)):
        assert await bot._wants_memory(text, projects) is None, text  # the head refused it
        assert memory in await _recalled(bot, text), text
    # a name no memory holds, or a famous one the dictionary knows: nothing
    for text in ("王建国是谁", "周杰伦新歌好听吗"):
        assert await bot._wants_memory(text, projects) is None, text
        assert await _recalled(bot, text) == [], text


async def test_bench_retrieval_misses_puts_a_named_line_down_to_the_name(
    shipped: MemoryEngine, bots: Callable[..., Assistant]
) -> None:
    from bench.retrieval_misses import _chitchat_row

    row = await _chitchat_row(shipped, bots(rescue_lift_zh=0.0), OWNER, "翠萍生日")
    assert row["rule"] == "named" and row["names"] == ["翠萍"] and row["personal"] is None
