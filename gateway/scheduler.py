"""Scheduled memory jobs on apscheduler's AsyncIOScheduler, with catch-up of runs missed while down.

Three jobs, times in the configured timezone: the extraction sweep (``memory.extraction.dailyFlush``),
the daily compression (``memory.compression.daily``: yesterday's Tier 3 → Tier 2, after a sweep) and the
weekly deep compression (``memory.compression.weeklyDay`` + ``weekly``). Each run is recorded in the
``job_runs`` table; at start, a job whose next fire time after its last run is already past runs once
(docs/architecture.md, "Extraction and compression"; the in-memory job store alone would silently skip it).

Several gateways on one database each keep their own clock, and each scheduled run (and each catch-up)
first claims its job and period in the database (``JobLog.claim``: one row per job and fire time, with
this replica's id and a lease renewed while the run goes on): the first replica runs it, the others skip.
A run cut short (its replica died, the lease ran out) is taken over by another replica's periodic check
(``take_over_stale``) and finished. On SQLite the same path runs, trivially in one process
(docs/scale-out.md, "Scheduled jobs").

For trials, ``gateway.jobsEvery`` makes every job fire every few seconds instead (``JobTimes.every``), so
``bench.replicas`` sees many periods in a minute and counts, from each run's "job X of PERIOD ran here"
log line, whether any period ran twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from memory.clock import utcnow
from memory.engine import MemoryEngine
from memory.model.protocol import MemoryModel, Turn
from memory.pipeline.compression import CompressionReport, daily_compress, weekly_compress
from memory.pipeline.extraction import ExtractionService
from memory.pipeline.job_log import JobLog
from memory.records import Event
from memory.scratchpad import fit

log = logging.getLogger("tierclaw.gateway")

SWEEP_JOB = "extraction_sweep"
DAILY_JOB = "daily_compress"
WEEKLY_JOB = "weekly_compress"
JOB_LEASE = timedelta(minutes=10)  # a claimed run renews it every third of it; a dead replica's ends


@dataclass(slots=True)
class JobTimes:
    """When the jobs run: "HH:MM" strings and a weekday (mon..sun)."""

    sweep: str = "03:00"
    daily: str = "03:00"
    weekly_day: str = "mon"
    weekly: str = "04:00"
    # gateway.jobsEvery (trials only): every job fires every this many seconds instead, on fire times
    # aligned to a fixed origin, so every replica computes the same periods (bench.replicas runs many
    # periods of each job in a minute to count duplicated runs).
    every: float | None = None


EVERY_ORIGIN = datetime(2000, 1, 1, tzinfo=UTC)  # where ``every`` counts its periods from
TAKE_OVER_JOB = "take_over_stale"  # the check for runs another replica left unfinished


def episode_line(event: Event) -> str:
    """One episode as a line for the scratchpad's nightly refresh."""
    parts = [f"(episode of {event.event_date}) {event.summary}"]
    if event.goal:
        parts.append(f"goal: {event.goal}")
    if event.outcome:
        parts.append(f"outcome: {event.outcome}")
    return "; ".join(parts)


def _cron(at: str, tz: tzinfo, day_of_week: str | None = None) -> CronTrigger:
    hour, minute = (int(part) for part in at.split(":"))
    # timezone= must be given: a CronTrigger built without it uses the machine's zone, not the scheduler's.
    return CronTrigger(hour=hour, minute=minute, day_of_week=day_of_week, timezone=tz)


