"""The SQL of the durable inbox: messages accepted from a platform and not yet answered. With several
gateways on one database the inbox is the queue: the replica holding a chat claims its rows oldest first
(``claimed_by``, ``lease_until``: ``chat_holds.py``; docs/scale-out.md, "The message path")."""

from __future__ import annotations

from memory.store.sql import SqlDatabase


class InboxRows:
    """``inbox``: one row per accepted message; ``answered_at`` is set once it has been answered."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def add(
        self, channel: str, chat_id: str, delivery_key: str, message: str, received_at: str, media: str = ""
    ) -> int | None:
        """Store one message, unclaimed (the chat's holder claims it: ``chat_holds.py``), with its media
        references (``media``: JSON, "" for none); its id, or None when this delivery (channel,
        delivery_key) is stored already."""
        return await self._db.insert(
            "INSERT INTO inbox (channel, chat_id, delivery_key, message, received_at, media) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
            (channel, chat_id, delivery_key, message, received_at, media),
        )

    async def pending(self) -> list[tuple[int, str, str]]:
        """(id, message, media) of every message not answered yet, oldest first."""
        rows = await self._db.read(
            "SELECT id, message, media FROM inbox WHERE answered_at IS NULL ORDER BY id"
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def with_media(self, *, answered: bool) -> int:
        """How many messages carrying media are (not) answered (``tierclaw status``, the bench)."""
        cond = "IS NOT NULL" if answered else "IS NULL"
        return await self._db.scalar(f"SELECT COUNT(*) FROM inbox WHERE media != '' AND answered_at {cond}")

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

    async def set_reply_handle(self, inbox_id: int, handle: str) -> None:
        """Keep where a streamed reply to this message is being written on the platform (a message id, a
        card id: the channel's own text), so a restart completes that message instead of sending another."""
        await self._db.write("UPDATE inbox SET reply_handle = ? WHERE id = ?", (handle, inbox_id))

    async def reply_handle(self, inbox_id: int) -> str:
        """The handle ``set_reply_handle`` kept for this message ("" when none)."""
        rows = await self._db.read("SELECT reply_handle FROM inbox WHERE id = ?", (inbox_id,))
        return str(rows[0][0] or "") if rows else ""
