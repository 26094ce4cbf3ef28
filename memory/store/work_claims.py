"""The SQL of background work shared by replicas: each owner's extraction due time and the replica
extracting it (``extraction_due``), and the rows the embedding backfill is embedding (``embedding_claims``).

Both are leases: a claim names its replica and holds until ``lease_until``; a replica that dies stops
renewing and another takes the work after that time (docs/scale-out.md, "Extraction"). Times are the
callers' text (``memory.clock.to_db_fine``: microseconds, so short gaps and leases compare right). On
PostgreSQL the poll's row lock is ``FOR UPDATE SKIP LOCKED``, so two replicas polling at once take
different owners; on SQLite one process owns the file and every claim is that process's.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import SqlDatabase, chunks, marks


class ExtractionDueRows:
    """``extraction_due``: one row per owner with buffered turns — when to extract next, and who is."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def push(self, owner: str, token_budget: int, budget_due: str, quiet_due: str) -> bool:
        """Set the owner's due time after a buffered turn: ``budget_due`` (now) when the owner's live
        buffered tokens reached ``token_budget``, else ``quiet_due`` (the quiet gap from now). A claim on
        the row stays. True when the budget was reached (one statement on the reply path)."""
        hit = await self._db.insert(
            "INSERT INTO extraction_due (owner, due_at) "
            "SELECT ?, CASE WHEN COALESCE(SUM(token_count), 0) >= ? THEN ? ELSE ? END "
            "FROM extraction_buffer WHERE owner = ? AND dead = 0 "
            "ON CONFLICT(owner) DO UPDATE SET due_at = excluded.due_at "
            "RETURNING CASE WHEN due_at = ? THEN 1 ELSE 0 END",
            (owner, token_budget, budget_due, quiet_due, owner, budget_due),
        )
        return bool(hit)

    async def ensure(self, owner: str, due_at: str) -> bool:
        """Give an owner with buffered turns a due time unless it has one (a start resuming the buffer
        leaves other replicas' due times alone); True when the row was added."""
        added = await self._db.insert(
            "INSERT INTO extraction_due (owner, due_at) VALUES (?, ?) "
            "ON CONFLICT(owner) DO NOTHING RETURNING 1",
            (owner, due_at),
        )
        return added is not None

    async def claim(self, owner: str, replica: str, now: str, lease_until: str) -> str | None:
        """Take the owner for ``replica`` until ``lease_until`` whatever its due time (a forced flush); the
        row is made when missing. The due time seen (``release`` compares it), or None when another
        replica holds the owner with a live lease.

        The due time is read after the claim: a turn whose push it reflects was buffered before the
        claimant reads the buffer, so that turn is extracted by this claim."""
        taken = await self._db.insert(
            "INSERT INTO extraction_due (owner, due_at, claimed_by, lease_until) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(owner) DO UPDATE SET claimed_by = excluded.claimed_by, "
            "lease_until = excluded.lease_until WHERE extraction_due.claimed_by IS NULL "
            "OR extraction_due.lease_until < ? OR extraction_due.claimed_by = ? RETURNING 1",
            (owner, now, replica, lease_until, now, replica),
        )
        if taken is None:
            return None
        row = await self.get(owner)
        return row[0] if row is not None else None

    async def claim_due(self, replica: str, now: str, lease_until: str) -> tuple[str, str, str | None] | None:
        """Take the owner due longest ago that nobody holds (or whose holder's lease ran out) for
        ``replica``; (owner, due time, previous holder), or None when nothing is due."""
        due = "FROM extraction_due WHERE due_at <= ? AND (claimed_by IS NULL OR lease_until < ?)"
        if not await self._db.read(f"SELECT 1 {due} LIMIT 1", (now, now)):
            return None  # the usual answer, without a transaction (SQLite's write lock) every poll
        skip = " FOR UPDATE SKIP LOCKED" if self._db.kind == "postgresql" else ""
        async with self._db.transaction():
            rows = await self._db.read(
                f"SELECT owner, due_at, claimed_by {due} ORDER BY due_at LIMIT 1{skip}", (now, now)
            )
            if not rows:
                return None
            owner = str(rows[0][0])
            await self._db.write(
                "UPDATE extraction_due SET claimed_by = ?, lease_until = ? WHERE owner = ?",
                (replica, lease_until, owner),
            )
        return owner, str(rows[0][1]), rows[0][2]

    async def renew(self, owner: str, replica: str, lease_until: str) -> bool:
        """Extend ``replica``'s lease on an owner it is extracting; False when it lost the claim."""
        cur = await self._db.write(
            "UPDATE extraction_due SET lease_until = ? WHERE owner = ? AND claimed_by = ?",
            (lease_until, owner, replica),
        )
        return cur.rowcount > 0

    async def release(self, owner: str, replica: str, seen_due: str, next_due: str | None) -> None:
        """End ``replica``'s claim after extracting: the row goes (``next_due`` None: nothing left) or
        waits for ``next_due`` (a retry). A due time pushed by a new turn meanwhile (it differs from
        ``seen_due``) is kept: that turn is not extracted yet."""
        if next_due is None:
            cur = await self._db.write(
                "DELETE FROM extraction_due WHERE owner = ? AND claimed_by = ? AND due_at = ?",
                (owner, replica, seen_due),
            )
        else:
            cur = await self._db.write(
                "UPDATE extraction_due SET due_at = ?, claimed_by = NULL, lease_until = NULL "
                "WHERE owner = ? AND claimed_by = ? AND due_at = ?",
                (next_due, owner, replica, seen_due),
            )
        if cur.rowcount == 0:
            await self._db.write(
                "UPDATE extraction_due SET claimed_by = NULL, lease_until = NULL "
                "WHERE owner = ? AND claimed_by = ?",
                (owner, replica),
            )

    async def get(self, owner: str) -> tuple[str, str | None, str | None] | None:
        """(due time, holder, lease end) of the owner's row, or None."""
        rows = await self._db.read(
            "SELECT due_at, claimed_by, lease_until FROM extraction_due WHERE owner = ?", (owner,)
        )
        return (str(rows[0][0]), rows[0][1], rows[0][2]) if rows else None

    async def count_due(self, now: str) -> int:
        """Owners due by ``now`` (held or not): the extraction backlog."""
        return await self._db.scalar("SELECT COUNT(*) FROM extraction_due WHERE due_at <= ?", (now,))


