"""The extraction service: buffer first, quiet gap / token budget / sweep triggers, retries, dead letters.

The memory model here is a scripted implementation of our own ``MemoryModel`` protocol (no client library
is replaced); the OpenAI-backed model is exercised end to end in test_message_path.py.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory.clock import from_db
from memory.engine import MemoryEngine
from memory.model.protocol import Extraction, MemoryModelError, Turn
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Event, Fact, Memory

OWNER = "telegram:42"


class ScriptedModel:
    """Returns a fact per user turn, or raises while ``failures`` > 0."""

    label = "scripted"

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.calls: list[list[Turn]] = []

    async def extract(self, turns: list[Turn]) -> Extraction:
        self.calls.append(turns)
        if self.failures > 0:
            self.failures -= 1
            raise MemoryModelError("invalid JSON from the model")
        facts = [Fact(content=t.content) for t in turns if t.role == "user"]
        return Extraction(facts=facts, summary=f"talked about {len(facts)} things")

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        return []

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        return []

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        return []


async def _record(service: ExtractionService, role: str, text: str, owner: str = OWNER) -> None:
    await service.record(owner, channel="telegram", chat_id="42", sender_id="42", role=role, content=text)


async def _wait(predicate, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


async def test_quiet_gap_extracts_facts_and_summary(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(service, "user", "I keep my dotfiles in a private GitHub repo")
        await _record(service, "assistant", "Good idea.")
        assert (await engine.stats(OWNER))["buffered_turns"] == 2
        assert model.calls == []  # nothing before the gap
        # the gap ends (on the database's clock: a budget of 0 makes the owner due now)
        assert await engine.store.extraction_due.push(OWNER, 0, 3600)
        await _wait(lambda: _buffer_empty(engine))
        await service.idle()
    finally:
        await service.close()
    assert len(model.calls) == 1 and [t.role for t in model.calls[0]] == ["user", "assistant"]
    contents = [m.content for m in await engine.list(OWNER)]
    assert contents == ["I keep my dotfiles in a private GitHub repo"]
    (event,) = await engine.events.find(OWNER)
    assert event.summary == "talked about 1 things" and event.channel == "telegram"
    assert event.source_ref and event.source_ref.startswith("buffer:")


async def _buffer_empty(engine: MemoryEngine) -> bool:
    return (await engine.stats())["buffered_turns"] == 0


async def test_new_messages_restart_the_quiet_gap(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    try:
        due: list[str] = []
        for i in range(4):
            await _record(service, "user", f"fact number {i} about gardening")
            row = await engine.store.extraction_due.get(OWNER)
            assert row is not None
            due.append(row[0])
        assert due == sorted(due)  # each message pushed the due time to a gap from it (the store's clock)
        assert model.calls == [] and await engine.store.extraction_due.count_due() == 0
        await service.flush(OWNER)  # the quiet gap passes: one batch of every turn
        await _wait(lambda: _buffer_empty(engine))
        await service.idle()  # the buffer empties inside the batch's commit
    finally:
        await service.close()
    assert len(model.calls) == 1 and len(model.calls[0]) == 4


async def test_token_budget_triggers_at_once(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=3600, token_budget=200),
    )
    try:
        await _record(service, "user", "word " * 100)  # ~125 tokens: under the budget
        assert model.calls == [] and await engine.store.extraction_due.count_due() == 0  # due in an hour
        await _record(service, "user", "another " * 100)  # now over 200
        await _wait(lambda: _buffer_empty(engine))
        await service.idle()  # the buffer empties inside the batch's commit
    finally:
        await service.close()
    assert sum(len(c) for c in model.calls) == 2
    assert all(sum(len(t.content) for t in call) > 0 for call in model.calls)


async def test_batches_respect_the_token_budget(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=3600, token_budget=10_000),
    )
    try:
        for i in range(6):
            await _record(service, "user", f"sentence {i} " + "x" * 400)  # ~100 tokens each
        service.settings.token_budget = 250
        result = await service.flush(OWNER, force=True)
    finally:
        await service.close()
    assert result.turns == 6 and result.batches == 3
    assert [len(c) for c in model.calls] == [2, 2, 2]


async def test_failure_keeps_turns_and_retries_with_backoff(engine: MemoryEngine) -> None:
    model = ScriptedModel(failures=2)
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=0.05, retry_backoff=0.1, max_attempts=5),
    )
    try:
        await _record(service, "user", "My cat is called Miso")
        await _wait(lambda: _buffer_empty(engine))
        await service.idle()  # the buffer empties inside the batch's commit
    finally:
        await service.close()
    assert len(model.calls) == 3  # two failures, then success
    assert [m.content for m in await engine.list(OWNER)] == ["My cat is called Miso"]
    assert await service.buffer.dead_letters() == 0


async def test_repeated_failures_become_dead_letters_and_can_be_requeued(engine: MemoryEngine) -> None:
    model = ScriptedModel(failures=3)
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=0.02, retry_backoff=0.02, max_attempts=3),
    )
    try:
        await _record(service, "user", "I run the Berlin marathon every year")

        async def dead() -> bool:
            return await service.buffer.dead_letters() == 1

        await _wait(dead)
        await service.idle()
        assert len(model.calls) == 3  # no more attempts once dead: a dead turn is in no batch
        counts = await engine.stats()
        assert (counts["buffered_turns"], counts["dead_letters"]) == (0, 1)  # kept, never dropped
        skipped = await service.flush(OWNER, force=True)
        assert skipped.turns == 0 and len(model.calls) == 3  # dead letters are not retried by a flush
        assert await service.buffer.requeue_dead() == 1
        result = await service.flush(OWNER)
    finally:
        await service.close()
    assert result.turns == 1
    assert [m.content for m in await engine.list(OWNER)] == ["I run the Berlin marathon every year"]


async def test_buffer_survives_restart_mid_gap(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    engine = await MemoryEngine.open(path)
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), ScriptedModel(), ExtractionSettings(quiet_gap=0.3)
    )
    try:
        await _record(service, "user", "Remember that my passport expires in May")
    finally:
        await service.close()
        await engine.close()
    engine = await MemoryEngine.open(path)
    model = ScriptedModel()
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=0.3)
    )
    try:
        assert await service.start() == 1
        await _wait(lambda: _buffer_empty(engine))
        await service.idle()  # the buffer empties inside the batch's commit
    finally:
        await service.close()
        await engine.close()
    assert len(model.calls) == 1
    assert model.calls[0][0].content == "Remember that my passport expires in May"


async def test_gap_that_passed_while_down_extracts_at_start(engine: MemoryEngine) -> None:
    # A turn buffered ten minutes ago (this host's clock) whose due time never reached the database: the
    # process died between the two. At start its quiet gap has passed: it is extracted at once.
    clock_now = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    buffer = ExtractionBuffer(engine.store.buffer)
    await buffer.append(
        OWNER,
        channel="telegram",
        chat_id="42",
        sender_id="42",
        role="user",
        content="I switched my editor to Helix",
        now=clock_now,
    )
    later = clock_now + timedelta(minutes=10)
    model = ScriptedModel()
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=180),
        clock=lambda: later,
    )
    try:
        await service.start()
        await _wait(lambda: _buffer_empty(engine), timeout=30)
    finally:
        await service.close()
    assert len(model.calls) == 1


async def test_a_due_time_is_on_the_databases_clock_not_the_hosts(engine: MemoryEngine) -> None:
    # A host whose clock runs an hour ahead pushes a quiet gap of three minutes: the owner is due three
    # minutes from the database's now, not from the host's (nor, for a host behind, already).
    for offset in (timedelta(hours=1), -timedelta(hours=1)):
        service = ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            ScriptedModel(),
            ExtractionSettings(quiet_gap=180),
            clock=lambda offset=offset: datetime.now(UTC) + offset,
        )
        try:
            await _record(service, "user", "I switched my editor to Helix")
            assert await engine.store.extraction_due.count_due() == 0  # not due yet, whatever the host says
            row = await engine.store.extraction_due.get(OWNER)
            assert row is not None
            due_in = (from_db(row[0]) - datetime.now(UTC)).total_seconds()
            assert 120 < due_in <= 180
        finally:
            await service.close()


async def test_sweep_flushes_every_owner(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(service, "user", "alice likes tea", owner="user:alice")
        await _record(service, "user", "bob likes coffee", owner="user:bob")
        result = await service.sweep()
    finally:
        await service.close()
    assert result.turns == 2 and (await engine.stats())["buffered_turns"] == 0
    assert [m.content for m in await engine.list("user:alice")] == ["alice likes tea"]
    assert [m.content for m in await engine.list("user:bob")] == ["bob likes coffee"]


async def test_event_date_follows_the_configured_timezone(engine: MemoryEngine) -> None:
    late_evening_utc = datetime(2026, 11, 22, 20, 30, tzinfo=UTC)  # 04:30 next day in UTC+8
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        ScriptedModel(),
        ExtractionSettings(quiet_gap=3600),
        tz=timezone(timedelta(hours=8)),
        clock=lambda: late_evening_utc,
    )
    try:
        await _record(service, "user", "deployed the new release")
        await service.flush(OWNER)
    finally:
        await service.close()
    (event,) = await engine.events.find(OWNER)
    assert event.event_date == "2026-11-23"


async def test_a_bad_fact_does_not_sink_the_batch(engine: MemoryEngine) -> None:
    class OneBadFact(ScriptedModel):
        async def extract(self, turns: list[Turn]) -> Extraction:
            return Extraction(facts=[Fact(content="good fact about rust"), Fact(content="x", importance=7)])

    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), OneBadFact(), ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(service, "user", "irrelevant")
        result = await service.flush(OWNER)
    finally:
        await service.close()
    assert result.turns == 1 and result.facts == 1
    assert [m.content for m in await engine.list(OWNER)] == ["good fact about rust"]


@pytest.mark.parametrize("role", ["system", "tool", ""])
async def test_buffer_rejects_unknown_roles(engine: MemoryEngine, role: str) -> None:
    service = ExtractionService(engine, ExtractionBuffer(engine.store.buffer), ScriptedModel())
    try:
        with pytest.raises(ValueError, match="role"):
            await _record(service, role, "text")
    finally:
        await service.close()


# ------------------------------------------------------------------ extracting now (/new, /memory, exit)


class SlowModel(ScriptedModel):
    """A memory model that takes ``seconds`` per call (a remote model on a slow day)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    async def extract(self, turns: list[Turn]) -> Extraction:
        await asyncio.sleep(self.seconds)
        return await super().extract(turns)


