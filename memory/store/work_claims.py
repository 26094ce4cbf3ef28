"""The SQL of background work shared by replicas: each owner's extraction due time and the replica
extracting it (``extraction_due``), and the rows the embedding backfill is embedding (``embedding_claims``).

Both are leases: a claim names its replica and holds until ``lease_until``; a replica that dies stops
renewing and another takes the work after that time (docs/scale-out.md, "Extraction"). Each claim has a
``generation`` that rises when it changes hands, so a replica that stalled past its lease and wakes finds
its claim gone even if it is its own name on the row again. Every due time and lease is the store's one
clock (``sql.store_clock``: the server's on PostgreSQL), never a host's: callers give seconds from now.
On PostgreSQL the poll's row lock is ``FOR UPDATE SKIP LOCKED``, so two replicas polling at once take
different owners; on SQLite one process owns the file and every claim is that process's.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import SqlDatabase, chunks, marks, store_clock
from memory.store.turn_watermark import IDLE, NEWEST_TURN


class ExtractionDueRows:
    """``extraction_due``: one row per owner whose turns were ever buffered — its watermark
    (``turn_watermark.py``), when to extract next (``IDLE``: nothing to), and who is."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self._now = store_clock(db.kind)  # SQL for "the store's clock, ? seconds from now"

    async def push(self, owner: str, token_budget: int, quiet_gap_s: float) -> bool:
        """Set the owner's due time after a buffered turn (``BufferRows.append``, which counted it and made
        the owner's row): now when the owner's running count of live buffered tokens (``buffer_count.py``)
        reached ``token_budget``, else ``quiet_gap_s`` from now. A claim on the row stays. True when the
        budget was reached (one statement). A row made here (no append before it) counts nothing and
        starts its watermark at the owner's newest turn. (An exchange pushes in its own statement:
        ``exchange.py``.)"""
        now = self._now
        hit = await self._db.insert(
            "INSERT INTO extraction_due (owner, due_at, live_tokens, extracted_through) "
            f"SELECT ?, {now}, 0, COALESCE(MAX(id), 0) FROM conversation_turns WHERE owner = ? "
            "ON CONFLICT(owner) DO UPDATE SET due_at = CASE WHEN extraction_due.live_tokens >= ? "
            f"THEN {now} ELSE {now} END "
            f"RETURNING CASE WHEN due_at <= {now} THEN 1 ELSE 0 END",
            (owner, quiet_gap_s, owner, token_budget, 0.0, quiet_gap_s, 0.0),
        )
        return bool(hit)

    async def ensure(self, owner: str, delay_s: float) -> bool:
        """Give an owner with buffered turns a due time ``delay_s`` from now unless it has one (a start
        resuming the buffer leaves other replicas' due times alone; an idle row gets it); True when it
        was given. A row made here counts the owner's live stragglers (``buffer_count.py``) and starts
        its watermark at the owner's newest turn."""
        added = await self._db.insert(
            "INSERT INTO extraction_due (owner, due_at, live_tokens, extracted_through) "
            f"SELECT ?, {self._now}, "
            "COALESCE((SELECT SUM(t.token_count) FROM extraction_failures f JOIN conversation_turns t "
            f"ON t.id = f.turn_id WHERE f.owner = ? AND f.dead = 0), 0), {NEWEST_TURN} WHERE 1 = 1 "
            "ON CONFLICT(owner) DO UPDATE SET due_at = excluded.due_at "
            f"WHERE extraction_due.due_at = '{IDLE}' RETURNING 1",
            (owner, delay_s, owner, owner),
        )
        return added is not None

    async def claim(self, owner: str, replica: str, lease_s: float) -> tuple[str, int] | None:
        """Take the owner for ``replica`` for ``lease_s`` seconds whatever its due time (a forced flush);
        the row is made when missing. (the due time seen — ``release`` compares it —, the claim's
        generation), or None when another replica holds the owner with a live lease.

        The due time comes back from the claiming statement itself: a turn whose push it reflects was
        buffered before the claimant reads the buffer, so that turn is extracted by this claim."""
        now = self._now
        rows = await self._db.returning(
            "INSERT INTO extraction_due "
            "(owner, due_at, claimed_by, lease_until, generation, extracted_through) "
            f"SELECT ?, {now}, ?, {now}, 1, {NEWEST_TURN} WHERE 1 = 1 ON CONFLICT(owner) DO UPDATE SET "
            "claimed_by = excluded.claimed_by, lease_until = excluded.lease_until, generation = "
            "extraction_due.generation + CASE WHEN extraction_due.claimed_by = excluded.claimed_by "
            "THEN 0 ELSE 1 END "
            f"WHERE extraction_due.claimed_by IS NULL OR extraction_due.lease_until < {now} "
            "OR extraction_due.claimed_by = excluded.claimed_by RETURNING due_at, generation",
            (owner, 0.0, replica, lease_s, owner, 0.0),
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    async def claim_due(self, replica: str, lease_s: float) -> tuple[str, str, str | None, int] | None:
        """Take the owner due longest ago that nobody holds (or whose holder's lease ran out) for
        ``replica``; (owner, due time, previous holder, the claim's generation), or None when nothing is
        due."""
        now = self._now
        due = f"FROM extraction_due WHERE due_at <= {now} AND (claimed_by IS NULL OR lease_until < {now})"
        if not await self._db.read(f"SELECT 1 {due} LIMIT 1", (0.0, 0.0)):
            return None  # the usual answer, without a transaction (SQLite's write lock) every poll
        skip = " FOR UPDATE SKIP LOCKED" if self._db.kind == "postgresql" else ""
        async with self._db.transaction():
            rows = await self._db.read(
                f"SELECT owner, due_at, claimed_by {due} ORDER BY due_at LIMIT 1{skip}", (0.0, 0.0)
            )
            if not rows:
                return None
            owner = str(rows[0][0])
            claimed = await self._db.returning(
                f"UPDATE extraction_due SET claimed_by = ?, lease_until = {self._now}, "
                "generation = generation + 1 WHERE owner = ? RETURNING generation",
                (replica, lease_s, owner),
            )
        return owner, str(rows[0][1]), rows[0][2], int(claimed[0][0])

    async def renew(self, owner: str, replica: str, generation: int, lease_s: float) -> bool:
        """Extend ``replica``'s claim on an owner it is extracting to ``lease_s`` seconds from now; False
        when it lost the claim (another replica took it over). Inside the write transaction of a batch
        it is the batch's fence: on PostgreSQL the row stays locked until the commit, so no takeover
        comes between the check and the write."""
        rows = await self._db.returning(
            f"UPDATE extraction_due SET lease_until = {self._now} "
            "WHERE owner = ? AND claimed_by = ? AND generation = ? RETURNING 1",
            (lease_s, owner, replica, generation),
        )
        return bool(rows)

    async def release(
        self, owner: str, replica: str, generation: int, seen_due: str, next_in_s: float | None
    ) -> None:
        """End ``replica``'s claim after extracting: the row goes idle (``next_in_s`` None: nothing left;
        it stays, holding the owner's watermark: ``turn_watermark.py``) or is
        due again ``next_in_s`` seconds from now (a retry). A due time pushed by a new turn meanwhile (it
        differs from ``seen_due``) is kept: that turn is not extracted yet. A claim lost to another
        replica (another generation) is left alone."""
        mine = "owner = ? AND claimed_by = ? AND generation = ?"
        if next_in_s is None:
            cur = await self._db.write(
                f"UPDATE extraction_due SET due_at = '{IDLE}', claimed_by = NULL, lease_until = NULL "
                f"WHERE {mine} AND due_at = ?",
                (owner, replica, generation, seen_due),
            )
        else:
            cur = await self._db.write(
                f"UPDATE extraction_due SET due_at = {self._now}, claimed_by = NULL, lease_until = NULL "
                f"WHERE {mine} AND due_at = ?",
                (next_in_s, owner, replica, generation, seen_due),
            )
        if cur.rowcount == 0:
            await self._db.write(
                f"UPDATE extraction_due SET claimed_by = NULL, lease_until = NULL WHERE {mine}",
                (owner, replica, generation),
            )

    async def get(self, owner: str) -> tuple[str, str | None, str | None] | None:
        """(due time, holder, lease end) of the owner's row, or None when it has none or an idle one
        nobody holds (nothing to extract)."""
        rows = await self._db.read(
            "SELECT due_at, claimed_by, lease_until FROM extraction_due WHERE owner = ?", (owner,)
        )
        if not rows or (rows[0][0] == IDLE and rows[0][1] is None):
            return None
        return (str(rows[0][0]), rows[0][1], rows[0][2])

    async def counted_tokens(self, owner: str) -> int:
        """The owner's running count of live buffered tokens (``buffer_count.py``; 0 without a row): what
        the due-time push compares with the budget."""
        return await self._db.scalar(
            "SELECT COALESCE(MAX(live_tokens), 0) FROM extraction_due WHERE owner = ?", (owner,)
        )

    async def count_due(self) -> int:
        """Owners due now (held or not): the extraction backlog."""
        return await self._db.scalar(
            f"SELECT COUNT(*) FROM extraction_due WHERE due_at <= {self._now}", (0.0,)
        )


class EmbeddingClaimRows:
    """``embedding_claims``: the rows (of ``target``: memories or turns) a replica's backfill is embedding."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self._now = store_clock(db.kind)

    async def claim(
        self, target: str, row_ids: Sequence[int], replica: str, lease_s: float
    ) -> dict[int, int]:
        """Take the rows nobody else holds (or whose holder's lease ran out) for ``replica`` for
        ``lease_s`` seconds; the ids taken, each with its claim's generation. The upsert is atomic per
        row, so two replicas asking at once split the rows."""
        taken: dict[int, int] = {}
        now = self._now
        for part in chunks(list(row_ids), 200):
            rows = await self._db.returning(
                "INSERT INTO embedding_claims (target, row_id, claimed_by, lease_until, generation) VALUES "
                + ", ".join(f"(?, ?, ?, {now}, 1)" for _ in part)
                + " ON CONFLICT(target, row_id) DO UPDATE SET claimed_by = excluded.claimed_by, "
                "lease_until = excluded.lease_until, generation = embedding_claims.generation + "
                "CASE WHEN embedding_claims.claimed_by = excluded.claimed_by THEN 0 ELSE 1 END "
                f"WHERE embedding_claims.lease_until < {now} "
                "OR embedding_claims.claimed_by = excluded.claimed_by RETURNING row_id, generation",
                (*(v for row_id in part for v in (target, row_id, replica, lease_s)), 0.0),
            )
            taken.update({int(r[0]): int(r[1]) for r in rows})
        return dict(sorted(taken.items()))

    async def held(self, target: str, claims: dict[int, int], replica: str) -> list[int]:
        """Of ``claims`` (row id → generation), the rows ``replica`` still holds at that generation: the
        fence before their vectors are stored (a stalled pass whose claims were taken over stores none)."""
        kept: list[int] = []
        for part in chunks(sorted(claims)):
            rows = await self._db.read(
                "SELECT row_id, generation FROM embedding_claims WHERE target = ? AND claimed_by = ? "
                f"AND row_id IN ({marks(part)})",
                (target, replica, *part),
            )
            kept += [int(r[0]) for r in rows if claims.get(int(r[0])) == int(r[1])]
        return sorted(kept)

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
