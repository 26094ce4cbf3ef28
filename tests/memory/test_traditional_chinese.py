"""Traditional and Simplified Chinese find each other (issue 35), on both stores, the text kept as typed.

Told in one script and asked in the other: found by keyword-only retrieval and by hybrid retrieval (the
real local model behind the real cache). A home indexed by an older tierclaw (rows written through the
store with the search text the tokenizer made before folding) is re-indexed when it is opened again and
its rows are found. Fails on the code before ``memory/text/script.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from memory.clock import to_db, utcnow
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.search_refold import refold_search_text
from memory.store.attachments import NewAttachment
from memory.store.memories import NewRow
from memory.store.open import open_store
from memory.store.refold import SEARCH_REFOLD
from memory.text import tokenizer
from memory.text.dedup import norm_key
from memory.vectors.cache import PASSAGE_SUFFIX, CachedEmbedder, text_hash
from memory.vectors.embedding import LOCAL_MODEL_KEY, LocalEmbedder
from tests.memory import search_homes

pytestmark = pytest.mark.both_stores

OWNER = "mei"
TOLD_TRADITIONAL = "我養了一隻貓，叫咪咪，今年三歲"
ASKED_SIMPLIFIED = "我的猫几岁了？"
TOLD_SIMPLIFIED = "我女儿在台北读书，学的是钢琴"
ASKED_TRADITIONAL = "我女兒在哪裡讀書？"
OTHERS = ["我每天早上喝咖啡", "周末喜欢去爬山", "对花生过敏", "在上海的一家银行上班"]


def _old_index_text(text: str) -> str:
    """The search text the tokenizer made before Traditional was folded: jieba on the text as typed."""
    jieba = tokenizer.warm_up()
    tokens = [w for tok in jieba.lcut_for_search(text.lower()) for w in tokenizer._WORD_RUN.findall(tok)]
    return " ".join(tokenizer.stem(t) for t in tokens)


@pytest.fixture
async def home(memory_url: str, tmp_path: Path) -> AsyncIterator[MemoryEngine]:
    engine = await MemoryEngine.open(search_homes.target(memory_url, tmp_path))
    try:
        for text in [TOLD_TRADITIONAL, TOLD_SIMPLIFIED, *OTHERS]:
            await engine.write(OWNER, Fact(text, importance=0.6), embed=False)
        yield engine
    finally:
        await engine.close()


async def _found(engine: MemoryEngine, query: str) -> list[str]:
    return await search_homes.found(engine, OWNER, query)


async def test_keyword_only_each_script_finds_the_other(home: MemoryEngine) -> None:
    assert TOLD_TRADITIONAL in await _found(home, ASKED_SIMPLIFIED)
    assert TOLD_SIMPLIFIED in await _found(home, ASKED_TRADITIONAL)
    # The memory keeps the characters it was told in.
    assert sorted(m.content for m in await home.list(OWNER)) == sorted(
        [TOLD_TRADITIONAL, TOLD_SIMPLIFIED, *OTHERS]
    )


async def test_hybrid_each_script_finds_the_other(home: MemoryEngine) -> None:
    cached = CachedEmbedder(LocalEmbedder(), home.store.vectors)
    home.embedder = cached
    try:
        for text in [TOLD_TRADITIONAL, TOLD_SIMPLIFIED, *OTHERS]:
            await home.write(OWNER, Fact(text, importance=0.6))  # merged: now with a vector
        assert (await _found(home, ASKED_SIMPLIFIED))[0] == TOLD_TRADITIONAL
        assert (await _found(home, ASKED_TRADITIONAL))[0] == TOLD_SIMPLIFIED
    finally:
        home.embedder = None
        await cached.close()


async def _mark_refold_pending(target: str) -> None:
    """What the migration that adds ``search_refold`` leaves in a home an older tierclaw wrote."""
    await search_homes.run_statements(target, [next(s for s in SEARCH_REFOLD.split(";") if "INSERT" in s)])


async def test_a_home_indexed_before_folding_is_found_once_reopened(memory_url: str, tmp_path: Path) -> None:
    target = search_homes.target(memory_url, tmp_path)
    now = to_db(utcnow())
    turn = "我們上週去了臺灣的夜市"
    event = "去醫院看了牙醫"
    async with await MemoryEngine.open(target) as engine:
        store = engine.store
        old = _old_index_text(TOLD_TRADITIONAL)
        assert "猫" not in old.split()  # what the old index held: the Traditional tokens only
        fact = Fact(TOLD_TRADITIONAL, importance=0.6)
        # With the local model's vector of the text as it read it then, and that vector cached.
        blob = np.ones(4, dtype=np.float32).tobytes()
        row = NewRow(norm_key(fact.content), old, now, vector=blob, vector_model=LOCAL_MODEL_KEY)
        memory_id = await store.memories.insert(OWNER, fact, row)
        passages = LOCAL_MODEL_KEY + PASSAGE_SUFFIX
        await store.vectors.cache(passages, [(text_hash(fact.content), 4, blob)], [], now)
        assert memory_id not in [i for i, _, _ in await store.vectors.missing(LOCAL_MODEL_KEY)]
        old_turn = _old_index_text(turn)
        turn_id = await store.turns.add(
            OWNER, channel="cli", chat_id="c", role="user", content=turn, search_text=old_turn, at=now
        )
        await store.events.add(
            OWNER,
            now[:10],
            event,
            search_text=_old_index_text(event),
            channel="cli",
            sender_id="c",
            raw_tokens=10,
            source_ref=None,
        )
        new = NewAttachment("in", "cli", "c", "m1", 0, "photo", caption="貓的照片")
        new.search_text = _old_index_text("貓的照片") + " 貓 照 片"
        attachment_id, _ = await store.attachments.add(OWNER, new, now)
        assert not await store.search.matches(OWNER, ["猫"], tiers=(2,), limit=5)
        for text in OTHERS:  # rows without Traditional: nothing to rewrite
            await engine.write(OWNER, Fact(text, importance=0.6), embed=False)
    await _mark_refold_pending(target)
    store = await open_store(target)
    try:
        # In batches of two rows, the marker moved with each: only the four Traditional rows rewritten.
        assert await refold_search_text(store, batch=2) == 4
        assert await store.refold.pending() == {}
        # The memory's local vector goes, for the backfill to make again from the folded text.
        assert memory_id in [i for i, _, _ in await store.vectors.missing(LOCAL_MODEL_KEY)]
        assert not await store.vectors.cached(passages, [text_hash(TOLD_TRADITIONAL)])
    finally:
        await store.close()
    async with await MemoryEngine.open(target) as engine:
        store = engine.store
        assert [c.id for c in await store.search.matches(OWNER, ["猫"], tiers=(2,), limit=5)] == [memory_id]
        assert (await engine.get(OWNER, memory_id)).content == TOLD_TRADITIONAL  # type: ignore[union-attr]
        turns = await store.turns.matches(OWNER, ["台湾"], since=None, until=None, limit=5)
        assert [row.id for row, _, _ in turns] == [turn_id]
        assert turns[0][0].content == turn
        events = await store.events.find(
            OWNER, since=None, until=None, terms=("医院",), include_compressed=True, source_ref=None, limit=5
        )
        assert [e.summary for e in events] == [event]
        assert [row.id for row, _, _ in await store.attachments.matches(OWNER, ["猫"], limit=5)] == [
            attachment_id
        ]
        # Found by the engine's retrieval too, asked in Simplified.
        assert TOLD_TRADITIONAL in await _found(engine, ASKED_SIMPLIFIED)


async def test_the_same_fact_told_again_in_the_other_script_is_merged(home: MemoryEngine) -> None:
    again = await home.write(OWNER, Fact("我养了一只猫，叫咪咪，今年三岁", importance=0.6), embed=False)
    assert again.action == "merged"
    other = await home.write(OWNER, Fact("我養了一隻狗，叫咪咪，今年三歲", importance=0.6), embed=False)
    assert other.action == "inserted"  # another animal: the guard still tells them apart
    assert TOLD_TRADITIONAL in [m.content for m in await home.list(OWNER)]
