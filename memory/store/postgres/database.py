"""The PostgreSQL connection pool the store's parts share: reads, writes, transactions, like ``sqlite.py``.

psycopg 3 (async) with psycopg-pool: each statement borrows a pooled connection in autocommit mode; a
``transaction()`` keeps one connection for the task that opened it (a context variable says which), so
every read and write of that task inside it joins the unit of work. Within one process transactions run
one at a time, as on SQLite (the clean write path's read-then-write decisions rely on it); between
processes PostgreSQL's own locking applies.

The table modules write ``?`` placeholders (``memory/store/sql.py``); they become psycopg's ``%s`` here.
A connection that breaks (the server restarted) is dropped by the pool and replaced; the statement that
hit it fails, and the caller's failure path runs (docs/architecture.md, "Storage").
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import secrets
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolClosed

from memory.store.errors import DriverErrors, MemoryDatabaseError, refuse_nul, register_driver_errors
from memory.store.sql import CHAT_LOCKS, CommitHook, Row
from memory.store.urls import masked

# The transaction the current task holds, if any: which database it is on, and its connection. Keyed by
# the database: a task holding one database's transaction that writes to another (two replicas' stores
# in one test, ``memory copy``) must not put those writes into the first's transaction.
_TX: contextvars.ContextVar[tuple[object, psycopg.AsyncConnection[Any]] | None] = contextvars.ContextVar(
    "tierclaw_pg_tx", default=None
)
POOL_SIZE = 10
# psycopg prepares a statement on a connection after this many runs of it there (its default is 5). With
# 10 pooled connections most statements of a short window ran unprepared, planned on every run, and a
# prepared one is planned 5 more times (custom plans) before PostgreSQL may keep a generic plan: planning
# cost the server about as much CPU as executing (docs/scale-out.md, "Planning"). 0 prepares from the
# first run; psycopg keeps at most ``prepared_max`` (100) a connection and closes the least used.
PREPARE_THRESHOLD = 0
CONNECT_TIMEOUT_S = 10


# Text or a value PostgreSQL refuses (DataError) or a constraint: the write can never succeed; a lost
# connection (OperationalError) is the server's state, so the message is tried again (memory/store/errors.py).
register_driver_errors(
    "postgresql",
    DriverErrors(
        (psycopg.Error, PoolClosed),
        (psycopg.DataError, psycopg.IntegrityError),
        lambda exc: isinstance(exc, PoolClosed),
    ),
)


@dataclass(slots=True, frozen=True)
class Written:
    """What a write reports (the cursor itself is closed by then)."""

    rowcount: int


@lru_cache(maxsize=2048)
def to_psycopg(sql: str) -> str:
    """A statement with ``?`` placeholders in psycopg's form (``%s``; a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


def describe(exc: BaseException, url: str) -> str:
    """One line for a connection or permission failure, naming the URL with its password masked."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    secret = _password(url)
    if secret:
        text = text.replace(secret, "***")
    return f"cannot use the memory database {masked(url)}: {text}"


def _password(url: str) -> str | None:
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


async def connect(url: str) -> psycopg.AsyncConnection[Any]:
    """One autocommit connection to ``url``; ``MemoryDatabaseError`` (one line, password masked) when the
    server is unreachable, refuses the password, or has no such database."""
    try:
        return await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except (psycopg.Error, OSError, ValueError) as exc:
        raise MemoryDatabaseError(describe(exc, url)) from None


@contextlib.asynccontextmanager
async def _pooled(pool: AsyncConnectionPool[Any]) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A connection from ``pool`` that does not lose a cancel sent while it was waited for.

    psycopg_pool waits for a free connection through ``asyncio.wait_for``, which on Python 3.11 returns
    the connection when a cancel lands in the same loop turn, dropping the cancel: the statement ran and
    the loop around it carried on after its task was told to stop (three gateway loops hung on it). A
    cancel that came during the wait is raised here, the connection going back to the pool; one the task
    already had (a ``finally`` writing after a cancel) is not, so cleanup still reaches the database."""
    task = asyncio.current_task()
    before = task.cancelling() if task is not None else 0
    async with pool.connection() as conn:
        if task is not None and task.cancelling() > before:
            raise asyncio.CancelledError  # leaving the pool's block puts the connection back
        yield conn


