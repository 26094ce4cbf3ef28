"""The SQL of Tier 0: each chat's current session and its recent messages (``memory/sessions.py``)."""

from __future__ import annotations

from memory.store.changes import ChangeFeed
from memory.store.sql import SqlDatabase


class SessionRows:
    """``chat_sessions`` (each chat's current session) and ``session_messages`` (Tier 0)."""

    def __init__(self, db: SqlDatabase, changes: ChangeFeed) -> None:
        self._db = db
        self.changes = changes  # a new session bumps the chat's version: other processes' caches follow

    async def current(self, chat_key: str) -> int | None:
        """The chat's current session number, or None for a chat never reset."""
        rows = await self._db.read("SELECT session_no FROM chat_sessions WHERE chat_key = ?", (chat_key,))
        return int(rows[0][0]) if rows else None

    async def recent(self, chat_key: str, session: int, limit: int) -> list[tuple[str, str]]:
        """The last ``limit`` (role, content) of a session, newest first."""
        rows = await self._db.read(
            "SELECT role, content FROM session_messages WHERE chat_key = ? AND session_no = ? "
            "ORDER BY id DESC LIMIT ?",
            (chat_key, session, limit),
        )
        return [(r[0], r[1]) for r in rows]

    async def append(self, chat_key: str, session: int, role: str, content: str, created_at: str) -> None:
        """Add one message to a session."""
        await self._db.write(
            "INSERT INTO session_messages (chat_key, session_no, role, content, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (chat_key, session, role, content, created_at),
        )

    async def start(self, chat_key: str, session: int, started_at: str) -> None:
        """Make ``session`` the chat's current one and drop older sessions' messages, in one transaction."""
        async with self.changes.unit():
            await self.changes.bump("session", (chat_key,))
            await self._db.write(
                "INSERT INTO chat_sessions (chat_key, session_no, started_at) VALUES (?, ?, ?) "
                "ON CONFLICT(chat_key) DO UPDATE SET session_no = excluded.session_no, "
                "started_at = excluded.started_at",
                (chat_key, session, started_at),
            )
            await self._db.write(
                "DELETE FROM session_messages WHERE chat_key = ? AND session_no < ?", (chat_key, session)
            )

    async def keep_newest(self, chat_key: str, session: int, keep: int) -> None:
        """Delete all but the newest ``keep`` messages of the chat (its current session's)."""
        await self._db.write(
            "DELETE FROM session_messages WHERE chat_key = ? AND id < (SELECT MIN(id) FROM "
            "(SELECT id FROM session_messages WHERE chat_key = ? AND session_no = ? "
            "ORDER BY id DESC LIMIT ?) AS newest)",
            (chat_key, chat_key, session, keep),
        )