async def test_flush_soon_extracts_at_once_even_turns_waiting_out_a_backoff(engine: MemoryEngine) -> None:
    model = ScriptedModel(failures=1)
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=3600, retry_backoff=3600),
    )
    try:
        await _record(service, "user", "I moved to Lisbon in May")
        await service.flush(OWNER)  # fails: the turn now waits an hour before its retry
        assert (await engine.stats(OWNER))["buffered_turns"] == 1
        service.flush_soon(OWNER)  # /new: the person is done with this conversation
        await service.idle()
    finally:
        await service.close()
    assert (await engine.stats(OWNER))["buffered_turns"] == 0
    assert [m.content for m in await engine.list(OWNER)] == ["I moved to Lisbon in May"]


async def test_flush_now_waits_for_the_owners_turns_and_says_whether_it_finished(
    engine: MemoryEngine,
) -> None:
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), ScriptedModel(), ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(service, "user", "My sister is called Anna")
        assert await service.flush_now(OWNER, wait=30.0)  # a ceiling: it returns when done
        assert [m.content for m in await engine.list(OWNER)] == ["My sister is called Anna"]
    finally:
        await service.close()


async def test_flush_now_that_runs_out_of_time_goes_on_in_the_background(engine: MemoryEngine) -> None:
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), SlowModel(0.3), ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(service, "user", "My sister is called Anna")
        assert not await service.flush_now(OWNER, wait=0.01)
        await service.idle()
        assert (await engine.stats(OWNER))["buffered_turns"] == 0
    finally:
        await service.close()


