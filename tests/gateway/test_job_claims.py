"""Scheduled jobs once per period across replicas (gateway/scheduler.py, docs/scale-out.md): two
``MemoryJobs`` on one PostgreSQL database, each with its own replica id, as two gateways would have."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest

from gateway.scheduler import DAILY_JOB, SWEEP_JOB, WEEKLY_JOB, MemoryJobs
from memory.clock import to_db
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.pipeline.job_log import JobLog
from tests.support.waiting import until


class Replica:
    """One gateway's memory jobs on its own engine (its own pool) over the shared database.

    ``asked`` counts, per job, the claims answered so far (this replica's and the others' sharing the
    counter); a run holds until ``release(job)`` is true, so a test can keep the winner's run going until
    the other ask was answered — the overlap the test is about, however slow the machine."""

    def __init__(self, engine: MemoryEngine, name: str, asked: Counter[str]) -> None:
        model = OfflineMemoryModel()
        self.engine = engine
        self.extraction = ExtractionService(
            engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
        )
        self.takeovers = 0
        self.jobs = MemoryJobs(
            engine,
            self.extraction,
            model,
            job_log=JobLog(engine.store.jobs, engine.store.job_claims),
            tz=UTC,
            replica=name,
            on_takeover=self._counted,
        )
        self.ran: list[str] = []
        self.asked = asked
        self.release: Callable[[str], bool] = lambda job: True
        for job, work in list(self.jobs._jobs.items()):
            self.jobs._jobs[job] = self._counting(job, work)
        claim = self.jobs.log.claim

        async def counted_claim(job: str, *args, **kwargs):  # type: ignore[no-untyped-def]
            try:
                return await claim(job, *args, **kwargs)
            finally:
                self.asked[job] += 1

        self.jobs.log.claim = counted_claim  # type: ignore[method-assign]

    def _counted(self) -> None:
        self.takeovers += 1

    def _counting(self, job: str, work):  # type: ignore[no-untyped-def]
        async def run() -> str:
            self.ran.append(job)
            await until(lambda: self.release(job), what=f"the other ask of {job} answered")
            return await work()

        return run


@pytest.fixture
async def replicas(postgres_url: str) -> AsyncIterator[tuple[Replica, Replica]]:
    engines = [await MemoryEngine.open(postgres_url) for _ in range(2)]
    asked: Counter[str] = Counter()
    pair = (Replica(engines[0], "r1", asked), Replica(engines[1], "r2", asked))
    try:
        yield pair
    finally:
        for replica in pair:
            await replica.extraction.close()
            await replica.engine.close()


async def test_two_replicas_firing_the_same_period_run_it_once(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    period = a.jobs.period_of(SWEEP_JOB)
    assert period == b.jobs.period_of(SWEEP_JOB) and period <= datetime.now(UTC)
    a.release = b.release = lambda job: a.asked[job] == 2  # the winner runs on until the loser was told no
    outcomes = await asyncio.gather(
        a.jobs.run_period(SWEEP_JOB, period), b.jobs.run_period(SWEEP_JOB, period)
    )
    assert sum(outcome is not None for outcome in outcomes) == 1
    assert len(a.ran) + len(b.ran) == 1
    [(stored_period, holder, done_at, status)] = await a.engine.store.job_claims.of_job(SWEEP_JOB)
    assert stored_period == to_db(period) and holder in ("r1", "r2") and done_at and status == "ok"
    # the next period is a new claim
    a.release = b.release = lambda job: True
    later = period + timedelta(days=1)
    assert await b.jobs.run_period(SWEEP_JOB, later) is not None
    assert await a.jobs.run_period(SWEEP_JOB, later) is None


async def test_one_replica_asked_twice_for_one_period_at_once_runs_it_once(
    replicas: tuple[Replica, Replica],
) -> None:
    # At start a catch-up and the scheduler's own run of the same period can come together: the claim is
    # this replica's both times (as after a restart under its own id), so the process itself says no.
    a, _ = replicas
    period = a.jobs.period_of(SWEEP_JOB)
    asks = [asyncio.create_task(a.jobs.run_period(SWEEP_JOB, period)) for _ in range(2)]
    a.release = lambda job: any(ask.done() for ask in asks)  # the first run holds until the second is refused
    outcomes = await asyncio.gather(*asks)
    assert sum(outcome is not None for outcome in outcomes) == 1 and a.ran == [SWEEP_JOB]


async def test_two_replicas_catching_up_at_once_run_each_missed_job_once(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    long_ago = datetime.now(UTC) - timedelta(days=10)
    for job in (SWEEP_JOB, DAILY_JOB, WEEKLY_JOB):
        await a.jobs.log.record(job, when=long_ago)
    # each job's run goes on until both replicas' asks for it were answered (both iterate the jobs in one
    # order, so the one behind reaches the job its peer is holding)
    a.release = b.release = lambda job: a.asked[job] == 2
    ran_a, ran_b = await asyncio.gather(a.jobs.catch_up(), b.jobs.catch_up())
    assert sorted(ran_a + ran_b) == sorted([SWEEP_JOB, DAILY_JOB, WEEKLY_JOB])
    assert sorted(a.ran + b.ran) == sorted([SWEEP_JOB, DAILY_JOB, WEEKLY_JOB])


async def test_a_run_whose_replica_died_is_taken_over_and_a_live_one_is_not(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    claims = a.engine.store.job_claims
    dead_period = a.jobs.period_of(DAILY_JOB) - timedelta(days=1)
    live_period = a.jobs.period_of(DAILY_JOB)
    # a replica that died mid-run: its lease ran out a minute ago; another still working on its run
    assert await claims.claim(DAILY_JOB, to_db(dead_period), "dead", -60.0)
    assert await claims.claim(DAILY_JOB, to_db(live_period), "alive", 540.0)

    taken = await b.jobs.take_over_stale()
    assert taken == [f"{DAILY_JOB}@{dead_period.astimezone(UTC).isoformat()}"]
    assert b.ran == [DAILY_JOB] and b.takeovers == 1
    rows = {period: (holder, done_at) for period, holder, done_at, _ in await claims.of_job(DAILY_JOB)}
    assert rows[to_db(dead_period)][0] == "r2" and rows[to_db(dead_period)][1] is not None
    assert rows[to_db(live_period)] == ("alive", None)  # the live run is left to its replica
    assert await a.jobs.take_over_stale() == [] and a.ran == []
