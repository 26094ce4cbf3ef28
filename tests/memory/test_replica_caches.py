"""Caches that stay true with several processes on one database (docs/scale-out.md, "Caches that must stay
true"): two engines — two store connections, as two gateway replicas have — on one database; a write on
A reaches B's caches after B's refresh interval (``memory/store/changes.py``), and only what changed is
dropped. B's interval runs on a clock the test moves, so nothing sleeps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory.engine import MemoryEngine
from memory.records import Fact
from memory.sessions import SessionStore
from tests.support.hash_embedder import HashEmbedder, hash_vector

pytestmark = pytest.mark.both_stores


class Clock:
    """Monotonic seconds that move only when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Pair:
    a: MemoryEngine
    b: MemoryEngine
    clock: Clock  # B's

    def later(self) -> None:
        """B's refresh interval has passed."""
        self.clock.now += self.b.store.changes.interval_s  # type: ignore[attr-defined]


@pytest.fixture
async def pair(tmp_path: Path, memory_url: str) -> AsyncIterator[Pair]:
    target: str | Path = memory_url or tmp_path / "memory.db"
    a = await MemoryEngine.open(target, warm_text=False)
    b = await MemoryEngine.open(target, warm_text=False)
    clock = Clock()
    b.store.changes.clock = clock  # type: ignore[attr-defined]
    await b.store.changes.refresh(force=True)  # the interval starts on this clock
    try:
        yield Pair(a, b, clock)
    finally:
        await a.close()
        await b.close()


async def test_a_new_session_on_a_is_used_by_b_after_the_interval(pair: Pair) -> None:
    sessions_a, sessions_b = SessionStore(pair.a.store.sessions), SessionStore(pair.b.store.sessions)
    chat = "telegram:42"
    await sessions_b.append(chat, "user", "old topic")
    assert await sessions_b.current(chat) == 1
    assert await sessions_a.new_session(chat) == 2
    reads = pair.b.store.changes.reads  # type: ignore[attr-defined]
    assert await sessions_b.current(chat) == 1  # within the interval: the cache, no read
    assert pair.b.store.changes.reads == reads  # type: ignore[attr-defined]
    pair.later()
    assert await sessions_b.current(chat) == 2
    await sessions_b.append(chat, "user", "new topic")
    assert await sessions_b.history(chat, 10) == [("user", "new topic")]
    assert await sessions_a.history(chat, 10) == [("user", "new topic")]


async def test_a_project_added_on_a_is_known_to_bs_gate(pair: Pair) -> None:
    owner = "alice"
    await pair.b.write(owner, Fact(content="I like tea", project="_global"))
    assert "Lighthouse" not in await pair.b.known_projects(owner)
    await pair.a.write(owner, Fact(content="the Lighthouse launch is on Friday", project="Lighthouse"))
    pair.later()
    assert "Lighthouse" in await pair.b.known_projects(owner)


async def test_a_memory_added_on_a_is_found_by_bs_keyword_and_vector_search(pair: Pair) -> None:
    owner = "alice"
    pair.a.embedder = HashEmbedder()
    pair.b.embedder = HashEmbedder()
    await pair.b.write(owner, Fact(content="my sister lives in Lisbon"))
    # B has the owner's matrix loaded, and "zeppelin" cached as a word no memory holds.
    assert await pair.b.search(owner, "zeppelin") == []
    assert pair.b.vectors.cache.owners() == [owner]
    text = "we flew over the alps in a zeppelin"
    written = await pair.a.write(owner, Fact(content=text))
    pair.later()
    assert [h.id for h in await pair.b.search(owner, "zeppelin")] == [written.id]
    matrix = await pair.b.vectors.of_owner(owner)
    assert matrix is not None
    assert [i for i, _ in matrix.top(hash_vector(text), 1, (2,))] == [written.id]


async def test_a_memory_added_on_a_is_bs_stand_out_after_the_interval(pair: Pair) -> None:
    """The rescue's nearest memory (``MemoryEngine.stand_out``) sees the other replica's writes as
    retrieval does, though nothing else on B reads in between."""
    owner = "alice"
    pair.a.embedder = HashEmbedder()
    pair.b.embedder = HashEmbedder()
    for content in ("my sister lives in Lisbon", "I like tea"):
        await pair.b.write(owner, Fact(content=content))
    text = "we flew over the alps in a zeppelin"
    before = await pair.b.stand_out(owner, text)  # B's matrix loaded without it
    written = await pair.a.write(owner, Fact(content=text))
    pair.later()
    after = await pair.b.stand_out(owner, text)
    assert before is not None and before.memory_id != written.id
    assert after is not None and after.memory_id == written.id


