"""The SQL of the memory page's access: its token and the browsers that showed it
(``gateway/dashboard/access.py``).

Kept in the memory database (not a file of their own) so that SQL lives only in ``memory/store/`` and
several gateways on one PostgreSQL database share them (docs/architecture.md, "Storage"). Times are the
caller's, as stored strings (``memory/clock.to_db``).
"""

from __future__ import annotations

from memory.store.sql import SqlDatabase


class PageAccessRows:
    """``page_secrets`` (the memory page's access token) and ``page_sessions`` (browsers that showed it).

    A session is keyed by the SHA-256 of its cookie value (``sid_hash``): the database never holds a
    cookie that would open the page. ``flash`` is its one-time messages as a JSON list."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def secret(self, name: str, made: str) -> str:
        """The stored secret ``name``; ``made`` is stored first when there is none (the first of several
        gateways racing wins, and every one returns the same)."""
        await self._db.write(
            "INSERT INTO page_secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING", (name, made)
        )
        rows = await self._db.read("SELECT value FROM page_secrets WHERE name = ?", (name,))
        return str(rows[0][0])

    async def open_session(self, sid_hash: str, csrf: str, at: str, keep: int, idle_since: str) -> None:
        """Add a session; drop those idle since before ``idle_since`` and all but the ``keep`` most
        recently used."""
        async with self._db.transaction():
            await self._db.write("DELETE FROM page_sessions WHERE last_seen < ?", (idle_since,))
            await self._db.write(
                "INSERT INTO page_sessions (sid_hash, csrf, flash, last_seen) VALUES (?, ?, '[]', ?)",
                (sid_hash, csrf, at),
            )
            await self._db.write(
                "DELETE FROM page_sessions WHERE sid_hash NOT IN (SELECT sid_hash FROM page_sessions "
                "ORDER BY last_seen DESC, sid_hash LIMIT ?)",
                (keep,),
            )

    async def session(self, sid_hash: str, seen_since: str) -> tuple[str, str, str] | None:
        """(csrf, flash, last used) of a session used since ``seen_since``; None when unknown or idle
        too long. A read only: a page can still be shown while the database refuses writes."""
        rows = await self._db.read(
            "SELECT csrf, flash, last_seen FROM page_sessions WHERE sid_hash = ? AND last_seen >= ?",
            (sid_hash, seen_since),
        )
        return (str(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None

    async def touch(self, sid_hash: str, at: str) -> None:
        """Mark a session used ``at``."""
        await self._db.write("UPDATE page_sessions SET last_seen = ? WHERE sid_hash = ?", (at, sid_hash))

    async def set_flash(self, sid_hash: str, flash: str) -> None:
        """Replace a session's one-time messages."""
        await self._db.write("UPDATE page_sessions SET flash = ? WHERE sid_hash = ?", (flash, sid_hash))

    async def count(self) -> int:
        """How many sessions are kept."""
        return await self._db.scalar("SELECT COUNT(*) FROM page_sessions")
