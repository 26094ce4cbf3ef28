"""What a failed write means, whichever store (``memory/store/errors.py``): refused for what it holds
(never retried: the gateway skips that message), or the database's state (retried: the platform delivers
again), and a store closed under a background task (it stops quietly)."""

from __future__ import annotations

import pytest

from memory.store.errors import (
    MemoryDatabaseError,
    NulCharacterError,
    cannot_succeed_on_retry,
    is_database_error,
    store_was_closed,
)
from memory.store.open import open_store

T0 = "2026-01-02 03:04:05"


async def test_refused_content_cannot_succeed_and_a_closed_store_is_recognised(memory_db: str) -> None:
    store = await open_store(memory_db, warm_text=False)
    try:
        with pytest.raises(NulCharacterError) as nul:
            await store.inbox.add("telegram", "1", "u1", "a\x00b")
        assert cannot_succeed_on_retry(nul.value)
        insert = "INSERT INTO job_runs (job, last_run, last_status) VALUES (?, ?, ?)"
        await store.db.write(insert, ("decay", T0, "ok"))
        with pytest.raises(Exception) as twice:  # the driver's own unique-key error
            await store.db.write(insert, ("decay", T0, "ok"))
        assert cannot_succeed_on_retry(twice.value) and is_database_error(twice.value)
        assert not store_was_closed(twice.value)
    finally:
        await store.close()
    with pytest.raises(Exception) as closed:
        await store.jobs.last_run("decay")
    assert store_was_closed(closed.value) and not cannot_succeed_on_retry(closed.value)


async def test_postgresql_refused_values_and_lost_connections(postgres_url: str) -> None:
    import psycopg

    store = await open_store(postgres_url, warm_text=False)
    try:
        with pytest.raises(psycopg.DataError) as refused:  # a value PostgreSQL refuses (class 22)
            await store.db.read("SELECT 1 / 0")
        assert cannot_succeed_on_retry(refused.value)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        with pytest.raises(psycopg.OperationalError) as lost:
            async with store.transaction():
                await store.jobs.record("decay", T0, "ok")
        assert not cannot_succeed_on_retry(lost.value) and is_database_error(lost.value)
        await store.jobs.record("decay", T0, "ok")  # the pool reconnected
        assert await store.jobs.last_run("decay") == T0
    finally:
        await store.close()
    assert is_database_error(MemoryDatabaseError("x")) and not is_database_error(ValueError("x"))