async def test_a_write_for_one_owner_leaves_other_owners_matrices_loaded(pair: Pair) -> None:
    pair.a.embedder = HashEmbedder()
    pair.b.embedder = HashEmbedder()
    for owner in ("xavier", "yasmin"):
        await pair.b.write(owner, Fact(content=f"{owner} keeps bees"))
        assert await pair.b.vectors.of_owner(owner) is not None
    assert sorted(pair.b.vectors.cache.owners()) == ["xavier", "yasmin"]
    await pair.a.write("xavier", Fact(content="xavier sold the boat"))
    pair.later()
    await pair.b.store.changes.refresh()
    assert pair.b.vectors.cache.owners() == ["yasmin"]


async def test_vectors_backfilled_on_a_reach_bs_matrix(pair: Pair) -> None:
    owner = "alice"
    pair.b.embedder = HashEmbedder()
    written = await pair.b.write(owner, Fact(content="the red kayak is in the shed"), embed=False)
    loaded = await pair.b.vectors.of_owner(owner)
    assert loaded is not None and loaded.top(hash_vector("the red kayak is in the shed"), 1, (2,)) == []
    await pair.a.vectors.set_embeddings(
        "test:hash@16",
        [(written.id, "the red kayak is in the shed", hash_vector("the red kayak is in the shed"))],
    )
    pair.later()
    matrix = await pair.b.vectors.of_owner(owner)
    assert matrix is not None
    assert [i for i, _ in matrix.top(hash_vector("the red kayak is in the shed"), 1, (2,))] == [written.id]


async def test_term_statistics_follow_the_other_engines_inserts_and_purges(pair: Pair) -> None:
    before = pair.b.store.search.indexed_rows
    first = await pair.a.write("alice", Fact(content="the harbour opens at dawn"))
    await pair.a.write("bob", Fact(content="bob paints the fence green"))
    await pair.a.purge("alice", first.id)
    pair.later()
    await pair.b.store.changes.refresh()
    assert pair.b.store.search.indexed_rows == before + 1


async def test_a_new_session_on_b_right_after_one_on_a_is_the_next_number(pair: Pair) -> None:
    sessions_a, sessions_b = SessionStore(pair.a.store.sessions), SessionStore(pair.b.store.sessions)
    chat = "telegram:42"
    assert await sessions_b.current(chat) == 1
    assert await sessions_a.new_session(chat) == 2
    assert await sessions_b.new_session(chat) == 3  # within B's interval: /new reads the versions itself


async def test_the_profile_is_cached_and_follows_a_change_on_another_replica(pair: Pair) -> None:
    owner = "ruth"
    await pair.b.write(owner, Fact(content="Ruth is a nurse", tier=1, category="identity"))
    assert await pair.b.profile_text(owner) == "- Ruth is a nurse"  # B's own write: no stale read
    await pair.a.write(owner, Fact(content="Ruth lives in Porto", tier=1, category="identity"))
    reads = pair.b.store.changes.reads  # type: ignore[attr-defined]
    assert await pair.b.profile_text(owner) == "- Ruth is a nurse"  # within the interval: the cache
    assert pair.b.store.changes.reads == reads  # type: ignore[attr-defined]
    pair.later()
    assert sorted((await pair.b.profile_text(owner)).splitlines()) == [
        "- Ruth is a nurse",
        "- Ruth lives in Porto",
    ]


async def test_the_scratchpad_is_cached_and_follows_a_change_on_another_replica(pair: Pair) -> None:
    owner = "sam"
    assert (await pair.b.scratchpad.get(owner)).content == ""
    await pair.b.scratchpad.put(owner, "planning the move")
    assert (await pair.b.scratchpad.get(owner)).content == "planning the move"  # its own write, in place
    await pair.a.scratchpad.put(owner, "moved; unpacking")
    assert (await pair.b.scratchpad.get(owner)).content == "planning the move"  # within the interval
    pair.later()
    assert (await pair.b.scratchpad.get(owner)).content == "moved; unpacking"
    assert await pair.a.scratchpad.clear(owner)
    pair.later()
    assert (await pair.b.scratchpad.get(owner)).content == ""
