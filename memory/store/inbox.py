"""The SQL of the durable inbox: messages accepted from a platform and not yet answered, each leased to
the replica answering it (``claimed_by``, ``lease_until``), so that with several gateways on one database
a starting replica takes only what nobody is answering (docs/scale-out.md, "The message path")."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import SqlDatabase, chunks, marks


class InboxRows:
    """``inbox``: one row per accepted message; ``answered_at`` is set once it has been answered."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def add(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        received_at: str,
        claimed_by: str | None = None,
        lease_until: str | None = None,
    ) -> int | None:
        """Store one message, leased to ``claimed_by`` (the replica that took it in) until ``lease_until``;
        its id, or None when this delivery (channel, delivery_key) is stored already."""
        return await self._db.insert(
            "INSERT INTO inbox (channel, chat_id, delivery_key, message, received_at, claimed_by, "
            "lease_until) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
            (channel, chat_id, delivery_key, message, received_at, claimed_by, lease_until),
        )

    async def claim(
        self,
        channels: Sequence[str],
        replica: str,
        now: str,
        lease_until: str,
        *,
        own: bool,
        every: bool = False,
    ) -> list[tuple[int, str, str | None]]:
        """Lease to ``replica`` the unanswered messages of ``channels`` that nobody answers: never leased,
        or their lease ran out before ``now`` (another replica's, or also this replica's own when ``own``:
        a restart under the same replica id); ``every``: all of them, leases or not (a store one process
        owns). Returns (id, message, previous holder), oldest first. On PostgreSQL the rows are locked
        ``FOR UPDATE SKIP LOCKED``: two replicas claiming at once get disjoint messages."""
        if not channels:
            return []
        if every:
            free, params = "1 = 1", []
        elif own:
            free, params = "(claimed_by IS NULL OR lease_until < ? OR claimed_by = ?)", [now, replica]
        else:
            free, params = "(claimed_by IS NULL OR (lease_until < ? AND claimed_by <> ?))", [now, replica]
        skip = " FOR UPDATE SKIP LOCKED" if self._db.kind == "postgresql" else ""
        async with self._db.transaction():
            rows = await self._db.read(
                f"SELECT id, message, claimed_by FROM inbox WHERE answered_at IS NULL "
                f"AND channel IN ({marks(channels)}) AND {free} ORDER BY id{skip}",
                (*channels, *params),
            )
            for part in chunks([int(r[0]) for r in rows]):
                await self._db.write(
                    f"UPDATE inbox SET claimed_by = ?, lease_until = ? WHERE id IN ({marks(part)})",
                    (replica, lease_until, *part),
                )
        return [(int(r[0]), str(r[1]), r[2]) for r in rows]

    async def renew(self, replica: str, lease_until: str) -> int:
        """Extend the lease of every unanswered message ``replica`` holds; how many it still holds."""
        cur = await self._db.write(
            "UPDATE inbox SET lease_until = ? WHERE claimed_by = ? AND answered_at IS NULL",
            (lease_until, replica),
        )
        return int(cur.rowcount)

    async def pending(self) -> list[tuple[int, str]]:
        """(id, message) of every message not answered yet, oldest first."""
        rows = await self._db.read("SELECT id, message FROM inbox WHERE answered_at IS NULL ORDER BY id")
        return [(int(r[0]), r[1]) for r in rows]

    async def answer(self, inbox_id: int, answered_at: str, send_error: str | None = None) -> None:
        """Mark a message answered (again is harmless) and end its lease; ``send_error`` when its reply
        could not be sent."""
        await self._db.write(
            "UPDATE inbox SET answered_at = ?, send_error = ?, lease_until = NULL "
            "WHERE id = ? AND answered_at IS NULL",
            (answered_at, send_error, inbox_id),
        )

    async def prune(self, answered_before: str) -> int:
        """Forget messages answered before the given time (kept a while to recognise redeliveries)."""
        cur = await self._db.write(
            "DELETE FROM inbox WHERE answered_at IS NOT NULL AND answered_at < ?", (answered_before,)
        )
        return int(cur.rowcount)

    async def count(self, *, answered: bool) -> int:
        """How many messages are (not) answered."""
        cond = "IS NOT NULL" if answered else "IS NULL"
        return await self._db.scalar(f"SELECT COUNT(*) FROM inbox WHERE answered_at {cond}")

    async def unsent(self, since: str) -> int:
        """Replies that could not be sent, of messages answered since ``since``."""
        return await self._db.scalar(
            "SELECT COUNT(*) FROM inbox WHERE send_error IS NOT NULL AND answered_at >= ?", (since,)
        )
