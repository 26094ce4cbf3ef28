"""Extraction with several replicas on one database (docs/scale-out.md, "Extraction"): due times and
per-owner claims in the database, so an owner is extracted once whichever replicas buffered its turns.

Each "replica" is its own ``MemoryEngine`` (its own connections) on one database — a fresh PostgreSQL
database, and a SQLite file opened twice — with its own ``ExtractionService`` and replica id. Polls are
short through ``ExtractionSettings``; gaps and leases are long, and what "time passing" must do is done
on the database's clock (a lease ended by a renewal of -1 s, a budget that makes the owner due now), so
no outcome depends on how fast the machine runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.engine import MemoryEngine
from memory.model.protocol import Extraction, Turn
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Event, Fact, Memory
from memory.text.token_count import estimate_tokens

pytestmark = pytest.mark.both_stores

OWNER = "telegram:42"


class CountingModel:
    """A memory model that takes ``seconds`` per extraction (long enough for another replica's due time
    to come meanwhile), a fact per user turn worded per call (a second extraction of the same turns would
    add new memories, not merge into the old), and records every call. ``blocked``: never returns."""

    label = "counting"

    def __init__(self, seconds: float = 0.0, *, blocked: bool = False) -> None:
        self.seconds = seconds
        self.blocked = blocked
        self.calls: list[list[Turn]] = []

    async def extract(self, turns: list[Turn]) -> Extraction:
        self.calls.append(turns)
        if self.blocked:
            await asyncio.Event().wait()
        await asyncio.sleep(self.seconds)
        call = len(self.calls)
        facts = [Fact(content=f"{t.content} (call {call})") for t in turns if t.role == "user"]
        return Extraction(facts=facts, summary=f"summary of call {call}")

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        return []

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        return []

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        return []


class AlwaysFails(CountingModel):
    """A memory model whose every extraction fails (the model answered something unparseable)."""

    async def extract(self, turns: list[Turn]) -> Extraction:
        self.calls.append(turns)
        raise ValueError("invalid JSON from the model")


@pytest.fixture
async def engines(tmp_path: Path, memory_url: str) -> AsyncIterator[list[MemoryEngine]]:
    """Two engines on one database: two replicas' connections."""
    target: str | Path = memory_url or tmp_path / "memory.db"
    opened = [await MemoryEngine.open(target), await MemoryEngine.open(target)]
    try:
        yield opened
    finally:
        for engine in opened:
            with contextlib.suppress(Exception):
                await engine.close()


def _service(
    engine: MemoryEngine, model: CountingModel, replica: str, **settings: float
) -> ExtractionService:
    values = {"quiet_gap": 3600.0, "poll_interval": 0.05, "lease": 60.0, **settings}
    return ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(**values),  # type: ignore[arg-type]
        replica=replica,
    )


async def _record(service: ExtractionService, role: str, text: str) -> None:
    await service.record(OWNER, channel="telegram", chat_id="42", sender_id="42", role=role, content=text)