class MemoryJobs:
    """The memory jobs, runnable by the scheduler, at start (catch-up) or by hand (CLI)."""

    def __init__(
        self,
        engine: MemoryEngine,
        extraction: ExtractionService,
        model: MemoryModel,
        *,
        job_log: JobLog,
        tz: tzinfo,
        times: JobTimes | None = None,
        embedding_cache_days: int = 90,
        turn_retention_days: int | None = None,
        replica: str = "local",
        lease: timedelta = JOB_LEASE,
        on_takeover: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.replica = replica  # gateway.replicaId: who holds a claim (gateway/replica.py)
        self.lease = lease
        self.on_takeover = on_takeover  # counts tierclaw_lease_takeovers_total (gateway/metrics.py)
        self.embedding_cache_days = embedding_cache_days
        self.turn_retention_days = turn_retention_days
        self.extraction = extraction
        self.model = model
        self.tz = tz
        self.times = times or JobTimes()
        self.log = job_log  # on the store's ``jobs``, handed over where the runtime is wired
        self.triggers: dict[str, CronTrigger | IntervalTrigger] = {
            SWEEP_JOB: _cron(self.times.sweep, tz),
            DAILY_JOB: _cron(self.times.daily, tz),
            WEEKLY_JOB: _cron(self.times.weekly, tz, self.times.weekly_day),
        }
        # How far back period_of looks for the latest fire time: every trigger fires at least weekly.
        self._lookback = timedelta(days=8)
        if self.times.every is not None:
            every = self.times.every
            for name in self.triggers:
                self.triggers[name] = IntervalTrigger(seconds=every, start_date=EVERY_ORIGIN, timezone=tz)
            self._lookback = timedelta(seconds=2 * every)
        self._jobs: dict[str, Callable[[], Awaitable[str]]] = {
            SWEEP_JOB: self.sweep,
            DAILY_JOB: self.daily,
            WEEKLY_JOB: self.weekly,
        }
        self._scheduler: AsyncIOScheduler | None = None
        self._running_periods: set[tuple[str, datetime]] = set()  # (job, period) runs going on here
        # The scheduled runs going on now, by job; a job's next run while one is going on is skipped here
        # (one INFO line per long run) rather than by apscheduler (a WARNING at every overlap).
        self._running: dict[str, asyncio.Task[None]] = {}
        self._said_skipping: set[str] = set()
        self._stopping = False

    # ----------------------------------------------------------------- the jobs

    async def sweep(self) -> str:
        """Extract every owner's buffer now (the daily sweep)."""
        result = await self.extraction.sweep()
        return f"{result.turns} turns extracted, {result.failed} failed batches"

    async def daily(self, now: datetime | None = None) -> str:
        """Sweep, then compress yesterday's (and any older uncompressed) Tier 3 events into Tier 2."""
        await self.extraction.sweep()
        yesterday = (now or utcnow()).astimezone(self.tz).date() - timedelta(days=1)
        report = await daily_compress(self.engine, self.model, yesterday)
        refreshed = await self._refresh_scratchpads(yesterday.isoformat())
        pruned = f", {refreshed} scratchpads refreshed" if refreshed else ""
        if self.turn_retention_days is not None:  # memory.turnRetentionDays: older turns are deleted
            count = await self.engine.conversation.prune(self.turn_retention_days, now)
            pruned += f", {count} old conversation turns deleted"
        done = f"{report.events_compressed} events -> {report.facts_written} facts{pruned}"
        return done + _failures(report)

    async def _refresh_scratchpads(self, day: str) -> int:
        """Each person with episodes on ``day`` gets their scratchpad rewritten from them (what happened
        that day, goals and outcomes), so that finished things drop out; returns how many changed."""
        if not self.extraction.settings.scratchpad:
            return 0
        changed = 0
        for owner in await self.engine.owners():
            episodes = await self.engine.events.find(owner, since=day, until=day, limit=50)
            if not episodes:
                continue
            lines = [Turn("user", episode_line(e), e.ended_at or e.created_at) for e in reversed(episodes)]
            try:
                current = await self.engine.scratchpad.get(owner)
                new = await self.model.update_scratchpad(current.content, lines)
                if fit(new) != current.content:
                    await self.engine.scratchpad.put(owner, new)
                    changed += 1
            except Exception as exc:  # the note is a convenience: the job goes on
                log.warning("[memory] nightly scratchpad failed for owner=%s: %s", owner, type(exc).__name__)
        return changed

    async def weekly(self, now: datetime | None = None) -> str:
        """Merge large partitions, refresh the Tier 1 profile, archive decayed temp/debug memories."""
        report = await weekly_compress(self.engine, self.model, now)
        evicted = ""
        evict = getattr(self.engine.embedder, "evict", None)
        if evict is not None:  # vectors of texts nobody embedded for cacheDays: old drafts, other models
            count = await evict(timedelta(days=self.embedding_cache_days), now)
            evicted = f", {count} cached vectors evicted"
        return (
            f"{report.partitions_merged} partitions merged ({report.groups_merged} groups of similar "
            f"entries), {report.profile_entries} profile entries, "
            f"{report.archived} archived{evicted}" + _failures(report)
        )

    async def run(self, name: str) -> str:
        """Run one job now and record the run; returns its one-line outcome."""
        try:
            outcome = await self._jobs[name]()
        except Exception as exc:
            log.exception("[gateway] job %s failed", name)
            await self.log.record(name, f"failed: {type(exc).__name__}: {exc}")
            raise
        await self.log.record(name, outcome)
        log.info("[gateway] job %s: %s", name, outcome)
        return outcome

    # ----------------------------------------------------------------- scheduling

    async def catch_up(self, now: datetime | None = None) -> list[str]:
        """Run once each job whose scheduled time passed since its last run; returns their names.

        A job that never ran is only stamped (a fresh install does not compress at first start).
        """
        now = now or utcnow().astimezone(self.tz)
        ran: list[str] = []
        for name, trigger in self.triggers.items():
            last = await self.log.last_run(name)
            if last is None:
                await self.log.record(name, "scheduled", when=now)
                continue
            # get_next_fire_time is inclusive of the moment given: start just after the last run.
            due = trigger.get_next_fire_time(None, last.astimezone(self.tz) + timedelta(seconds=1))
            if due is not None and due <= now:
                period = self.period_of(name, now)
                log.info("[gateway] job %s missed its run at %s; running it now", name, due.isoformat())
                # The claim is on the latest missed fire time: a replica catching up and another's
                # scheduled run of that time share one claim. A failure is logged and recorded; the
                # scheduler tries again next period.
                if await self.run_period(name, period) is not None:
                    ran.append(name)
        return ran

    def period_of(self, name: str, now: datetime | None = None) -> datetime:
        """The period a run of ``name`` at ``now`` serves: its latest scheduled fire time at or before
        ``now`` (every replica computes the same one for the same schedule)."""
        now = (now or utcnow()).astimezone(self.tz)
        trigger = self.triggers[name]
        period: datetime | None = None
        moment: datetime | None = now - self._lookback
        while moment is not None:
            moment = trigger.get_next_fire_time(None, moment)
            if moment is None or moment > now:
                break
            period = moment
            moment = moment + timedelta(seconds=1)
        return period if period is not None else now.replace(microsecond=0)

    async def run_period(self, name: str, period: datetime) -> str | None:
        """Run ``name`` for ``period`` if this replica claims it; its outcome, or None when another
        replica holds or finished that period, took the run over (this one stalled past its lease: the
        run is stopped and not marked done), or the run failed (logged and recorded)."""
        # a catch-up and the scheduled run of one period, here at once
        if (name, period) in self._running_periods:
            log.info("[gateway] job %s of %s: already running here, skipped", name, period.isoformat())
            return None
        self._running_periods.add((name, period))
        try:
            return await self._run_claimed(name, period)
        finally:
            self._running_periods.discard((name, period))

    async def _run_claimed(self, name: str, period: datetime) -> str | None:
        generation = await self.log.claim(name, period, self.replica, self.lease)
        if generation is None:
            log.info("[gateway] job %s of %s: claimed by another replica, skipped", name, period.isoformat())
            return None
        run = asyncio.create_task(self.run(name), name=f"job-{name}")
        lost = asyncio.Event()
        keeper = asyncio.create_task(
            self._keep_lease(name, period, generation, run, lost), name=f"lease-{name}"
        )
        status, outcome = "ok", None
        try:
            outcome = await run
            # One line per run and period: bench.replicas counts the periods run twice from these.
            log.info("[gateway] job %s of %s ran here", name, period.isoformat())
        except asyncio.CancelledError:
            if not lost.is_set():
                raise  # shutdown: the claim stays open, its lease runs out, another takes over
            log.warning(
                "[gateway] job %s of %s: another replica took the run over (this one stalled past its "
                "lease); stopped here",
                name,
                period.isoformat(),
            )
            return None
        except Exception as exc:  # run() logged and recorded it; the period is over all the same
            status = f"failed: {type(exc).__name__}"
        finally:
            keeper.cancel()
        if not await self.log.finish(name, period, self.replica, generation, status):
            log.warning("[gateway] job %s of %s was taken over by another replica", name, period.isoformat())
        return outcome

    async def _keep_lease(
        self, name: str, period: datetime, generation: int, run: asyncio.Task[str], lost: asyncio.Event
    ) -> None:
        """Renew the run's claim every third of the lease; when it was taken over, stop the run."""
        while True:
            await asyncio.sleep(self.lease.total_seconds() / 3)
            try:
                kept = await self.log.renew(name, period, self.replica, generation, self.lease)
            except Exception:  # the database is away: the next round tries again
                continue
            if not kept:
                lost.set()
                run.cancel()
                return

    async def take_over_stale(self) -> list[str]:
        """Finish the runs other replicas claimed and did not finish before their lease ran out (they
        died or stalled); returns "job@period" of each run taken over."""
        taken: list[str] = []
        for name, period, holder in await self.log.stale():
            if name not in self._jobs:
                continue
            log.warning(
                "[gateway] job %s of %s: replica %s's lease ran out; taking it over",
                name,
                period.isoformat(),
                holder,
            )
            if self.on_takeover is not None:
                self.on_takeover()
            await self.run_period(name, period.astimezone(self.tz))
            taken.append(f"{name}@{period.isoformat()}")
        return taken

    def start(self) -> AsyncIOScheduler:
        """Start the scheduler on the running loop."""
        # max_instances 2: a run that comes while the last one still runs reaches ``_once``, which skips
        # it quietly; with 1, apscheduler would refuse it with a warning every period.
        scheduler = AsyncIOScheduler(
            timezone=self.tz,
            job_defaults={"coalesce": True, "misfire_grace_time": 6 * 3600, "max_instances": 2},
        )
        for name, trigger in self.triggers.items():
            scheduler.add_job(
                self._once, trigger, args=[name, self._scheduled], id=name, name=name, replace_existing=True
            )
        scheduler.add_job(
            self._once,
            IntervalTrigger(seconds=max(self.lease.total_seconds() / 2, 1), timezone=self.tz),
            args=[TAKE_OVER_JOB, self._take_over],
            id=TAKE_OVER_JOB,
            name=TAKE_OVER_JOB,
            replace_existing=True,
        )
        scheduler.start()
        self._scheduler = scheduler
        return scheduler

    async def _once(self, name: str, body: Callable[[str], Awaitable[None]]) -> None:
        """Run ``body(name)`` unless a run of ``name`` is still going on: then this one is skipped, said
        once per long run at INFO (a slow database under load makes a job overlap its next period)."""
        if name in self._running:
            level = logging.DEBUG if name in self._said_skipping else logging.INFO
            self._said_skipping.add(name)
            log.log(level, "[gateway] job %s is still running; its next run is skipped", name)
            return
        task = asyncio.current_task()
        assert task is not None
        self._running[name] = task
        try:
            await body(name)
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            # ended by ``stop``: done, not a failure (apscheduler logs a traceback for a raised one)
        finally:
            self._running.pop(name, None)
            self._said_skipping.discard(name)

    async def _scheduled(self, name: str) -> None:
        # run() has logged and recorded a failure; re-raising would only reach apscheduler's own log.
        with contextlib.suppress(Exception):
            await self.run_period(name, self.period_of(name))

    async def _take_over(self, _name: str = TAKE_OVER_JOB) -> None:
        try:
            await self.take_over_stale()
        except Exception as exc:  # the database is away: the next check tries again
            log.warning("[gateway] checking for abandoned job runs failed: %s", type(exc).__name__)

    def next_runs(self) -> dict[str, datetime | None]:
        """Next fire time of each job (for status)."""
        now = utcnow().astimezone(self.tz)
        return {name: trigger.get_next_fire_time(None, now) for name, trigger in self.triggers.items()}

    def shutdown(self) -> None:
        """Stop the scheduler: no new run starts (``stop`` also ends the runs going on)."""
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        self._scheduler = None

    async def stop(self) -> None:
        """Stop the scheduler and end the runs going on, before the database they use is closed: a run
        cut off by a closing database would log a traceback, a PostgreSQL statement cut off at the end
        of the event loop psycopg's "query cancellation" warnings. A run cancelled here is not recorded
        as done; its claim's lease runs out and it runs again (here at the next start, or on another
        replica)."""
        self._stopping = True
        # Paused first, shut down once the runs ended: apscheduler's shutdown runs a loop step later and
        # cancels the runs' tasks again, which, landing in psycopg's cancel of a running statement (under
        # load), makes it give up, warn and drop the connection.
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.pause()
        while self._running:  # a run submitted just before the pause starts while these end
            running = list(self._running.values())
            for task in running:
                task.cancel()
            for task in running:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self.shutdown()


def _failures(report: CompressionReport) -> str:
    return f", {len(report.failures)} owners failed" if report.failures else ""
