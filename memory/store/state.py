"""The SQL of the message path's own state: Tier 0 chat sessions, the scheduled jobs' last runs and each
person's scratchpad."""

from __future__ import annotations

from memory.store.sql import SqlDatabase


class SessionRows:
    """``chat_sessions`` (each chat's current session) and ``session_messages`` (Tier 0)."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

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
        async with self._db.transaction():
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


class JobRows:
    """``job_runs``: when each scheduled job last ran and how it ended."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def last_run(self, job: str) -> str | None:
        """The stored time of the job's last run, or None."""
        rows = await self._db.read("SELECT last_run FROM job_runs WHERE job = ?", (job,))
        return rows[0][0] if rows else None

    async def record(self, job: str, when: str, status: str) -> None:
        """Remember a run of ``job``."""
        await self._db.write(
            "INSERT INTO job_runs (job, last_run, last_status) VALUES (?, ?, ?) "
            "ON CONFLICT(job) DO UPDATE SET last_run = excluded.last_run, last_status = excluded.last_status",
            (job, when, status),
        )

    async def all(self) -> list[tuple[str, str, str]]:
        """(job, last run, status) of every job."""
        return [
            tuple(r)
            for r in await self._db.read("SELECT job, last_run, last_status FROM job_runs ORDER BY job")
        ]


class ScratchpadRows:
    """``scratchpads``: one note per owner."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def get(self, owner: str) -> tuple[str, str] | None:
        """(content, updated_at) of the owner's note, or None when there is none."""
        rows = await self._db.read("SELECT content, updated_at FROM scratchpads WHERE owner = ?", (owner,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    async def put(self, owner: str, content: str, updated_at: str) -> None:
        """Replace the owner's note."""
        await self._db.write(
            "INSERT INTO scratchpads (owner, content, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(owner) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at",
            (owner, content, updated_at),
        )

    async def clear(self, owner: str) -> bool:
        """Delete the owner's note; False when there was none."""
        cur = await self._db.write("DELETE FROM scratchpads WHERE owner = ?", (owner,))
        return cur.rowcount > 0
