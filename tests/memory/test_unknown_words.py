"""A Chinese name or word jieba does not know is found by its part (issue 35, round 41), on both stores.

jieba cuts an unknown name whole, and differently as the sentence around it changes: "我老伴儿邢桂琴" gives
``邢桂琴``, "桂琴多大岁数了" gives ``桂琴``, so keyword search found no memory for the question. The tokenizer
now indexes and searches such a word with its pairs of characters (``tokenizer.search_words``). A home
indexed before is re-indexed when it is opened (the migration ``SEARCH_REINDEX``): its Chinese rows gain the
pairs of the words they hold (a turn keeps a deleted turn's words), their vectors kept. Fails on the code
before round 41.
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
from memory.store.memories import NewRow
from memory.store.open import open_store
from memory.store.refold import SEARCH_REINDEX
from memory.text import tokenizer
from memory.text.dedup import norm_key
from memory.vectors.embedding import LOCAL_MODEL_KEY
from tests.memory import search_homes

pytestmark = pytest.mark.both_stores

OWNER = "lao-sui"
WIFE = "我老伴儿邢桂琴 今年六十六"
SON = "我大小子隋立军在威海 港口开吊车"
OTHERS = ["每天早上去公园遛弯", "血压有点高 早上吃一片药", "喝茶就喝茉莉花茶", "I walk the dog at six"]


def _before_pairs(text: str) -> str:
    """The search text the tokenizer made before round 41: jieba's words alone."""
    return " ".join(tokenizer.stem(t) for t in tokenizer.segment(text))


async def _found(engine: MemoryEngine, query: str) -> list[str]:
    return await search_homes.found(engine, OWNER, query)


def test_an_unknown_word_is_searched_with_its_pairs() -> None:
    words = tokenizer.segment(WIFE)
    assert words.count("邢桂琴") == 1 and "桂琴" not in words
    # The pairs come after every word: two words side by side stay so (the phrase bonus reads them).
    assert tokenizer.index_text(WIFE).split() == [*words, "邢桂", "桂琴"]
    assert {"隋立军", "立军"} <= set(tokenizer.query_terms("隋立军电话多少"))
    # Each pair once, none that is already a word; a stored text gains exactly what index_text adds.
    repeated = tokenizer.search_words("邢桂琴说邢桂琴来了")
    assert repeated.count("桂琴") == 1 and repeated.count("邢桂琴") == 2
    assert tokenizer.with_pairs(_before_pairs(WIFE)) == tokenizer.index_text(WIFE)
    assert tokenizer.with_pairs(tokenizer.index_text(WIFE)) == tokenizer.index_text(WIFE)
    # A word jieba knows is cut as it was: only its known parts, no pairs.
    for known in ("老伴儿", "五大连池", "三十多年"):
        assert tokenizer.search_words(known) == tokenizer.segment(known)
    # Two characters are a pair already; English is untouched.
    assert tokenizer.search_words("桂琴生日") == tokenizer.segment("桂琴生日")
    assert tokenizer.index_text("Walking the dog") == "walk the dog"


@pytest.fixture
async def home(memory_url: str, tmp_path: Path) -> AsyncIterator[MemoryEngine]:
    engine = await MemoryEngine.open(search_homes.target(memory_url, tmp_path))
    try:
        for text in [WIFE, SON, *OTHERS]:
            await engine.write(OWNER, Fact(text, importance=0.6), embed=False)
        yield engine
    finally:
        await engine.close()


async def test_a_name_is_found_by_its_given_name(home: MemoryEngine) -> None:
    assert (await _found(home, "桂琴多大岁数了"))[:1] == [WIFE]
    assert (await _found(home, "立军电话多少"))[:1] == [SON]
    assert (await _found(home, "邢桂琴"))[:1] == [WIFE]


async def _mark_reindex_pending(target: str) -> None:
    """What the migration ``SEARCH_REINDEX`` leaves in a home an older tierclaw wrote."""
    await search_homes.run_statements(target, [s for s in SEARCH_REINDEX.split(";") if s.strip()])


async def test_a_home_indexed_before_the_pairs_is_found_once_opened(memory_url: str, tmp_path: Path) -> None:
    target = search_homes.target(memory_url, tmp_path)
    now = to_db(utcnow())
    blob = np.ones(4, dtype=np.float32).tobytes()
    async with await MemoryEngine.open(target) as engine:
        store = engine.store
        ids = {}
        for text in [WIFE, SON, *OTHERS]:  # as an older tierclaw wrote them, each with its local vector
            row = NewRow(norm_key(text), _before_pairs(text), now, vector=blob, vector_model=LOCAL_MODEL_KEY)
            ids[text] = await store.memories.insert(OWNER, Fact(text, importance=0.6), row)
        assert not await store.search.matches(OWNER, ["桂琴"], tiers=(2,), limit=5)
        # A turn indexed with the words of the turn before it, which retention has deleted since.
        answer, deleted_question = "她今天来了", "隋立军的媳妇叫啥"
        turn_id = await store.turns.add(
            OWNER,
            channel="cli",
            chat_id="c",
            role="user",
            content=answer,
            search_text=f"{_before_pairs(answer)} {_before_pairs(deleted_question)}",
            at=now,
        )
    await _mark_reindex_pending(target)
    store = await open_store(target)
    try:
        # Only the rows with an unknown word are rewritten (the other Chinese rows are read, not written),
        # in batches of two, the marker moved with each; a second walk finds nothing to do.
        assert await refold_search_text(store, batch=2) == 3
        assert await store.refold.pending() == {}
        assert not await store.vectors.missing(LOCAL_MODEL_KEY)  # the pairs change no vector
        await store.close()
        await _mark_reindex_pending(target)
        store = await open_store(target)
        assert await refold_search_text(store, batch=2) == 0
        turns = await store.turns.matches(OWNER, ["立军"], since=None, until=None, limit=5)
        assert [row.id for row, _, _ in turns] == [turn_id]  # the deleted question's words kept, paired
    finally:
        await store.close()
    async with await MemoryEngine.open(target) as engine:
        found = await engine.store.search.matches(OWNER, ["桂琴"], tiers=(2,), limit=5)
        assert [c.id for c in found] == [ids[WIFE]]
        assert (await _found(engine, "立军电话多少"))[:1] == [SON]
        assert sorted(m.content for m in await engine.list(OWNER)) == sorted([WIFE, SON, *OTHERS])
