"""When each scheduled memory job last ran, kept in SQLite so a run missed while down happens at start."""

from __future__ import annotations

from datetime import datetime

from memory.clock import from_db, to_db, utcnow
from memory.engine import MemoryEngine


class JobLog:
    """Last run time and outcome per job name, on the engine's connection."""

    def __init__(self, engine: MemoryEngine) -> None:
        self._engine = engine

    async def last_run(self, job: str) -> datetime | None:
        """When ``job`` last ran (aware UTC), or None if it never did."""
        rows = await self._engine.fetchall("SELECT last_run FROM job_runs WHERE job = ?", (job,))
        return from_db(rows[0][0]) if rows else None

    async def record(self, job: str, status: str = "ok", when: datetime | None = None) -> None:
        """Remember that ``job`` ran at ``when`` (default now) with ``status`` ("ok" or an error summary)."""
        await self._engine.execute_write(
            "INSERT INTO job_runs (job, last_run, last_status) VALUES (?, ?, ?) "
            "ON CONFLICT(job) DO UPDATE SET last_run = excluded.last_run, last_status = excluded.last_status",
            (job, to_db(when or utcnow()), status[:200]),
        )

    async def all_runs(self) -> dict[str, tuple[datetime, str]]:
        """Every job's last run and status (for ``tierclaw status``)."""
        rows = await self._engine.fetchall("SELECT job, last_run, last_status FROM job_runs ORDER BY job")
        return {r[0]: (from_db(r[1]), r[2]) for r in rows}
