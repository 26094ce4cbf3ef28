"""Scheduled memory jobs: cron times in the configured zone, runs recorded, missed runs caught up at start."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from gateway.scheduler import DAILY_JOB, SWEEP_JOB, WEEKLY_JOB, JobTimes, MemoryJobs
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.pipeline.job_log import JobLog

SHANGHAI = ZoneInfo("Asia/Shanghai")


def _jobs(engine: MemoryEngine) -> tuple[MemoryJobs, ExtractionService]:
    model = OfflineMemoryModel()
    extraction = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    return MemoryJobs(
        engine, extraction, model, job_log=JobLog(engine.store.jobs), tz=SHANGHAI, times=JobTimes()
    ), extraction


async def test_triggers_fire_at_the_configured_local_times(engine: MemoryEngine) -> None:
    jobs, extraction = _jobs(engine)
    await extraction.close()
    sunday_morning = datetime(2026, 11, 22, 10, 0, tzinfo=SHANGHAI)
    assert jobs.triggers[DAILY_JOB].get_next_fire_time(None, sunday_morning) == datetime(
        2026, 11, 23, 3, 0, tzinfo=SHANGHAI
    )
    assert jobs.triggers[WEEKLY_JOB].get_next_fire_time(None, sunday_morning) == datetime(
        2026, 11, 23, 4, 0, tzinfo=SHANGHAI
    )  # Monday 04:00 Shanghai, not 04:00 UTC


async def test_first_start_only_stamps_the_jobs(engine: MemoryEngine) -> None:
    jobs, extraction = _jobs(engine)
    try:
        assert await jobs.catch_up(datetime(2026, 11, 23, 12, 0, tzinfo=SHANGHAI)) == []
    finally:
        await extraction.close()
    runs = await JobLog(engine.store.jobs).all_runs()
    assert set(runs) == {SWEEP_JOB, DAILY_JOB, WEEKLY_JOB}


async def test_a_run_missed_while_down_runs_once_at_start(engine: MemoryEngine) -> None:
    log = JobLog(engine.store.jobs)
    now = datetime(2026, 11, 23, 12, 0, tzinfo=SHANGHAI)  # Monday noon
    # daily last ran Saturday 03:00 (Sunday's and Monday's runs were missed); weekly ran this Monday
    await log.record(DAILY_JOB, when=datetime(2026, 11, 21, 3, 0, tzinfo=SHANGHAI))
    await log.record(SWEEP_JOB, when=now - timedelta(hours=1))
    await log.record(WEEKLY_JOB, when=datetime(2026, 11, 23, 4, 0, tzinfo=SHANGHAI))
    await engine.events.add("alice", "I started learning Rust this week", event_date="2026-11-21")
    await engine.events.add("alice", "Met Bo at the climbing gym", event_date="2026-11-22")
    jobs, extraction = _jobs(engine)
    try:
        assert await jobs.catch_up(now) == [DAILY_JOB]  # once, not once per missed day
        assert await jobs.catch_up(now) == []  # recorded: a second start does not rerun it
    finally:
        await extraction.close()
    assert all(e.is_compressed for e in await engine.events.find("alice"))  # both missed days compressed
    last, status = (await log.all_runs())[DAILY_JOB]
    assert last > datetime(2026, 11, 23, tzinfo=UTC) - timedelta(days=1)
    assert "events" in status


async def test_the_scheduler_runs_a_due_job_and_records_it(engine: MemoryEngine) -> None:
    jobs, extraction = _jobs(engine)
    scheduler = jobs.start()
    try:
        scheduler.get_job(SWEEP_JOB).modify(next_run_time=datetime.now(SHANGHAI))
        scheduler.wakeup()
        async with asyncio.timeout(30):  # a ceiling: the job runs at once
            while SWEEP_JOB not in await JobLog(engine.store.jobs).all_runs():
                await asyncio.sleep(0.02)
    finally:
        jobs.shutdown()
        await extraction.close()


async def test_daily_job_sweeps_the_buffer_first(engine: MemoryEngine) -> None:
    jobs, extraction = _jobs(engine)
    try:
        await extraction.record(
            "alice",
            channel="console",
            chat_id="local",
            sender_id="local",
            role="user",
            content="My name is Alice and I live in Lisbon",
        )
        await jobs.run(DAILY_JOB)
    finally:
        await extraction.close()
    assert (await engine.stats())["buffered_turns"] == 0
    assert await engine.list("alice")  # the offline model kept the first-person facts


async def test_the_daily_job_deletes_turns_past_their_retention(engine: MemoryEngine) -> None:
    model = OfflineMemoryModel()
    extraction = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    now = datetime(2026, 11, 25, 3, 0, tzinfo=UTC)
    for age in (40, 20, 1):
        await engine.conversation.record(
            "alice",
            channel="console",
            chat_id="local",
            role="user",
            content=f"{age} days ago",
            now=now - timedelta(days=age),
        )
    keep_all = MemoryJobs(engine, extraction, model, job_log=JobLog(engine.store.jobs), tz=SHANGHAI)
    thirty = MemoryJobs(
        engine, extraction, model, job_log=JobLog(engine.store.jobs), tz=SHANGHAI, turn_retention_days=30
    )
    try:
        assert "deleted" not in await keep_all.daily(now)
        assert await engine.conversation.count("alice") == 3
        assert ", 1 old conversation turns deleted" in await thirty.daily(now)
    finally:
        await extraction.close()
    assert [h.turn.content for h in await engine.conversation.search("alice", "days ago", limit=5)] != []
    assert await engine.conversation.count("alice") == 2


async def test_jobs_every_gives_every_replica_the_same_short_periods(engine: MemoryEngine) -> None:
    # gateway.jobsEvery (trials): periods counted from a fixed origin, so two replicas started at
    # different moments claim the same (job, period) and one of them skips it.
    model = OfflineMemoryModel()
    extraction = ExtractionService(
        engine, ExtractionBuffer(engine.store.buffer), model, ExtractionSettings(quiet_gap=3600)
    )
    try:
        made = [
            MemoryJobs(
                engine,
                extraction,
                model,
                job_log=JobLog(engine.store.jobs),
                tz=SHANGHAI,
                times=JobTimes(every=2),
            )
            for _ in range(2)
        ]
        now = datetime(2026, 11, 23, 12, 0, 7, 500_000, tzinfo=UTC)
        periods = {jobs.period_of(name, now) for jobs in made for name in (SWEEP_JOB, DAILY_JOB, WEEKLY_JOB)}
        assert periods == {datetime(2026, 11, 23, 12, 0, 6, tzinfo=UTC)}
        assert made[0].period_of(SWEEP_JOB, now + timedelta(seconds=1)) == datetime(
            2026, 11, 23, 12, 0, 8, tzinfo=UTC
        )
    finally:
        await extraction.close()
