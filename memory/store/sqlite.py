"""The SQLite connection all store modules share: open/upgrade the file, reads, writes, transactions.

One aiosqlite connection (its own thread) serves the whole process. Writes are serialised by one lock so a
statement can never join another task's half-done transaction: ``transaction()`` holds the lock and one
``BEGIN IMMEDIATE`` for a unit of work, and a write made *inside* it by the same task runs directly (a
context variable says so) instead of waiting for the lock it already holds. Reads need no lock (WAL).

Each read or write is one hop to the database thread (``execute_fetchall``, not execute + fetch + close):
hops, not SQL, dominate the reply path's memory cost (docs/architecture.md, "The path of one message").
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import aiosqlite

from memory.files.private import private_dir, private_file
from memory.store.errors import (
    DriverErrors,
    MemoryDatabaseError,
    refuse_nul,
    register_driver_errors,
)
from memory.store.schema import check_version, migrate
from memory.store.sql import CommitHook, Params, Row, chunks, marks, qualified

log = logging.getLogger("tierclaw.memory")


__all__ = [
    "MemoryDatabaseError",
    "Params",
    "Row",
    "SQLiteDatabase",
    "chunks",
    "file_health",
    "marks",
    "qualified",
]

# The database whose ``transaction()`` the current task holds, if any (a task in one file's transaction
# that writes to another file must still take that one's lock).
_IN_TRANSACTION: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "tierclaw_in_tx", default=None
)


def _closed(exc: BaseException) -> bool:
    """Whether ``exc`` is aiosqlite's or sqlite3's complaint about a closed connection."""
    if isinstance(exc, sqlite3.ProgrammingError):
        return "closed" in str(exc).lower()
    if isinstance(exc, ValueError):
        text = str(exc).lower()
        return "connection closed" in text or "no active connection" in text
    return False


# A value SQLite refuses or a constraint: the write can never succeed (memory/store/errors.py).
register_driver_errors(
    "sqlite", DriverErrors((sqlite3.Error,), (sqlite3.DataError, sqlite3.IntegrityError), _closed)
)


def file_health(path: str) -> tuple[int, str]:
    """The file's schema version and SQLite's ``quick_check`` verdict ("ok" when sound), read-only:
    nothing is created, migrated or locked for long (``tierclaw doctor``). Raises ``MemoryDatabaseError``
    with SQLite's reason (so its caller needs no ``sqlite3``: only the store speaks SQL)."""
    try:
        conn = sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)
        try:
            conn.execute("PRAGMA busy_timeout = 2000")
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            verdict = str(conn.execute("PRAGMA quick_check").fetchone()[0])
            return version, verdict
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise MemoryDatabaseError(str(exc)) from exc


def _prepare_file(path: str) -> None:
    """Open synchronously once: WAL, then forward migrations. Raises MemoryDatabaseError on bad files."""
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise MemoryDatabaseError(f"cannot open memory database {path}: {exc}") from exc
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        check_version(conn)  # refuse a newer file before changing anything in it
        conn.execute("PRAGMA journal_mode = WAL")
        old, new = migrate(conn)
        if old != new:
            log.info("[memory] schema of %s upgraded from version %d to %d", path, old, new)
    except sqlite3.DatabaseError as exc:
        raise MemoryDatabaseError(f"{path} is not a usable memory database ({exc})") from exc
    except RuntimeError as exc:
        raise MemoryDatabaseError(str(exc)) from exc
    finally:
        conn.close()


