"""The SQL of Tier 0: each chat's current session and its recent messages (``memory/sessions.py``).

With memory on a session's messages are the chat's kept turns with its number (``conversation_turns``,
``turn_sessions.py``); ``session_messages`` holds them for a gateway with memory off, and the sessions a
migration to schema 24 could not move. The history read reads both (``turn_sessions.newest``).
"""

from __future__ import annotations

from memory.store.changes import ChangeFeed
from memory.store.sql import SqlDatabase
from memory.store.turn_sessions import KEEP_MESSAGES, history_order, newest


class SessionRows:
    """``chat_sessions`` (each chat's current session) and its messages (Tier 0)."""

    def __init__(self, db: SqlDatabase, changes: ChangeFeed) -> None:
        self._db = db
        self.changes = changes  # a new session bumps the chat's version: other processes' caches follow

    async def current(self, chat_key: str) -> int | None:
        """The chat's current session number, or None for a chat never reset."""
        rows = await self._db.read("SELECT session_no FROM chat_sessions WHERE chat_key = ?", (chat_key,))
        return int(rows[0][0]) if rows else None

    async def recent(self, chat_key: str, session: int, limit: int) -> list[tuple[str, str]]:
        """The last ``limit`` (role, content) of a session, newest first (at most ``KEEP_MESSAGES``)."""
        channel, _, chat_id = chat_key.partition(":")
        rows_sql, params = newest(channel, chat_id, limit, session)
        rows = await self._db.read(f"SELECT s.part, s.id, s.role, s.content FROM {rows_sql}", params)
        return [(str(r[2]), str(r[3])) for r in sorted(rows, key=history_order)[: min(limit, KEEP_MESSAGES)]]

    async def append(self, chat_key: str, session: int, role: str, content: str, created_at: str) -> None:
        """Add one message to a session's own table (memory off: no kept turns)."""
        await self._db.write(
            "INSERT INTO session_messages (chat_key, session_no, role, content, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (chat_key, session, role, content, created_at),
        )

    async def start(self, chat_key: str, session: int, started_at: str) -> None:
        """Make ``session`` the chat's current one, in one transaction: the older sessions' kept turns stay
        (the conversation tier's, out of the history); their rows in the session table go."""
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
        """Delete all but the newest ``keep`` rows of the chat in the session table (its current session's;
        kept turns are not pruned here: the history read's ``LIMIT`` does it)."""
        await self._db.write(
            "DELETE FROM session_messages WHERE chat_key = ? AND id < (SELECT MIN(id) FROM "
            "(SELECT id FROM session_messages WHERE chat_key = ? AND session_no = ? "
            "ORDER BY id DESC LIMIT ?) AS newest)",
            (chat_key, chat_key, session, keep),
        )
