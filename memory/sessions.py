"""Tier 0: the recent messages of each chat, in SQLite so a restart keeps the conversation.

A chat (``channel:chat_id``) has a current session number; ``/new`` starts the next one, after which the
model no longer sees the old messages (extraction has them: the buffer is separate). Old sessions and all
but the newest ``KEEP_MESSAGES`` of a session are pruned so the table stays small over months.
"""

from __future__ import annotations

from datetime import datetime

from memory.clock import to_db, utcnow
from memory.engine import MemoryEngine

# Messages kept per chat session (the model sees at most ``history_messages`` of them).
KEEP_MESSAGES = 200
# Prune a chat every this many appended messages.
PRUNE_EVERY = 50


class SessionStore:
    """Per-chat conversation history on the engine's connection."""

    def __init__(self, engine: MemoryEngine) -> None:
        self._engine = engine
        self._current: dict[str, int] = {}
        self._appends = 0

    async def current(self, chat_key: str) -> int:
        """The chat's current session number (1 for a chat never seen)."""
        cached = self._current.get(chat_key)
        if cached is None:
            rows = await self._engine.fetchall(
                "SELECT session_no FROM chat_sessions WHERE chat_key = ?", (chat_key,)
            )
            cached = int(rows[0][0]) if rows else 1
            self._current[chat_key] = cached
        return cached

    async def history(self, chat_key: str, limit: int) -> list[tuple[str, str]]:
        """The last ``limit`` messages of the chat's current session as (role, content), oldest first."""
        if limit <= 0:
            return []
        session = await self.current(chat_key)
        rows = await self._engine.fetchall(
            "SELECT role, content FROM session_messages WHERE chat_key = ? AND session_no = ? "
            "ORDER BY id DESC LIMIT ?",
            (chat_key, session, limit),
        )
        return [(r[0], r[1]) for r in reversed(rows)]

    async def append(self, chat_key: str, role: str, content: str, now: datetime | None = None) -> None:
        """Add one message to the chat's current session."""
        session = await self.current(chat_key)
        await self._engine.execute_write(
            "INSERT INTO session_messages (chat_key, session_no, role, content, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (chat_key, session, role, content, to_db(now or utcnow())),
        )
        self._appends += 1
        if self._appends % PRUNE_EVERY == 0:
            await self._prune(chat_key, session)

    async def new_session(self, chat_key: str, now: datetime | None = None) -> int:
        """Start the next session of the chat; returns its number. Older sessions' messages are dropped."""
        session = await self.current(chat_key) + 1
        async with self._engine.transaction() as db:
            await db.execute(
                "INSERT INTO chat_sessions (chat_key, session_no, started_at) VALUES (?, ?, ?) "
                "ON CONFLICT(chat_key) DO UPDATE SET session_no = excluded.session_no, "
                "started_at = excluded.started_at",
                (chat_key, session, to_db(now or utcnow())),
            )
            await db.execute(
                "DELETE FROM session_messages WHERE chat_key = ? AND session_no < ?", (chat_key, session)
            )
        self._current[chat_key] = session
        return session

    async def _prune(self, chat_key: str, session: int) -> None:
        await self._engine.execute_write(
            "DELETE FROM session_messages WHERE chat_key = ? AND id < (SELECT MIN(id) FROM "
            "(SELECT id FROM session_messages WHERE chat_key = ? AND session_no = ? "
            "ORDER BY id DESC LIMIT ?))",
            (chat_key, chat_key, session, KEEP_MESSAGES),
        )
