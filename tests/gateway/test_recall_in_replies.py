"""What memory puts into the model's request: the relevance floor that keeps chit-chat clean, and the
overview a person gets when they ask what the assistant knows about them (docs/architecture.md,
"Retrieval")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.app import relevance_floor
from gateway.assistant import OVERVIEW_MEMORIES, Assistant, AssistantSettings
from gateway.config import Config
from memory.clock import utcnow
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Fact, Retrieved
from memory.retrieval.gate import asks_about_themselves
from memory.retrieval.ranking import NO_FLOOR, OTHER_LIFT_MIN_POOL, RelevanceFloor
from memory.sessions import SessionStore

OWNER = "telegram:1"


class RecordingModel:
    """A ChatModel that keeps each request (our protocol, not a client library)."""

    label = "recording"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def reply(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return "ok"


async def _assistant(engine: MemoryEngine, tmp_path: Path, floor: RelevanceFloor) -> Assistant:
    return Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=RecordingModel(),
        settings=AssistantSettings(workspace=tmp_path, floor=floor),
        extraction=ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            OfflineMemoryModel(),
            ExtractionSettings(quiet_gap=3600),
        ),
    )


@pytest.fixture
async def floored(engine: MemoryEngine, tmp_path: Path) -> AsyncIterator[Assistant]:
    bot = await _assistant(engine, tmp_path, relevance_floor(Config()))
    try:
        yield bot
    finally:
        assert bot.extraction is not None
        await bot.extraction.close()


async def _ask(bot: Assistant, text: str) -> ChatRequest:
    await bot.handle(InboundMessage(channel="telegram", chat_id="1", sender_id="1", text=text))
    model = bot.chat_model
    assert isinstance(model, RecordingModel)
    return model.requests[-1]


def _hit(match: float, cosine: float = 0.0) -> Retrieved:
    return Retrieved(
        1, "x", 2, "_global", "_general", "event", 0.5, "2026-01-01 00:00:00", 1.0, match, cosine
    )


# --------------------------------------------------------------------------------------- the floor


def test_floor_admits_by_match_keyword_only_and_by_match_or_cosine_hybrid() -> None:
    floor = RelevanceFloor(keyword_match=0.3, hybrid_match=0.5, hybrid_cosine=0.85)
    assert floor.admits(_hit(0.3), hybrid=False) and not floor.admits(_hit(0.29, 0.99), hybrid=False)
    assert floor.admits(_hit(0.5), hybrid=True) and floor.admits(_hit(0.0, 0.85), hybrid=True)
    assert not floor.admits(_hit(0.49, 0.849), hybrid=True)


def test_chinese_queries_use_their_own_values() -> None:
    floor = RelevanceFloor(keyword_match=0.3, hybrid_match=0.5, hybrid_cosine=0.8, hybrid_cosine_zh=0.9)
    assert floor.admits(_hit(0.0), hybrid=False, chinese=True)  # keyword_match_zh 0
    assert not floor.admits(_hit(0.0, 0.85), hybrid=True, chinese=True)
    assert floor.admits(_hit(0.0, 0.85), hybrid=True, chinese=False)


def test_the_configured_defaults_are_a_real_floor() -> None:
    floor = relevance_floor(Config())
    assert floor != NO_FLOOR
    assert 0 < floor.keyword_match < 1 and 0 < floor.hybrid_cosine < 1 and 0 < floor.hybrid_cosine_zh < 1


async def test_a_weak_keyword_hit_is_not_injected_but_a_relevant_one_is(
    engine: MemoryEngine, floored: Assistant
) -> None:
    await engine.write(
        OWNER, Fact(content="I went to the concert with my sister Anna and her friends last night")
    )
    await engine.write(OWNER, Fact(content="My sister Anna is allergic to peanuts"))
    # Shares only one common word ("last") with the first memory: the gate fires, the floor keeps it out.
    chatter = await _ask(floored, "I keep thinking about last weekend and all the fun I had with my family")
    assert chatter.memories == [] and chatter.memory_block == ""
    question = await _ask(floored, "Is my sister Anna allergic to anything?")
    assert [m.content for m in question.memories][:1] == ["My sister Anna is allergic to peanuts"]


async def test_without_a_floor_the_weak_hit_would_have_been_injected(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    await engine.write(
        OWNER, Fact(content="I went to the concert with my sister Anna and her friends last night")
    )
    bot = await _assistant(engine, tmp_path, NO_FLOOR)
    try:
        chatter = await _ask(bot, "I keep thinking about last weekend and all the fun I had with my family")
    finally:
        assert bot.extraction is not None
        await bot.extraction.close()
    assert [m.content for m in chatter.memories] == [
        "I went to the concert with my sister Anna and her friends last night"
    ]


# ------------------------------------------------------------------- "what do you know about me?"


@pytest.mark.parametrize(
    "text",
    [
        "What do you know about me?",
        "what do you remember about me",
        "Tell me about myself",
        "你记得我什么？",
        "关于我你都知道什么",
        "我跟你说过些什么",
    ],
)
def test_overview_questions_in_both_languages(text: str) -> None:
    assert asks_about_themselves(text)


@pytest.mark.parametrize("text", ["What do you know about Paris?", "Where do I live?", "我想知道你是谁"])
def test_other_questions_are_not_overview_questions(text: str) -> None:
    assert not asks_about_themselves(text)


@pytest.mark.parametrize("question", ["What do you know about me?", "你记得我什么？"])
async def test_what_do_you_know_about_me_gets_the_profile_and_the_weightiest_memories(
    engine: MemoryEngine, floored: Assistant, question: str
) -> None:
    await engine.write(OWNER, Fact(content="My name is Dana", tier=1, category="identity", importance=1.0))
    long_ago = utcnow() - timedelta(days=400)
    await engine.write(OWNER, Fact(content="I live in Lyon", category="identity", importance=1.0))
    await engine.write(
        OWNER, Fact(content="I had pasta for lunch", category="temp", importance=0.2, created_at=long_ago)
    )
    for i in range(OVERVIEW_MEMORIES + 2):
        await engine.write(OWNER, Fact(content=f"I visited museum number {i} in Paris", importance=0.5))
    request = await _ask(floored, question)
    contents = [m.content for m in request.memories]
    assert "My name is Dana" in request.system  # the profile, always in the system prompt
    assert len(contents) == OVERVIEW_MEMORIES
    assert contents[0] == "I live in Lyon"  # weighs most: identity, never decays
    assert "I had pasta for lunch" not in contents  # a temp fact from long ago weighs least
    # Not text matches: none of these memories shares a word with the question.
    assert all(m.match == 0.0 for m in request.memories)


def test_a_hit_that_stands_out_from_the_pool_is_admitted_below_the_absolute_cosine() -> None:
    floor = RelevanceFloor(0.2, 0.5, 0.9, 0.2, 0.95, hybrid_lift=0.03)
    for chinese in (False, True):
        assert floor.admits(_hit(0.0, 0.84), hybrid=True, chinese=chinese, pool_median=0.80)
        assert not floor.admits(_hit(0.0, 0.82), hybrid=True, chinese=chinese, pool_median=0.80)
        assert not floor.admits(_hit(0.0, 0.84), hybrid=True, chinese=chinese)  # no pool: absolute only
    assert not floor.admits(_hit(0.0, 0.84), hybrid=False, pool_median=0.80)  # keyword-only: match only


def test_a_message_not_about_the_persons_life_needs_the_other_share_and_gets_no_stand_out() -> None:
    floor = RelevanceFloor(0.2, 0.15, 0.9, 0.2, 0.95, hybrid_lift=0.03, other_match=0.25)
    shares_a_word = _hit(0.2, 0.82)  # one word of "what time is it in Tokyo?" in a memory, no closeness
    own = floor.for_message(True)
    other = floor.for_message(False)
    assert own == floor and own.admits(shares_a_word, hybrid=True)
    assert not other.admits(shares_a_word, hybrid=True)
    assert other.admits(_hit(0.25), hybrid=True) and other.admits(_hit(0.0, 0.9), hybrid=True)
    # no stand-out rule for it, in either language
    for chinese in (False, True):
        assert own.admits(_hit(0.0, 0.84), hybrid=True, chinese=chinese, pool_median=0.80)
        assert not other.admits(_hit(0.0, 0.84), hybrid=True, chinese=chinese, pool_median=0.80)
    # keyword-only is unchanged, and the other share never lowers hybrid_match
    assert other.admits(_hit(0.2), hybrid=False)
    assert RelevanceFloor(hybrid_match=0.5, other_match=0.25).for_message(False).hybrid_match == 0.5


def test_a_message_not_about_the_persons_life_needs_its_own_cosine_in_each_language() -> None:
    """Round 25: ``other_cosine`` / ``other_cosine_zh`` raise the cosine cut of other messages only, and
    never lower the configured one."""
    floor = RelevanceFloor(
        0.2, 0.15, 0.84, 0.2, 0.865, hybrid_lift=0.02, other_cosine=0.9, other_cosine_zh=0.92
    )
    close = _hit(0.0, 0.88)  # close in meaning, no shared word
    assert floor.for_message(True).admits(close, hybrid=True)
    assert floor.for_message(True).admits(close, hybrid=True, chinese=True)
    other = floor.for_message(False)
    assert not other.admits(close, hybrid=True) and not other.admits(close, hybrid=True, chinese=True)
    assert other.admits(_hit(0.0, 0.9), hybrid=True) and not other.admits(
        _hit(0.0, 0.91), hybrid=True, chinese=True
    )
    assert other.admits(_hit(0.0, 0.92), hybrid=True, chinese=True)
    assert RelevanceFloor(hybrid_cosine=0.95, other_cosine=0.9).for_message(False).hybrid_cosine == 0.95


def test_a_memory_for_another_message_must_stand_out_in_each_language_however_admitted() -> None:
    """Round 34: ``other_lift`` / ``other_lift_zh``: a hit for a message not about the person's life must
    stand that far above the median of the query's candidates, by the shared words or by the cosine;
    the person's own questions and keyword-only retrieval are unchanged, and 0 turns it off."""
    floor = RelevanceFloor(0.2, 0.15, 0.84, 0.2, 0.865, other_match=0.25, other_lift=0.02, other_lift_zh=0.03)
    shares, near = _hit(0.5, 0.81), _hit(0.0, 0.9)
    own, other = floor.for_message(True), floor.for_message(False)
    for chinese, least in ((False, 0.02), (True, 0.03)):
        for hit in (shares, near):
            median = hit.cosine - least - 1e-6
            assert other.admits(hit, hybrid=True, chinese=chinese, pool_median=median)
            assert not other.admits(hit, hybrid=True, chinese=chinese, pool_median=median + 0.005)
            assert own.admits(hit, hybrid=True, chinese=chinese, pool_median=median + 0.005)
    assert other.admits(shares, hybrid=False, pool_median=0.85)  # keyword-only: no vectors, no lift
    assert not floor.other and other.other
    off = RelevanceFloor(0.2, 0.15, 0.84, 0.2, 0.865, other_match=0.25).for_message(False)
    assert off.admits(shares, hybrid=True, pool_median=0.85)
    # nothing to measure the lift by: no median, or a pool too small for its median to be another's
    assert other.admits(shares, hybrid=True, pool_median=0.0)
    assert other.admits(shares, hybrid=True, pool_median=0.85, pool=OTHER_LIFT_MIN_POOL - 1)
    assert not other.admits(shares, hybrid=True, pool_median=0.85, pool=OTHER_LIFT_MIN_POOL)


