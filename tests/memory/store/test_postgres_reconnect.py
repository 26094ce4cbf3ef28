"""The PostgreSQL server dropping the store's connections (a restart, a failover): the statement that
meets a dead connection fails as an ordinary error (or, for a read, is tried again), and the next ones
work on fresh connections without reopening the store."""

from __future__ import annotations

import psycopg
import pytest

from memory.store.open import open_store

T0 = "2026-01-02 03:04:05"


def _drop_connections(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


async def test_the_pool_replaces_connections_the_server_dropped(postgres_url: str) -> None:
    store = await open_store(postgres_url, warm_text=False)
    try:
        await store.jobs.record("decay", T0, "ok")
        assert _drop_connections(postgres_url) >= 1
        assert await store.jobs.last_run("decay") == T0  # a read is tried again on a fresh connection
        assert _drop_connections(postgres_url) >= 1
        try:
            await store.jobs.record("decay", "2026-01-03 00:00:00", "ok")
        except psycopg.OperationalError:
            await store.jobs.record("decay", "2026-01-03 00:00:00", "ok")  # the caller's retry works
        assert await store.jobs.last_run("decay") == "2026-01-03 00:00:00"
        assert _drop_connections(postgres_url) >= 1
        with pytest.raises(psycopg.OperationalError):
            async with store.transaction():  # inside a unit of work nothing is retried behind its back
                await store.jobs.record("x", T0, "ok")
        assert await store.jobs.last_run("x") is None
    finally:
        await store.close()
