"""The SQL of chat holds: one replica at a time answers a chat's messages (docs/scale-out.md, "The message
path"). The inbox is the queue: the holder claims the chat's unanswered rows oldest first, whoever stored
them, and drops the hold only in the statement that sees none left, so a message stored by another
replica meanwhile is never stranded. A hold lives until ``lease_until``; its replica renews it while it
works the chat, so a hold whose lease ran out belongs to a replica that died, and another takes it over.

On SQLite (one process) every hold is this process's; the statements are the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import SqlDatabase, marks

# "the held chat has an unanswered message" (``h``: the chat_holds row); served by idx_inbox_unanswered.
_UNANSWERED = (
    "SELECT 1 FROM inbox i WHERE i.channel = h.channel AND i.chat_id = h.chat_id AND i.answered_at IS NULL"
)


class ChatHoldRows:
    """``chat_holds``: (channel, chat_id) → the replica answering it (``holder``) and its lease."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def take(
        self, channel: str, chat_id: str, holder: str, now: str, lease_until: str, *, force: bool = False
    ) -> bool:
        """Hold the chat for ``holder`` until ``lease_until``: True when nobody held it, its lease ran out
        before ``now``, or ``holder`` held it already (then the lease is extended); ``force``: whatever
        the lease (a store one process owns, at start)."""
        taken = await self._db.insert(
            "INSERT INTO chat_holds (channel, chat_id, holder, lease_until) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(channel, chat_id) DO UPDATE SET holder = excluded.holder, "
            "lease_until = excluded.lease_until "
            "WHERE chat_holds.lease_until < ? OR chat_holds.holder = ? OR ? = 1 RETURNING 1",
            (channel, chat_id, holder, lease_until, now, holder, int(force)),
        )
        return taken is not None

    async def holder(self, channel: str, chat_id: str) -> str | None:
        """Who holds the chat (None: nobody)."""
        rows = await self._db.read(
            "SELECT holder FROM chat_holds WHERE channel = ? AND chat_id = ?", (channel, chat_id)
        )
        return str(rows[0][0]) if rows else None

    async def next_message(
        self, channel: str, chat_id: str, holder: str, lease_until: str
    ) -> tuple[int, str, str, str] | None:
        """Claim for ``holder`` the chat's oldest unanswered message — only while it holds the chat —
        leasing it until ``lease_until``; (id, message, received_at, media), or None (none left, or the
        hold is not ``holder``'s any more). Claimed again when a previous answer was cut short: the
        holder is the only one answering the chat."""
        claimed = await self._db.insert(
            "UPDATE inbox SET claimed_by = ?, lease_until = ? WHERE id = (SELECT id FROM inbox "
            "WHERE channel = ? AND chat_id = ? AND answered_at IS NULL ORDER BY id LIMIT 1) "
            "AND EXISTS (SELECT 1 FROM chat_holds WHERE channel = ? AND chat_id = ? AND holder = ?) "
            "RETURNING id",
            (holder, lease_until, channel, chat_id, channel, chat_id, holder),
        )
        if claimed is None:
            return None
        rows = await self._db.read("SELECT message, received_at, media FROM inbox WHERE id = ?", (claimed,))
        return (claimed, str(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None

    async def release(self, channel: str, chat_id: str, holder: str) -> bool:
        """Drop ``holder``'s hold on the chat if, and only if, no message of it is unanswered (one
        statement: a message stored meanwhile keeps the hold, and its holder answers it)."""
        cur = await self._db.write(
            "DELETE FROM chat_holds WHERE channel = ? AND chat_id = ? AND holder = ? AND NOT EXISTS "
            "(SELECT 1 FROM inbox WHERE channel = ? AND chat_id = ? AND answered_at IS NULL)",
            (channel, chat_id, holder, channel, chat_id),
        )
        return cur.rowcount > 0

    async def renew(self, holder: str, chats: Sequence[tuple[str, str]], lease_until: str) -> int:
        """Extend ``holder``'s leases on ``chats`` (the ones it is working); how many it still holds."""
        renewed = 0
        for start in range(0, len(chats), 200):
            part = chats[start : start + 200]
            which = " OR ".join(["(channel = ? AND chat_id = ?)"] * len(part))
            cur = await self._db.write(
                f"UPDATE chat_holds SET lease_until = ? WHERE holder = ? AND ({which})",
                (lease_until, holder, *[value for chat in part for value in chat]),
            )
            renewed += cur.rowcount
        return renewed

    async def take_waiting(
        self,
        channels: Sequence[str],
        holder: str,
        now: str,
        lease_until: str,
        *,
        own: bool = False,
        every: bool = False,
        limit: int = 100,
    ) -> list[tuple[str, str, str | None]]:
        """Hold for ``holder`` the chats of ``channels`` with an unanswered message that no live hold
        covers: never held, or held by a replica whose lease ran out before ``now`` (it died; or a
        worker of ``holder``'s own stopped and its hold was not renewed); ``own``: also ``holder``'s live
        holds (a restart under a fixed replica id); ``every``: whatever the lease (a store one process
        owns, at start). Returns (channel, chat_id,
        previous holder or None). On PostgreSQL the expired holds are locked ``FOR UPDATE SKIP
        LOCKED``: two replicas sweeping at once take disjoint chats; a chat never held is inserted with
        ``ON CONFLICT DO NOTHING``, so of two racing replicas one gets it."""
        if not channels:
            return []
        if every:
            free, params = "1 = 1", []
        elif own:
            free, params = "(h.lease_until < ? OR h.holder = ?)", [now, holder]
        else:
            free, params = "h.lease_until < ?", [now]
        expired = (
            f"SELECT h.channel, h.chat_id, h.holder FROM chat_holds h WHERE h.channel IN ({marks(channels)}) "
            f"AND {free} AND EXISTS ({_UNANSWERED}) ORDER BY h.lease_until LIMIT ?"
        )
        taken: list[tuple[str, str, str | None]] = []
        # A plain read first: the sweep runs every second on every replica, and finds nothing mostly.
        if await self._db.read(expired, (*channels, *params, limit)):
            skip = " FOR UPDATE OF h SKIP LOCKED" if self._db.kind == "postgresql" else ""
            async with self._db.transaction():
                rows = await self._db.read(expired + skip, (*channels, *params, limit))
                for row in rows:
                    await self._db.write(
                        "UPDATE chat_holds SET holder = ?, lease_until = ? WHERE channel = ? AND chat_id = ?",
                        (holder, lease_until, row[0], row[1]),
                    )
                    taken.append((str(row[0]), str(row[1]), str(row[2])))
        return taken + await self._take_never_held(channels, holder, lease_until, limit)

    async def _take_never_held(
        self, channels: Sequence[str], holder: str, lease_until: str, limit: int
    ) -> list[tuple[str, str, str | None]]:
        """Hold the chats with an unanswered message and no hold at all (their replica died between
        storing a message and taking the hold); of two replicas racing, the first insert wins."""
        never = await self._db.read(
            f"SELECT DISTINCT i.channel, i.chat_id FROM inbox i WHERE i.answered_at IS NULL "
            f"AND i.channel IN ({marks(channels)}) AND NOT EXISTS (SELECT 1 FROM chat_holds h "
            f"WHERE h.channel = i.channel AND h.chat_id = i.chat_id) LIMIT ?",
            (*channels, limit),
        )
        taken: list[tuple[str, str, str | None]] = []
        for channel, chat_id in never:
            inserted = await self._db.insert(
                "INSERT INTO chat_holds (channel, chat_id, holder, lease_until) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(channel, chat_id) DO NOTHING RETURNING 1",
                (str(channel), str(chat_id), holder, lease_until),
            )
            if inserted is not None:
                taken.append((str(channel), str(chat_id), None))
        return taken

    async def drop(self, holder: str) -> int:
        """Drop every hold of ``holder`` (it stops: another replica's sweep takes what is left)."""
        cur = await self._db.write("DELETE FROM chat_holds WHERE holder = ?", (holder,))
        return int(cur.rowcount)

    async def prune(self, now: str) -> int:
        """Forget holds whose lease ran out before ``now`` and whose chat has nothing left to answer (a
        replica that died between its last answer and its release)."""
        cur = await self._db.write(
            "DELETE FROM chat_holds WHERE lease_until < ? AND NOT EXISTS (SELECT 1 FROM inbox i "
            "WHERE i.channel = chat_holds.channel AND i.chat_id = chat_holds.chat_id "
            "AND i.answered_at IS NULL)",
            (now,),
        )
        return int(cur.rowcount)

    async def all(self) -> list[tuple[str, str, str, str]]:
        """(channel, chat_id, holder, lease_until) of every hold (for inspection and tests)."""
        rows = await self._db.read(
            "SELECT channel, chat_id, holder, lease_until FROM chat_holds ORDER BY channel, chat_id"
        )
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]
