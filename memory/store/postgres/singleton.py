"""The PostgreSQL ``Singleton`` (``memory/store/singleton.py``): a session advisory lock held on one
dedicated connection, outside the pool.

``pg_try_advisory_lock`` belongs to the session that took it: PostgreSQL frees it when that connection
ends, however it ends (the process killed, the network gone), so a dead replica never keeps it and
another replica's next ``acquire()`` takes it. The connection goes straight to the server: behind
PgBouncer in transaction mode a session lock would not be the session's (docs/scale-out.md).
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

import psycopg

from memory.store.postgres.database import connect


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name`` (the same in every process)."""
    return int.from_bytes(hashlib.sha256(f"tierclaw:{name}".encode()).digest()[:8], "big", signed=True)


class AdvisorySingleton:
    """``name`` held by this process while its connection holds ``pg_try_advisory_lock(key)``."""

    def __init__(self, url: str, name: str) -> None:
        self.name = name
        self._url = url
        self._key = lock_key(name)
        self._conn: psycopg.AsyncConnection[Any] | None = None

    async def acquire(self) -> bool:
        """Hold the lock (True), or find another session holding it (False). A lost connection is
        dropped and a new one tries; an unreachable server raises ``MemoryDatabaseError``."""
        if await self.held():
            return True
        await self._drop()
        self._conn = await connect(self._url)
        try:
            cur = await self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,))
            row = await cur.fetchone()
        except psycopg.Error:
            await self._drop()
            raise
        if row is not None and row[0]:
            return True
        await self._drop()  # not ours: no idle connection kept while another replica holds it
        return False

    async def held(self) -> bool:
        """True while the connection that took the lock is alive (one round trip to check)."""
        if self._conn is None or self._conn.closed:
            return False
        try:
            await self._conn.execute("SELECT 1")
        except psycopg.Error:
            await self._drop()
            return False
        return True

    async def release(self) -> None:
        """Unlock, then close the session. Closing alone frees the lock only once the server's backend
        has exited, after the close returns: an ``acquire`` right after it (this process's or another's)
        could find the lock still held (``test_a_singleton_is_held_until_released`` failed so once under
        load). A lost connection's lock goes with its session anyway."""
        if self._conn is not None and not self._conn.closed:
            with contextlib.suppress(psycopg.Error):
                await self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
        await self._drop()

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error):
                await conn.close()