async def test_flush_all_extracts_every_owner_and_reports_each(engine: MemoryEngine) -> None:
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), ScriptedModel(), ExtractionSettings(quiet_gap=3600)
    )
    seen: list[tuple[str, int]] = []
    try:
        await _record(service, "user", "I play the cello", owner="telegram:1")
        await _record(service, "user", "I grow tomatoes", owner="telegram:2")
        await _record(service, "assistant", "Nice.", owner="telegram:2")
        result = await service.flush_all(5.0, lambda owner, one: seen.append((owner, one.turns)))
    finally:
        await service.close()
    assert sorted(seen) == [("telegram:1", 1), ("telegram:2", 2)]
    assert (result.turns, result.facts, result.events) == (3, 2, 2)
    assert (await engine.stats())["buffered_turns"] == 0


async def test_flush_all_out_of_time_leaves_the_turns_buffered_for_the_next_start(
    engine: MemoryEngine,
) -> None:
    service = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), SlowModel(5.0), ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(service, "user", "I play the cello")
        result = await service.flush_all(0.05)
    finally:
        await service.close()
    assert result.turns == 0
    assert (await engine.stats(OWNER))["buffered_turns"] == 1  # kept, not lost
    restarted = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), ScriptedModel(), ExtractionSettings(quiet_gap=0.01)
    )
    try:
        assert await restarted.start() == 1
        await _wait(lambda: _buffer_empty(engine))
        await restarted.idle()
    finally:
        await restarted.close()
    assert [m.content for m in await engine.list(OWNER)] == ["I play the cello"]