class PostgresDatabase:
    """The shared pool: ``read``, ``scalar``, ``write``, ``write_many``, ``insert``, ``transaction``."""

    kind = "postgresql"

    def __init__(self, pool: AsyncConnectionPool[Any], url: str, writer: str) -> None:
        self._pool = pool
        self.writer = writer
        self.url = url
        self.path = masked(url)
        self._tx_lock = asyncio.Lock()
        self.commit_hook: CommitHook | None = None  # the store's change versions (``changes.py``)

    @classmethod
    async def open(cls, url: str, *, pool_size: int = POOL_SIZE) -> PostgresDatabase:
        """A pool on ``url`` (call ``connect`` first: it reports a wrong URL with the server's reason).

        Its connections carry this store's writer name (``application_name``): the change counter tells
        this process's writes from other processes' by it (``postgres/schema.py``)."""
        writer = f"tierclaw-{os.getpid()}-{secrets.token_hex(4)}"
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={
                "autocommit": True,
                "connect_timeout": CONNECT_TIMEOUT_S,
                "application_name": writer,
                "prepare_threshold": PREPARE_THRESHOLD,
            },
            open=False,
            name="tierclaw-memory",
        )
        try:
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S + 5)
        except Exception as exc:
            await pool.close()
            raise MemoryDatabaseError(describe(exc, url)) from None
        return cls(pool, url, writer)

    async def close(self) -> None:
        """Close every pooled connection."""
        await self._pool.close()

    def _held(self) -> psycopg.AsyncConnection[Any] | None:
        """The connection of this database's transaction the current task holds, if any."""
        held = _TX.get()
        return held[1] if held is not None and held[0] is self else None

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        held = self._held()
        if held is not None:
            yield held
            return
        try:
            async with _pooled(self._pool) as conn:
                yield conn
        except psycopg.OperationalError:
            await self._pool.check()  # the server dropped connections: replace every dead idle one now
            raise

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Rows of one read-only statement (inside this task's transaction when it holds one).

        Outside a transaction a read that meets a dead connection (the server restarted) is tried once
        more on a fresh one: reading twice is harmless, writing twice is not, so writes are not retried."""
        try:
            return await self._read_once(sql, params)
        except psycopg.OperationalError:
            if self._held() is not None:
                raise
            await self._pool.check()
            return await self._read_once(sql, params)

    async def _read_once(self, sql: str, params: Sequence[Any]) -> list[Row]:
        async with self._connection() as conn:
            cur = await conn.execute(to_psycopg(sql), tuple(params))
            return list(await cur.fetchall())

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> int:
        """The first column of the first row as an int (0 when there is none or it is NULL)."""
        rows = await self.read(sql, params)
        return int(rows[0][0] or 0) if rows else 0

    async def write(self, sql: str, params: Sequence[Any] = ()) -> Written:
        """Run one write statement (its own transaction, or this task's)."""
        refuse_nul(params)
        async with self._connection() as conn:
            cur = await conn.execute(to_psycopg(sql), tuple(params))
            return Written(max(cur.rowcount, 0))

    async def insert(self, sql: str, params: Sequence[Any] = ()) -> int | None:
        """Run one ``INSERT … RETURNING id``; the new id, or None when nothing was inserted."""
        refuse_nul(params)
        async with self._connection() as conn:
            cur = await conn.execute(to_psycopg(sql), tuple(params))
            row = await cur.fetchone()
            return int(row[0]) if row else None

    async def returning(
        self, sql: str, params: Sequence[Any] = (), *, chat_lock: str | None = None
    ) -> list[Row]:
        """The rows of one write statement with ``RETURNING`` (its own transaction, or this task's).

        ``chat_lock``: the statement runs after ``pg_advisory_xact_lock`` on that chat's key
        (``CHAT_LOCKS``), in one transaction with it. The two are pipelined with one Sync (one round
        trip, one implicit transaction; server-side parameters, so psycopg prepares both as it does
        every statement run often); in READ COMMITTED the statement takes its snapshot after the lock
        is granted, so it sees every row whose insert held the lock's shared side before
        (docs/scale-out.md, "Platform order")."""
        refuse_nul(params)
        lock = "SELECT pg_advisory_xact_lock(%s, hashtext(%s))"
        async with self._connection() as conn:
            if chat_lock is None:
                cur = await conn.execute(to_psycopg(sql), tuple(params))
                return list(await cur.fetchall())
            if self._held() is not None:
                await conn.execute(lock, (CHAT_LOCKS, chat_lock))
                cur = await conn.execute(to_psycopg(sql), tuple(params))
                return list(await cur.fetchall())
            async with conn.pipeline():  # sent at its end, with the Sync that commits both
                await conn.execute(lock, (CHAT_LOCKS, chat_lock))
                cur = await conn.execute(to_psycopg(sql), tuple(params))
            return list(await cur.fetchall())

    async def write_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> Written:
        """One statement over many parameter rows (pipelined by psycopg)."""
        rows = [tuple(r) for r in rows]
        for row in rows:
            refuse_nul(row)
        if not rows:
            return Written(0)
        async with self._connection() as conn, conn.cursor() as cur:
            await cur.executemany(to_psycopg(sql), rows)
            return Written(max(cur.rowcount, 0))

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """One unit of work on one connection: commit on success, roll back on error. Not re-entrant."""
        if self._held() is not None:
            raise RuntimeError("a memory transaction is already open in this task")
        async with self._tx_lock:
            try:
                async with _pooled(self._pool) as conn, conn.transaction():
                    token = _TX.set((self, conn))
                    try:
                        yield
                        if self.commit_hook is not None:
                            await self.commit_hook.before_commit()
                    finally:
                        _TX.reset(token)
            except BaseException as exc:
                if self.commit_hook is not None:
                    self.commit_hook.rolled_back()
                if isinstance(exc, psycopg.OperationalError):
                    await self._pool.check()
                raise

    def in_transaction(self) -> bool:
        """Whether the current task holds ``transaction()`` (its statements join it)."""
        return self._held() is not None