def test_the_configured_lift_is_english_only_and_read_from_the_config() -> None:
    floor = relevance_floor(Config())
    assert (floor.other_lift, floor.other_lift_zh) == (0.04, 0.0)
    chosen = Config.model_validate({"memory": {"relevanceFloor": {"otherLift": 0.05, "otherLiftZh": 0.03}}})
    assert (relevance_floor(chosen).other_lift, relevance_floor(chosen).other_lift_zh) == (0.05, 0.03)
    assert relevance_floor(chosen).rescue_gap == floor.rescue_gap  # the fields before them stay in place


def test_the_configured_floor_asks_more_shared_words_of_other_messages() -> None:
    floor = relevance_floor(Config())
    assert floor.other_match > floor.hybrid_match
    assert not floor.for_message(False).admits(_hit(floor.hybrid_match, 0.0), hybrid=True)


def test_the_rescue_needs_both_the_lift_and_the_gap_of_its_language_and_is_off_at_zero() -> None:
    floor = RelevanceFloor(rescue_lift=0.1, rescue_lift_zh=0.06, rescue_gap=0.01)
    assert floor.rescues(0.06, 0.01, chinese=True) and not floor.rescues(0.06, 0.01, chinese=False)
    assert floor.rescues(0.1, 0.02, chinese=False)
    assert not floor.rescues(0.2, 0.009, chinese=True)  # a rival memory as near: no rescue
    assert not RelevanceFloor(rescue_gap=0.01).rescues(0.5, 0.5, chinese=True)  # lift 0: off
    assert not RelevanceFloor(rescue_lift=0.1).rescues(0.5, 0.5, chinese=True)  # per language
