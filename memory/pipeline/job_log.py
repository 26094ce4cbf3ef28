"""When each scheduled memory job last ran, kept in SQLite so a run missed while down happens at start."""

from __future__ import annotations

from datetime import datetime

from memory.clock import from_db, to_db, utcnow
from memory.store.protocol import JobRowsAPI


class JobLog:
    """Last run time and outcome per job name, kept by the store (``memory/store/state.py``)."""

    def __init__(self, rows: JobRowsAPI) -> None:
        self._rows = rows  # the store's ``jobs``, handed over where the runtime is wired

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
