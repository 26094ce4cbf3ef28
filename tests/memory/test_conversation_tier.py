"""The raw conversation tier: every turn kept per owner, searched the Chinese-correct way, with its
neighbours; the conversation_search tool and `tierclaw memory search --turns` on it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from channels.base import InboundMessage
from gateway.assistant import Assistant, AssistantSettings
from gateway.cli import main
from gateway.identity import Identities
from gateway.memory_tools import MemoryTools, ToolSettings
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.sessions import SessionStore
from memory.vectors.reindex import EmbeddingBackfill, reindex

DAY = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)


async def keep(
    engine: MemoryEngine, owner: str, chat: str, lines: list[tuple[str, str]], start: datetime
) -> None:
    for n, (role, text) in enumerate(lines):
        await engine.conversation.record(
            owner, channel="telegram", chat_id=chat, role=role, content=text, now=start + timedelta(minutes=n)
        )


@pytest.fixture
async def talk(engine: MemoryEngine) -> MemoryEngine:
    await keep(
        engine,
        "alice",
        "1",
        [
            ("user", "Which paint did we pick for the bedroom?"),
            ("assistant", "You liked two: Sage Mist and Harbour Blue."),
            ("user", "Let's go with the blue one, the Harbour Blue"),
            ("assistant", "Harbour Blue it is."),
        ],
        DAY,
    )
    await keep(
        engine,
        "alice",
        "1",
        [("user", "我下周三要去杭州出差，住在西湖边的酒店"), ("assistant", "好的，祝出差顺利。")],
        DAY + timedelta(days=20),
    )
    await keep(engine, "bob", "2", [("user", "My bedroom paint is Harbour Blue too")], DAY)
    return engine


async def test_a_reply_is_found_by_the_words_of_the_question_it_answers(talk: MemoryEngine) -> None:
    # The answer first: the question only restates what was asked.
    hits = await talk.conversation.search("alice", "which paint for the bedroom", limit=3, context=0)
    assert [h.turn.content for h in hits[:2]] == [
        "You liked two: Sage Mist and Harbour Blue.",
        "Which paint did we pick for the bedroom?",
    ]


async def test_the_turn_after_a_question_ranks_above_it_even_without_a_shared_word(
    engine: MemoryEngine,
) -> None:
    await keep(
        engine,
        "alice",
        "1",
        [
            ("assistant", "How long have you and Tom been married?"),
            ("user", "Five years already! Time flies."),
            ("assistant", "Congratulations!"),
            ("user", "Tom says we got married in Lisbon, and I keep telling everyone about it"),
        ],
        DAY,
    )
    # Another chat's next turn is not this question's answer.
    await keep(engine, "alice", "2", [("user", "Unrelated: the boiler is fixed")], DAY + timedelta(minutes=1))
    hits = await engine.conversation.search("alice", "how long married Tom", limit=3, context=0)
    assert [h.turn.content[:12] for h in hits] == ["Five years a", "How long hav", "Tom says we "]
    # A turn that asks along the way and goes on says its own piece: no answer is lifted above it.
    await keep(
        engine,
        "bob",
        "3",
        [("user", "Guess what? I adopted a greyhound called Pixel"), ("assistant", "Lovely news")],
        DAY,
    )
    hits = await engine.conversation.search("bob", "greyhound adopted", limit=2, context=0)
    assert hits[0].turn.content.startswith("Guess what?")
    assert hits[1].turn.content == "Lovely news"  # found through the words it answers, below them


async def test_english_search_finds_the_turn_with_its_neighbours(talk: MemoryEngine) -> None:
    hits = await talk.conversation.search("alice", "bedroom paint colour")
    assert hits[0].turn.content == "You liked two: Sage Mist and Harbour Blue."  # the reply, then:
    assert [t.content[:8] for t in hits[0].context] == ["Which pa", "You like", "Let's go"]
    (only,) = await talk.conversation.search("bob", "bedroom paint")
    assert [t.content for t in only.context] == [only.turn.content]  # a chat of one turn: nothing around
    middle = await talk.conversation.search("alice", "go with the blue one", limit=1)
    assert [t.content[:8] for t in middle[0].context] == ["You like", "Let's go", "Harbour "]


async def test_a_turn_shown_around_a_better_hit_is_not_a_hit_again(talk: MemoryEngine) -> None:
    # Four of Alice's turns hold "Harbour Blue" (three say it, the next one is indexed with it); with one
    # turn either side, the best hit's window already shows its neighbours, so the next hit is a turn
    # nobody was shown yet.
    ranked = await talk.conversation.search("alice", "Harbour Blue", limit=10, context=0)
    assert len(ranked) == 4 and {h.turn.owner for h in ranked} == {"alice"}
    hits = await talk.conversation.search("alice", "Harbour Blue", limit=10)
    assert hits[0].turn.id == ranked[0].turn.id
    windows = [{t.id for t in h.context} for h in hits]
    for n, hit in enumerate(hits):
        assert all(hit.turn.id not in shown for shown in windows[:n])
    assert set().union(*windows) >= {h.turn.id for h in ranked}  # every match is still shown
    assert len(hits) < len(ranked)


async def test_chinese_search(talk: MemoryEngine) -> None:
    hits = await talk.conversation.search("alice", "杭州出差")
    assert hits and hits[0].turn.content.startswith("我下周三要去杭州出差")
    assert await talk.conversation.search("alice", "西湖") != []
    assert await talk.conversation.search("bob", "杭州") == []


async def test_dates_and_counts(talk: MemoryEngine) -> None:
    late = await talk.conversation.search(
        "alice", "Harbour Blue 杭州", since=DAY + timedelta(days=10), context=0
    )
    # the reply after it is found through it (a turn is indexed with the words of the turn it answers)
    assert [h.turn.content[:4] for h in late] == ["我下周三", "好的，祝"]
    assert await talk.conversation.count("alice") == 6 and await talk.conversation.count() == 7
    assert await talk.conversation.prune(5, now=DAY + timedelta(days=21)) == 5
    assert await talk.conversation.count("alice") == 2


async def test_the_tool_searches_only_the_bound_owner(talk: MemoryEngine) -> None:
    box = MemoryTools(talk, "alice", "what paint?", ToolSettings())
    result = json.loads(await box.call("conversation_search", '{"query": "Harbour Blue paint", "limit": 5}'))
    said = [t["text"] for r in result["results"] for t in r["turns"]]
    assert "Let's go with the blue one, the Harbour Blue" in said
    assert not any("too" in text for text in said)  # bob's turn
    assert all(sum(t["match"] for t in r["turns"]) == 1 for r in result["results"])
    early = json.loads(await box.call("conversation_search", '{"query": "杭州", "until": "2026-10-05"}'))
    assert early == {"results": []}
    bad = json.loads(await box.call("conversation_search", '{"query": "x", "since": "yesterday"}'))
    assert "YYYY-MM-DD" in bad["error"]


async def test_the_assistant_keeps_both_sides_of_each_turn(engine: MemoryEngine, tmp_path: Path) -> None:
    class Echo:
        label = "echo"

        async def reply(self, request) -> str:
            return f"noted: {request.user_text}"

    extraction = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        OfflineMemoryModel(),
        ExtractionSettings(quiet_gap=3600),
    )
    bot = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=Echo(),
        settings=AssistantSettings(workspace=tmp_path),
        identities=Identities({"alice": ["telegram:1", "feishu:ou_a"]}),
        extraction=extraction,
    )
    try:
        await bot.handle(
            InboundMessage(channel="telegram", chat_id="1", sender_id="1", text="My locker is 118")
        )
        await bot.handle(InboundMessage(channel="feishu", chat_id="oc_9", sender_id="ou_a", text="/help"))
        await bot.handle(
            InboundMessage(channel="feishu", chat_id="oc_9", sender_id="ou_a", text="储物柜在三楼")
        )
    finally:
        await extraction.close()
    assert await engine.conversation.count("user:alice") == 4  # commands are not conversation
    hits = await engine.conversation.search("user:alice", "locker")
    assert [t.content for t in hits[0].context] == ["My locker is 118", "noted: My locker is 118"]
    assert (await engine.conversation.search("user:alice", "储物柜"))[0].turn.channel == "feishu"


def test_cli_search_turns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    db = tmp_path / "m.db"

    async def fill() -> None:
        engine = await MemoryEngine.open(db)
        try:
            await keep(
                engine, "alice", "1", [("user", "The gate code is 4471"), ("assistant", "Got it.")], DAY
            )
        finally:
            await engine.close()

    asyncio.run(fill())
    assert main(["memory", "search", "gate code", "--turns", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "The gate code is 4471" in out and "Got it." in out and "telegram" in out
    assert main(["memory", "search", "gate code", "--turns", "--db", str(db), "--json"]) == 0
    (hit,) = json.loads(capsys.readouterr().out)  # "Got it." matches too, but is shown around it
    assert hit["content"] == "The gate code is 4471"
    assert [t["content"] for t in hit["context"]] == ["The gate code is 4471", "Got it."]


class MeaningEmbedder:
    """Our Embedder protocol with chosen directions: texts about one topic share a vector, any other text
    gets its own (a stand-in for a model that knows "automobile" and "car" mean the same)."""

    model_key = "test:meaning@8"
    uses_local_cores = False

    def __init__(self, topics: dict[str, list[str]]) -> None:
        self.topics = topics
        self.passages: list[str] = []

    def vector(self, text: str) -> np.ndarray:
        for n, words in enumerate(self.topics.values()):
            if any(w in text.lower() for w in words):
                return np.eye(8, dtype=np.float32)[n]
        out = np.zeros(8, dtype=np.float32)
        out[7] = 1.0
        return out

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages += texts
        return np.stack([self.vector(t) for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return self.vector(text)

    async def close(self) -> None:
        pass


async def test_with_embeddings_turns_get_vectors_and_are_found_by_meaning(talk: MemoryEngine) -> None:
    embedder = MeaningEmbedder({"car": ["automobile", "car", "vehicle"], "travel": ["杭州", "trip"]})
    sold = "I finally sold my old car last week"
    await keep(talk, "alice", "1", [("user", sold)], DAY + timedelta(days=30))
    await keep(talk, "bob", "2", [("user", "Bob's car is red")], DAY)
    # Without an embedder, words alone: "automobile" is never said.
    assert await talk.conversation.search("alice", "the automobile I got rid of") == []

    talk.embedder = embedder
    assert await talk.conversation.count_missing_embeddings(embedder.model_key) == 9
    done = await reindex(talk.conversation, embedder)
    assert done.embedded == 9 and await talk.conversation.count_missing_embeddings(embedder.model_key) == 0
    hits = await talk.conversation.search("alice", "the automobile I got rid of", limit=2)
    assert hits and hits[0].turn.content == sold
    assert all(h.turn.owner == "alice" for h in hits)  # Bob's car stays Bob's
    # A turn found by meaning keeps the since/until window.
    assert await talk.conversation.search("alice", "automobile", until=DAY + timedelta(days=29)) == []
    # Turns kept later are embedded by the next pass, and found once they are.
    await keep(talk, "alice", "1", [("user", "The new vehicle arrives Friday")], DAY + timedelta(days=31))
    assert (await reindex(talk.conversation, embedder)).embedded == 1
    hits = await talk.conversation.search("alice", "automobile", limit=5, context=0)
    assert {h.turn.content for h in hits} >= {
        "The new vehicle arrives Friday",
        "I finally sold my old car last week",
    }
    # Words still win where they match: the exact phrase first.
    hits = await talk.conversation.search("alice", "Harbour Blue", limit=1)
    assert "Harbour Blue" in hits[0].turn.content


async def test_a_turn_is_embedded_after_the_turn_before_it_in_its_own_chat(talk: MemoryEngine) -> None:
    embedder = MeaningEmbedder({})
    await reindex(talk.conversation, embedder)
    passages = embedder.passages
    assert len(passages) == 7
    # A chat's first turn alone; a reply after what it answers, as its word index holds those words.
    assert passages[0] == "Which paint did we pick for the bedroom?"
    assert passages[1] == f"{passages[0]}\nYou liked two: Sage Mist and Harbour Blue."
    # The same chat days later still follows on.
    assert passages[4] == "Harbour Blue it is.\n我下周三要去杭州出差，住在西湖边的酒店"
    # Another person's chat never lends its words.
    assert passages[6] == "My bedroom paint is Harbour Blue too"


async def test_the_backfill_embeds_turns_too(talk: MemoryEngine) -> None:
    embedder = MeaningEmbedder({"paint": ["paint", "blue"]})
    talk.embedder = embedder
    backfill = EmbeddingBackfill(talk, interval=3600)
    backfill.start()
    try:
        async with asyncio.timeout(60):
            while backfill.last_turns_result is None:
                await asyncio.sleep(0.01)
    finally:
        await backfill.stop()
    assert backfill.last_turns_result is not None and backfill.last_turns_result.embedded == 7
    assert await talk.conversation.count_missing_embeddings(embedder.model_key) == 0
