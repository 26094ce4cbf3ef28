"""When each scheduled memory job last ran, kept in the database so a run missed while down happens at
start; and which replica runs each job's period (claims with a lease), so several gateways on one
database run each period once (docs/scale-out.md, "Scheduled jobs")."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory.clock import from_db, to_db, utcnow
from memory.store.coordination_api import JobClaimRowsAPI
from memory.store.protocol import JobRowsAPI


class JobLog:
    """Last run time and outcome per job name, kept by the store (``memory/store/job_runs.py``), and the
    per-period claims (``claims``: the store's ``job_claims``; None = no other process to share with,
    every claim succeeds)."""

    def __init__(self, rows: JobRowsAPI, claims: JobClaimRowsAPI | None = None) -> None:
        self._rows = rows  # the store's ``jobs``, handed over where the runtime is wired
        self._claims = claims

    async def last_run(self, job: str) -> datetime | None:
        """When ``job`` last ran (aware UTC), or None if it never did."""
        stored = await self._rows.last_run(job)
        return from_db(stored) if stored is not None else None

    async def record(self, job: str, status: str = "ok", when: datetime | None = None) -> None:
        """Remember that ``job`` ran at ``when`` (default now) with ``status`` ("ok" or an error summary)."""
        await self._rows.record(job, to_db(when or utcnow()), status[:200])

    async def all_runs(self) -> dict[str, tuple[datetime, str]]:
        """Every job's last run and status (for ``tierclaw status``)."""
        return {job: (from_db(when), status) for job, when, status in await self._rows.all()}

    # ----------------------------------------------------------------- claims per period

    async def claim(self, job: str, period: datetime, replica: str, lease: timedelta) -> int | None:
        """Take ``job``'s run for ``period`` (its scheduled fire time) for ``replica``, leased for
        ``lease`` (on the store's clock); the claim's generation, or None when another replica holds it
        or the period's run is done."""
        if self._claims is None:
            return 1
        return await self._claims.claim(job, to_db(period), replica, lease.total_seconds())

    async def renew(
        self, job: str, period: datetime, replica: str, generation: int, lease: timedelta
    ) -> bool:
        """Extend the lease of a run still going; False when the claim was lost."""
        if self._claims is None:
            return True
        return await self._claims.renew(job, to_db(period), replica, generation, lease.total_seconds())

    async def finish(self, job: str, period: datetime, replica: str, generation: int, status: str) -> bool:
        """Mark the period's run done; False when another replica had taken it over."""
        if self._claims is None:
            return True
        return await self._claims.finish(job, to_db(period), replica, generation, status[:200])

    async def stale(self) -> list[tuple[str, datetime, str]]:
        """(job, period, claimed_by) of runs cut short: not done, lease run out."""
        if self._claims is None:
            return []
        return [(job, from_db(period), by) for job, period, by in await self._claims.stale()]