async def _wait(predicate, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


async def _buffer_empty(engine: MemoryEngine) -> bool:
    return (await engine.stats(OWNER))["buffered_turns"] == 0


async def _idle(*services: ExtractionService) -> None:
    for service in services:
        await service.idle()


async def test_turns_buffered_through_two_replicas_are_extracted_once(engines: list[MemoryEngine]) -> None:
    # The owner's messages reach both replicas in turn. Each turn pushes the owner's one due time, so
    # neither replica extracts before the quiet gap after the last turn, and the one that claims the
    # owner extracts every turn in one call; the other, polling meanwhile, finds the owner held.
    # The sixth turn brings the owner's buffered tokens to the budget: due then, not before.
    texts = [t for i in range(3) for t in (f"I keep bees on the roof, hive {i}", f"Noted, hive {i}.")]
    budget = sum(estimate_tokens(t) for t in texts)
    model = CountingModel(seconds=0.3)
    one, other = (_service(e, model, f"r{i}", token_budget=budget) for i, e in enumerate(engines, 1))
    try:
        for n, text in enumerate(texts):
            await _record(one if n % 2 == 0 else other, "user" if n % 2 == 0 else "assistant", text)
        await _wait(lambda: _buffer_empty(engines[0]))
        await _idle(one, other)  # nothing is left to extract: no poll can start another call
    finally:
        await one.close()
        await other.close()
    assert len(model.calls) == 1 and len(model.calls[0]) == 6
    memories = await engines[1].list(OWNER)
    assert sorted(m.content for m in memories) == sorted(
        f"I keep bees on the roof, hive {i} (call 1)" for i in range(3)
    )
    assert len(await engines[1].events.find(OWNER)) == 1
    assert await engines[0].store.extraction_due.get(OWNER) is None  # released and cleared


async def test_an_owner_held_by_another_replica_is_not_flushed_twice(engines: list[MemoryEngine]) -> None:
    # `/memory` on one replica while another extracts the owner: it waits for that extraction (within
    # its bound) instead of extracting the same turns again.
    slow, quick = CountingModel(seconds=0.4), CountingModel()
    one, other = _service(engines[0], slow, "r1"), _service(engines[1], quick, "r2")
    try:
        await _record(one, "user", "My sister is called Anna")
        first = asyncio.create_task(one.flush(OWNER))
        await _wait(lambda: _claimed_by(engines[1], "r1"))
        assert (await other.flush(OWNER, force=True)).turns == 0  # r1 holds the owner: nothing here
        assert await other.flush_now(OWNER, wait=30.0)  # waited for r1, then found nothing left (a ceiling)
        assert (await first).turns == 1
    finally:
        await one.close()
        await other.close()
    assert len(slow.calls) == 1 and quick.calls == []
    assert [m.content for m in await engines[1].list(OWNER)] == ["My sister is called Anna (call 1)"]


async def _claimed_by(engine: MemoryEngine, replica: str) -> bool:
    row = await engine.store.extraction_due.get(OWNER)
    return row is not None and row[1] == replica


async def test_a_dead_replicas_claim_is_taken_over_when_its_lease_runs_out(
    engines: list[MemoryEngine],
) -> None:
    # Replica r1 claims the owner and is extracting when it loses its database (it "dies": its model call
    # never returns, its lease is not renewed). Once the lease runs out, r2 claims the owner and extracts
    # the turns — still buffered, since they leave the buffer only when written — once.
    dead_model, live_model = CountingModel(blocked=True), CountingModel()
    dead = _service(engines[0], dead_model, "r1", quiet_gap=0.0)
    live = _service(engines[1], live_model, "r2")
    try:
        await _record(dead, "user", "I switched my editor to Helix")
        await _record(dead, "assistant", "Nice.")
        await _wait(lambda: _claimed_by(engines[1], "r1"))
        await _wait(lambda: _called(dead_model))
        await engines[0].close()  # r1 is cut off: no renewal, no release
        polls = _counted_polls(live)
        assert await live.start() == 1
        await _wait(lambda: _true(len(polls) >= 3))
        assert live_model.calls == [] and not any(polls)  # the lease still holds: poll after poll
        [[generation]] = await engines[1].store.db.read(  # type: ignore[attr-defined]
            "SELECT generation FROM extraction_due WHERE owner = ?", (OWNER,)
        )
        assert await engines[1].store.extraction_due.renew(OWNER, "r1", generation, -1.0)  # it runs out
        await _wait(lambda: _buffer_empty(engines[1]))
        await live.idle()
    finally:
        await live.close()
        await dead.close()
    assert len(live_model.calls) == 1 and len(live_model.calls[0]) == 2
    assert live.due.takeovers == 1
    assert [m.content for m in await engines[1].list(OWNER)] == ["I switched my editor to Helix (call 1)"]
    assert len(await engines[1].events.find(OWNER)) == 1
    assert await engines[1].store.extraction_due.get(OWNER) is None


async def _called(model: CountingModel) -> bool:
    return bool(model.calls)


async def _true(value: bool) -> bool:
    return value


def _counted_polls(service: ExtractionService) -> list[str | None]:
    """What each of ``service``'s polls for due owners claimed (None: nothing), from now on."""
    polls: list[str | None] = []
    claim_due = service.due.claim_due

    async def counted() -> str | None:
        owner = await claim_due()
        polls.append(owner)
        return owner

    service.due.claim_due = counted  # type: ignore[method-assign]
    return polls


async def test_the_token_budget_counts_turns_buffered_on_the_other_replica(
    engines: list[MemoryEngine],
) -> None:
    # Neither replica alone buffered the budget's worth of tokens; together they did. A per-process
    # count (this replica's turns only) would wait out the hour-long quiet gap.
    model = CountingModel()
    one, other = (_service(e, model, f"r{i}", token_budget=200) for i, e in enumerate(engines, 1))
    try:
        await _record(other, "user", "hi")  # r2 has seen this owner: a local count would start here
        await _record(one, "user", "word " * 100)  # ~125 tokens
        # under the budget: the quiet gap (an hour) applies — nobody's poll can find the owner due
        assert await engines[0].store.extraction_due.count_due() == 0 and model.calls == []
        await _record(other, "user", "another " * 100)  # ~125 more: over 200 across both replicas
        await _wait(lambda: _buffer_empty(engines[0]))
        await _idle(one, other)
    finally:
        await one.close()
        await other.close()
    assert sum(len(call) for call in model.calls) == 3  # budget-sized batches, each turn once


async def test_a_retry_is_due_in_the_database_for_any_replica(engines: list[MemoryEngine]) -> None:
    # r1's extraction fails and r1 stops; the retry time is the owner's due time in the database, so r2
    # retries it.
    failing, working = AlwaysFails(), CountingModel()
    one = _service(engines[0], failing, "r1", quiet_gap=0.0, retry_backoff=1.0)
    other = _service(engines[1], working, "r2")
    try:
        await _record(one, "user", "I moved to Lisbon in May")
        await _wait(lambda: _called(failing))
        await one.idle()
        await one.close()
        due = await engines[1].store.extraction_due.get(OWNER)
        assert due is not None and due[1] is None  # due at the retry time, held by nobody
        await other.start()
        try:
            await _wait(lambda: _buffer_empty(engines[1]))
        except AssertionError:  # failed once beside a second suite (load 12): say what r2 was left with
            row = await engines[1].store.extraction_due.get(OWNER)
            poller = other._poller
            sessions = []  # on PostgreSQL: a session left in a transaction would hide the row (SKIP LOCKED)
            if engines[1].store.db.kind == "postgresql":
                sessions = await engines[1].store.db.read(
                    "SELECT state, left(query, 80) FROM pg_stat_activity WHERE datname = current_database()"
                )
            raise AssertionError(
                f"r2 never emptied the buffer: due row {row}, model calls r1 {len(failing.calls)} "
                f"r2 {len(working.calls)}, r2 polling {poller is not None and not poller.done()}, "
                f"stats {await engines[1].stats(OWNER)}, sessions {sessions}"
            ) from None
        await other.idle()
    finally:
        await one.close()
        await other.close()
    assert len(failing.calls) == 1 and len(working.calls) == 1
    assert [m.content for m in await engines[1].list(OWNER)] == ["I moved to Lisbon in May (call 1)"]


async def test_a_retry_is_not_claimed_before_its_turns_are_due(engines: list[MemoryEngine]) -> None:
    # The failure is written a while after the batch failed (a busy machine or database: here 0.5 s,
    # before the failure's attempt count is read). The owner's due time must not come before its
    # turns' retry time, or the replica that claims it at the due time finds nothing due and puts the
    # owner off by its quiet gap (an hour here). Failed on both stores when the retry time was counted
    # from a clock reading taken before the write; r2 was left with the turn, due in an hour.
    failing, working = AlwaysFails(), CountingModel()
    one = _service(engines[0], failing, "r1", quiet_gap=0.0, retry_backoff=1.0)
    other = _service(engines[1], working, "r2")
    rows = one.buffer._rows
    attempts = rows.attempts

    async def slow_attempts(ids: list[int]) -> int:
        await asyncio.sleep(0.5)  # the failure is written late (a busy database)
        return await attempts(ids)

    rows.attempts = slow_attempts  # type: ignore[method-assign]
    try:
        await _record(one, "user", "I moved to Lisbon in May")
        await _wait(lambda: _called(failing))
        await one.idle()
        await one.close()
        await other.start()
        await _wait(lambda: _buffer_empty(engines[1]))
        await other.idle()
    finally:
        await one.close()
        await other.close()
    assert len(failing.calls) == 1 and len(working.calls) == 1