class EmbeddingClaimRows:
    """``embedding_claims``: the rows (of ``target``: memories or turns) a replica's backfill is embedding."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def claim(
        self, target: str, row_ids: Sequence[int], replica: str, now: str, lease_until: str
    ) -> list[int]:
        """Take the rows nobody else holds (or whose holder's lease ran out) for ``replica``; the ids
        taken (this claim's lease end tells them from rows another replica took meanwhile). The upsert is
        atomic per row, so two replicas asking at once split the rows."""
        taken: list[int] = []
        for part in chunks(list(row_ids), 200):
            await self._db.write(
                "INSERT INTO embedding_claims (target, row_id, claimed_by, lease_until) VALUES "
                + ", ".join("(?, ?, ?, ?)" for _ in part)
                + " ON CONFLICT(target, row_id) DO UPDATE SET claimed_by = excluded.claimed_by, "
                "lease_until = excluded.lease_until WHERE embedding_claims.lease_until < ? "
                "OR embedding_claims.claimed_by = ?",
                (*(v for row_id in part for v in (target, row_id, replica, lease_until)), now, replica),
            )
            rows = await self._db.read(
                "SELECT row_id FROM embedding_claims WHERE target = ? AND claimed_by = ? "
                f"AND lease_until = ? AND row_id IN ({marks(part)})",
                (target, replica, lease_until, *part),
            )
            taken += sorted(int(r[0]) for r in rows)
        return taken

    async def release(self, target: str, row_ids: Sequence[int], replica: str) -> None:
        """Drop ``replica``'s claims on rows it embedded (or gave up on)."""
        for part in chunks(list(row_ids)):
            await self._db.write(
                "DELETE FROM embedding_claims WHERE target = ? AND claimed_by = ? "
                f"AND row_id IN ({marks(part)})",
                (target, replica, *part),
            )

    async def count(self, target: str | None = None) -> int:
        """Claims held now (of one target or all)."""
        if target is None:
            return await self._db.scalar("SELECT COUNT(*) FROM embedding_claims")
        return await self._db.scalar("SELECT COUNT(*) FROM embedding_claims WHERE target = ?", (target,))
