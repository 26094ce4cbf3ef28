"""The SQL of the scheduled jobs: when each last ran, and which replica runs each period (its claim)."""

from __future__ import annotations

from memory.store.sql import SqlDatabase, store_clock


class JobRows:
    """``job_runs``: when each scheduled job last ran and how it ended."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def last_run(self, job: str) -> str | None:
        """The stored time of the job's last run, or None."""
        rows = await self._db.read("SELECT last_run FROM job_runs WHERE job = ?", (job,))
        return rows[0][0] if rows else None

    async def record(self, job: str, when: str, status: str) -> None:
        """Remember a run of ``job``."""
        await self._db.write(
            "INSERT INTO job_runs (job, last_run, last_status) VALUES (?, ?, ?) "
            "ON CONFLICT(job) DO UPDATE SET last_run = excluded.last_run, last_status = excluded.last_status",
            (job, when, status),
        )

    async def all(self) -> list[tuple[str, str, str]]:
        """(job, last run, status) of every job."""
        return [
            tuple(r)
            for r in await self._db.read("SELECT job, last_run, last_status FROM job_runs ORDER BY job")
        ]


class JobClaimRows:
    """``job_claims``: which replica runs each scheduled job's period, until when, and whether it is done.

    A claim is taken by inserting the (job, period) row, or by taking over a row whose run is not done
    and whose lease ran out (its replica died or stalled: the generation rises); a done row is never
    taken again, so each period runs once across all replicas (docs/scale-out.md, "Scheduled jobs").
    Leases run on the store's one clock (``sql.store_clock``)."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self._now = store_clock(db.kind)

    async def claim(self, job: str, period: str, replica: str, lease_s: float) -> int | None:
        """Take (job, period) for ``replica`` for ``lease_s`` seconds; the claim's generation, or None when
        another replica holds it with a live lease, or the period's run is done."""
        now = self._now
        rows = await self._db.returning(
            "INSERT INTO job_claims (job, period, claimed_by, lease_until, generation) "
            f"VALUES (?, ?, ?, {now}, 1) ON CONFLICT(job, period) DO UPDATE SET "
            "claimed_by = excluded.claimed_by, lease_until = excluded.lease_until, generation = "
            "job_claims.generation + CASE WHEN job_claims.claimed_by = excluded.claimed_by THEN 0 ELSE 1 END "
            f"WHERE job_claims.done_at IS NULL AND (job_claims.lease_until < {now} "
            "OR job_claims.claimed_by = excluded.claimed_by) RETURNING generation",
            (job, period, replica, lease_s, 0.0),
        )
        return int(rows[0][0]) if rows else None

    async def renew(self, job: str, period: str, replica: str, generation: int, lease_s: float) -> bool:
        """Extend ``replica``'s lease on a run it is still doing; False when it lost the claim."""
        cur = await self._db.write(
            f"UPDATE job_claims SET lease_until = {self._now} WHERE job = ? AND period = ? "
            "AND claimed_by = ? AND generation = ? AND done_at IS NULL",
            (lease_s, job, period, replica, generation),
        )
        return cur.rowcount > 0

    async def finish(self, job: str, period: str, replica: str, generation: int, status: str) -> bool:
        """Mark the period's run done (``status``: "ok" or the failure); False when ``replica`` no longer
        held the claim at ``generation`` (another replica took it over after the lease ran out)."""
        cur = await self._db.write(
            f"UPDATE job_claims SET done_at = {self._now}, status = ? WHERE job = ? AND period = ? "
            "AND claimed_by = ? AND generation = ? AND done_at IS NULL",
            (0.0, status, job, period, replica, generation),
        )
        return cur.rowcount > 0

    async def stale(self) -> list[tuple[str, str, str]]:
        """(job, period, claimed_by) of runs not done whose lease ran out."""
        rows = await self._db.read(
            "SELECT job, period, claimed_by FROM job_claims WHERE done_at IS NULL "
            f"AND lease_until < {self._now} ORDER BY period, job",
            (0.0,),
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def of_job(self, job: str) -> list[tuple[str, str, str | None, str | None]]:
        """(period, claimed_by, done_at, status) of every claim of ``job``, oldest period first."""
        rows = await self._db.read(
            "SELECT period, claimed_by, done_at, status FROM job_claims WHERE job = ? ORDER BY period",
            (job,),
        )
        return [(str(r[0]), str(r[1]), r[2], r[3]) for r in rows]