class SQLiteDatabase:
    """The shared connection: ``read``, ``write``, ``write_many``, ``transaction``. Create with ``open``."""

    kind = "sqlite"

    def __init__(self, conn: aiosqlite.Connection, path: str) -> None:
        self._conn = conn
        self.path = path
        self._write_lock = asyncio.Lock()
        self.commit_hook: CommitHook | None = None  # the store's change versions (``changes.py``)

    @classmethod
    async def open(cls, path: str, *, create: bool = True) -> SQLiteDatabase:
        """Open (and create or upgrade) the file at ``path``."""
        if path == ":memory:" or path.startswith("file:"):
            raise MemoryDatabaseError("the memory database must be a file path (':memory:' is not supported)")
        target = Path(path)
        if not create and not target.exists():
            raise MemoryDatabaseError(f"memory database {path} does not exist")
        try:
            private_dir(target.parent)  # 0700 where created; docs/architecture.md, "Storage"
            if not target.parent.is_dir():
                raise NotADirectoryError(20, "not a directory", str(target.parent))
            if create and not os.access(target.parent, os.W_OK | os.X_OK):
                raise PermissionError(13, "the directory is not writable", str(target.parent))
            if create and target.exists() and not os.access(target, os.W_OK):
                raise PermissionError(13, "the file is read-only", str(target))
            private_file(target)  # 0600 before SQLite writes a byte; its -wal and -shm take the same mode
            for companion in (Path(f"{path}-wal"), Path(f"{path}-shm")):
                if companion.exists():
                    private_file(companion)
        except OSError as exc:
            where = exc.filename or target
            raise MemoryDatabaseError(
                f"cannot use the memory database {path}: {where}: {exc.strerror or exc} "
                "(set memory.dbPath to a file in a directory you can write, or fix its permissions)"
            ) from None
        await asyncio.to_thread(_prepare_file, path)
        conn = await aiosqlite.connect(path, isolation_level=None)
        try:
            await conn.execute("PRAGMA busy_timeout = 5000")
            await conn.execute("PRAGMA synchronous = NORMAL")
            await conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            await conn.close()
            raise
        return cls(conn, path)

    async def close(self) -> None:
        """Close the connection (WAL is checkpointed by SQLite on the last close)."""
        await self._conn.close()

    async def read(self, sql: str, params: Params = ()) -> list[Row]:
        """Rows of one read-only statement, in one hop to the database thread."""
        return list(await self._conn.execute_fetchall(sql, params))

    async def scalar(self, sql: str, params: Params = ()) -> int:
        """The first column of the first row as an int (0 when there is none or it is NULL)."""
        rows = list(await self._conn.execute_fetchall(sql, params))
        return int(rows[0][0] or 0) if rows else 0

    async def write(self, sql: str, params: Params = ()) -> aiosqlite.Cursor:
        """Run one write statement: inside this task's transaction directly, else under the write lock."""
        refuse_nul(params)
        if _IN_TRANSACTION.get() is self:
            return await self._conn.execute(sql, params)
        async with self._write_lock:
            return await self._conn.execute(sql, params)

    async def insert(self, sql: str, params: Params = ()) -> int | None:
        """Run one ``INSERT … RETURNING id`` (same locking rule as ``write``); the new id, or None when
        nothing was inserted (``ON CONFLICT DO NOTHING``)."""
        refuse_nul(params)
        if _IN_TRANSACTION.get() is self:
            rows = await self._conn.execute_fetchall(sql, params)
        else:
            async with self._write_lock:
                rows = await self._conn.execute_fetchall(sql, params)
        found = list(rows)
        return int(found[0][0]) if found else None

    async def returning(self, sql: str, params: Params = (), *, chat_lock: str | None = None) -> list[Row]:
        """The rows of one write statement with ``RETURNING`` (same locking rule as ``write``).
        ``chat_lock`` names what PostgreSQL locks first (``postgres/database.py``); here the one
        writer of the file is serialised already, so nothing more is needed."""
        refuse_nul(params)
        if _IN_TRANSACTION.get() is self:
            return list(await self._conn.execute_fetchall(sql, params))
        async with self._write_lock:
            return list(await self._conn.execute_fetchall(sql, params))

    async def write_many(self, sql: str, rows: Iterable[Params]) -> aiosqlite.Cursor:
        """``executemany`` with the same locking rule as ``write``."""
        rows = list(rows)
        for row in rows:
            refuse_nul(row)
        if _IN_TRANSACTION.get() is self:
            return await self._conn.executemany(sql, rows)
        async with self._write_lock:
            return await self._conn.executemany(sql, rows)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """One unit of work: the write lock and ``BEGIN IMMEDIATE``; commit on success, roll back on error.

        Store methods called inside it by the same task join it. Not re-entrant: a nested call would wait
        for itself, so it refuses instead.
        """
        if _IN_TRANSACTION.get() is self:
            raise RuntimeError("a memory transaction is already open in this task")
        async with self._write_lock:
            await self._conn.execute("BEGIN IMMEDIATE")
            token = _IN_TRANSACTION.set(self)
            try:
                yield
                if self.commit_hook is not None:
                    await self.commit_hook.before_commit()
                await self._conn.execute("COMMIT")
            except BaseException:
                await self._conn.execute("ROLLBACK")
                if self.commit_hook is not None:
                    self.commit_hook.rolled_back()
                raise
            finally:
                _IN_TRANSACTION.reset(token)

    def in_transaction(self) -> bool:
        """Whether the current task holds ``transaction()`` (its writes join it)."""
        return _IN_TRANSACTION.get() is self