# ---------------------------------------------------------------------- a batch commits all or nothing


class RewordingModel(ScriptedModel):
    """Words the same facts differently on every call, as a real model does: a re-run after a crash that
    wrote its facts would add near-duplicates the write-time dedup cannot see."""

    async def extract(self, turns: list[Turn]) -> Extraction:
        self.calls.append(turns)
        call = len(self.calls)
        facts = [Fact(content=f"{t.content} (noted, take {call})") for t in turns if t.role == "user"]
        return Extraction(facts=facts, summary=f"summary, take {call}")


@pytest.mark.both_stores
@pytest.mark.parametrize("failing", ["memories.insert", "events.add", "buffer.remove", "events.link_facts"])
async def test_a_crash_inside_the_commit_leaves_nothing_written_and_the_turns_buffered(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    # The process "dies" at one statement of the batch's commit (the second fact, the summary, the
    # removal of the turns, or the episode's fact ids); a re-run words the facts differently and must not
    # add them twice.
    model = RewordingModel()
    # A long backoff: the re-run is the forced flush below, not a retry timer racing it (on a slower
    # store the timer could win and the flush would find the turns already extracted).
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=3600, retry_backoff=3600),
    )
    part, method = failing.split(".")
    rows = getattr(engine.store, part)
    real = getattr(rows, method)
    calls = 0

    async def fail_once(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == (2 if failing == "memories.insert" else 1):
            raise OSError("disk I/O error")
        return await real(*args, **kwargs)

    texts = ("I play the cello", "I grow tomatoes", "I speak Finnish")
    try:
        for text in texts:
            await _record(service, "user", text)
        monkeypatch.setattr(rows, method, fail_once)
        first = await service.flush(OWNER, force=True)
        assert first.failed == 1
        assert (
            await engine.list(OWNER) == [] and await engine.events.find(OWNER) == []
        )  # nothing half-written
        assert (await engine.stats(OWNER))["buffered_turns"] == 3  # the turns are still there
        monkeypatch.setattr(rows, method, real)
        again = await service.flush(OWNER, force=True)
    finally:
        await service.close()
    assert again.turns == 3 and again.facts == 3
    assert sorted(m.content for m in await engine.list(OWNER)) == sorted(
        f"{t} (noted, take 2)" for t in texts
    )
    assert [e.summary for e in await engine.events.find(OWNER)] == ["summary, take 2"]
    assert (await engine.events.find(OWNER))[0].fact_ids == sorted(m.id for m in await engine.list(OWNER))
    assert (await engine.stats(OWNER))["buffered_turns"] == 0


class MeetingRewordingModel(RewordingModel):
    """Each call waits until two have begun: both runs have read the batch before either commits."""

    async def extract(self, turns: list[Turn]) -> Extraction:
        extraction = await super().extract(turns)
        async with asyncio.timeout(30):
            while len(self.calls) < 2:
                await asyncio.sleep(0.01)
        return extraction


async def test_a_batch_another_run_already_committed_is_not_written_twice(engine: MemoryEngine) -> None:
    # Two runs extract the same turns at once (say the gateway's sweep and `tierclaw memory flush`): the
    # first commit claims the turns, the second finds them gone and writes nothing.
    model = MeetingRewordingModel()
    one = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    other = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    try:
        await _record(one, "user", "I play the cello")
        results = await asyncio.gather(one.flush(OWNER, force=True), other.flush(OWNER, force=True))
    finally:
        await one.close()
        await other.close()
    assert len(model.calls) == 2  # both really ran
    assert sorted(r.facts for r in results) == [0, 1] and all(r.failed == 0 for r in results)
    assert len(await engine.list(OWNER)) == 1 and len(await engine.events.find(OWNER)) == 1
    assert (await engine.stats(OWNER))["buffered_turns"] == 0
