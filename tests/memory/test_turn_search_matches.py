"""Turn search returns only turns that match, and the turns that hold every word of the query come first,
keyword and hybrid (issue 37, item 6: ``memory search --turns zebra`` — never said — listed 10 turns, and
for ``--turns Harriet`` the turn that says Harriet was not first). Hybrid runs the bundled e5 model, whose
cosines crowd together: a word never said is ~0.78 from every turn."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.conversation import says_exactly
from memory.engine import MemoryEngine
from memory.vectors.cache import build_cached_embedder
from memory.vectors.embedding import EmbeddingSettings
from memory.vectors.reindex import reindex

DAY = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
TALK = [
    ("user", "Do you know a good recipe for dinner?"),
    ("assistant", "How about a risotto?"),
    ("user", "Have you met Harriet yet?"),
    ("assistant", "Yes, she came to the party last week and brought her sister."),
    ("user", "I adopted a golden retriever puppy last spring"),
    ("assistant", "Lovely! What is the puppy called?"),
    ("user", "Biscuit. He chews every shoe in the house."),
    ("assistant", "Puppies do that."),
    ("user", "The deploy went out blue-green on Tuesday"),
    ("assistant", "Good to hear it went smoothly."),
    ("user", "We should book the train to Hangzhou soon"),
    ("assistant", "The G7311 leaves at 9:00."),
    ("user", "Harriet's birthday is on the 12th, remind me to get a card"),
    ("assistant", "Noted."),
]


@pytest.fixture(params=["keyword", "hybrid"])
async def said(request: pytest.FixtureRequest, engine: MemoryEngine) -> MemoryEngine:
    for n, (role, text) in enumerate(TALK):
        await engine.conversation.record(
            "alice", channel="telegram", chat_id="1", role=role, content=text, now=DAY + timedelta(minutes=n)
        )
    if request.param == "hybrid":
        engine.embedder = build_cached_embedder(EmbeddingSettings(provider="local"), engine.store.vectors)
        engine.embedding.query_timeout = 120.0  # the model may load on the first query on a busy machine
        assert (await reindex(engine.conversation, engine.embedder)).embedded == len(TALK)
    try:
        yield engine
    finally:
        if engine.embedder is not None:
            await engine.embedder.close()
            engine.embedder = None


async def contents(engine: MemoryEngine, query: str) -> list[str]:
    return [h.turn.content for h in await engine.conversation.search("alice", query, limit=10, context=0)]


@pytest.mark.parametrize("query", ["zebra", "quantum chromodynamics", "asdfgh"])
async def test_a_query_nothing_matches_finds_nothing(said: MemoryEngine, query: str) -> None:
    assert await contents(said, query) == []


async def test_the_turns_that_say_the_word_come_first(said: MemoryEngine) -> None:
    found = await contents(said, "Harriet")
    assert set(found[:2]) == {
        "Have you met Harriet yet?",
        "Harriet's birthday is on the 12th, remind me to get a card",
    }
    # the reply to the question about her may follow (found through the question), never before it
    assert all(turn in found[:2] or "Harriet" not in turn for turn in found)


async def test_the_query_as_typed_beats_its_words_apart(said: MemoryEngine) -> None:
    found = await contents(said, "golden retriever puppy")
    assert found[0] == "I adopted a golden retriever puppy last spring"


def test_says_exactly_is_the_query_as_typed_not_inside_a_word() -> None:
    assert says_exactly("Harriet", "Harriet's birthday is on the 12th")
    assert says_exactly("  golden   RETRIEVER ", "I adopted a golden retriever puppy")
    assert says_exactly("who is Harriet?", "So who is Harriet, then")
    assert not says_exactly("cat", "a category of its own")
    assert says_exactly("小雨", "我女儿叫小雨")
    assert not says_exactly("?", "anything?")


async def test_a_reply_is_still_found_through_its_question(said: MemoryEngine) -> None:
    found = await contents(said, "who came to the party?")
    assert found and found[0].startswith("Yes, she came to the party")


async def test_with_embeddings_a_turn_that_stands_out_in_meaning_is_still_found(said: MemoryEngine) -> None:
    if said.embedder is None:
        pytest.skip("meaning needs the embedder")
    found = await contents(said, "what pet do I have?")  # no word shared with the dog's turns
    assert found and any("Biscuit" in turn or "puppy" in turn.lower() for turn in found[:2])
