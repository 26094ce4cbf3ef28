"""The SQL of each person's scratchpad note (``memory/scratchpad.py``)."""

from __future__ import annotations

from memory.store.changes import ChangeFeed
from memory.store.sql import SqlDatabase


class ScratchpadRows:
    """``scratchpads``: one note per owner; a change bumps the owner's ``scratchpad`` version, so other
    processes' cached notes follow (``memory/scratchpad.py``)."""

    def __init__(self, db: SqlDatabase, changes: ChangeFeed) -> None:
        self._db = db
        self.changes = changes

    async def get(self, owner: str) -> tuple[str, str] | None:
        """(content, updated_at) of the owner's note, or None when there is none."""
        rows = await self._db.read("SELECT content, updated_at FROM scratchpads WHERE owner = ?", (owner,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    async def put(self, owner: str, content: str, updated_at: str) -> None:
        """Replace the owner's note."""
        async with self.changes.unit():
            await self.changes.bump("scratchpad", (owner,))
            await self._db.write(
                "INSERT INTO scratchpads (owner, content, updated_at) VALUES (?, ?, ?) ON CONFLICT(owner) "
                "DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at",
                (owner, content, updated_at),
            )

    async def clear(self, owner: str) -> bool:
        """Delete the owner's note; False when there was none."""
        async with self.changes.unit():
            await self.changes.bump("scratchpad", (owner,))
            cur = await self._db.write("DELETE FROM scratchpads WHERE owner = ?", (owner,))
        return cur.rowcount > 0
