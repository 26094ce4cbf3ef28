"""One owner, one writer (memory/writes.py, docs/scale-out.md "One writer per owner"): two gateways'
engines on one PostgreSQL database write the same person's memories at once — an extraction on one, a
``/remember`` on the other — and the clean path's duplicate and supersede checks still see each other's
writes: one live memory where the two say the same thing, one live value of a single-valued fact.

The interleaving is forced, not hoped for: the first write's transaction holds until the second is seen
waiting for the owner's lock (``pg_locks``), or has finished — which, without the lock, it does, and the
assertions fail."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from memory.engine import MemoryEngine
from memory.records import Fact, WriteResult

OWNER = "user:alice"


@pytest.fixture
async def gateways(postgres_url: str) -> AsyncIterator[tuple[MemoryEngine, MemoryEngine]]:
    """Two engines on one database: two gateways' connections."""
    opened = [await MemoryEngine.open(postgres_url), await MemoryEngine.open(postgres_url)]
    try:
        yield opened[0], opened[1]
    finally:
        for engine in opened:
            with contextlib.suppress(Exception):
                await engine.close()


async def _waiting_or_done(engine: MemoryEngine, task: asyncio.Task[WriteResult]) -> None:
    """Until ``task`` waits for an advisory lock, or is done (a ceiling, no margin)."""
    async with asyncio.timeout(30):
        while not task.done():
            rows = await engine.store.db.read(  # type: ignore[attr-defined]
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            )
            if rows[0][0]:
                return
            await asyncio.sleep(0.01)


async def _extract_while(
    engine: MemoryEngine, fact: Fact, other: MemoryEngine, other_fact: Fact
) -> asyncio.Task[WriteResult]:
    """The extraction's write of ``fact`` (the path ``pipeline/extraction.py`` takes: ``write_many`` with
    a step after the facts); before it commits, the other gateway writes ``other_fact`` as ``/remember``
    does (``engine.write``, no embedding)."""
    started: list[asyncio.Task[WriteResult]] = []

    async def then(_results: list[WriteResult]) -> None:
        task = asyncio.create_task(other.write(OWNER, other_fact, embed=False))
        started.append(task)
        await _waiting_or_done(engine, task)

    await engine.write_many(OWNER, [fact], embed=False, then=then)
    return started[0]


async def test_the_same_fact_from_extraction_and_remember_on_two_gateways_is_one_memory(gateways) -> None:
    a, b = gateways
    extracted = Fact("I live in Berlin", category="identity", subject="user", predicate="lives_in")
    remembered = Fact("I live in Berlin", category="identity", source="manual", importance=0.9)
    second = await _extract_while(a, extracted, b, remembered)
    assert (await second).action == "merged"
    live = await a.list(OWNER)
    assert [m.content for m in live] == ["I live in Berlin"]


async def test_a_single_valued_fact_written_on_two_gateways_at_once_has_one_live_value(gateways) -> None:
    a, b = gateways
    berlin = Fact("I live in Berlin", category="identity", subject="user", predicate="lives_in")
    paris = Fact("I live in Paris now", category="identity", subject="user", predicate="lives_in")
    second = await _extract_while(a, berlin, b, paris)
    assert (await second).action == "superseded"
    live = await a.list(OWNER)
    assert [m.content for m in live] == ["I live in Paris now"]  # Berlin archived, pointing to it
    everything = await a.list(OWNER, include_archived=True)
    old = next(m for m in everything if m.content == "I live in Berlin")
    assert old.is_archived and old.superseded_by == live[0].id


@pytest.mark.both_stores
async def test_the_owner_lock_belongs_inside_the_writes_transaction(engine: MemoryEngine) -> None:
    with pytest.raises(RuntimeError, match="inside"):
        await engine.store.memories.serialise_owner(OWNER)
    async with engine.store.transaction():
        await engine.store.memories.serialise_owner(OWNER)  # the same call on both stores
