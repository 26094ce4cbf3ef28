"""A PostgreSQL database that cannot be used is one ``MemoryDatabaseError`` line naming the URL with its
password masked: unreachable, no such database, not allowed to create the tables, newer schema."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from localservers import postgres_cluster as throwaway_pg
from memory.store.errors import MemoryDatabaseError
from memory.store.open import open_store
from memory.store.urls import is_database_url, masked


def _with(url: str, *, user: str | None = None, password: str | None = None, db: str | None = None) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    login = user or parts.username or ""
    if password:
        login += f":{password}"
    path = f"/{db}" if db else parts.path
    return urlunsplit(parts._replace(netloc=f"{login}@{host}", path=path))


def test_urls_are_told_from_paths_and_masked() -> None:
    assert is_database_url("postgresql://u:p@h/db") and is_database_url("postgres://h/db")
    assert not is_database_url("/var/lib/tierclaw/memory.db")
    assert (
        masked("postgresql://u:s3cret@h:5432/db?sslmode=require")
        == "postgresql://u:***@h:5432/db?sslmode=require"
    )
    assert masked("postgresql://u@h/db") == "postgresql://u@h/db"
    assert masked("memory.db") == "memory.db"


async def test_an_unreachable_server_is_one_line_with_the_password_masked() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://tc:s3cret@127.0.0.1:{port}/memory"
    with pytest.raises(MemoryDatabaseError) as caught:
        await open_store(url)
    text = str(caught.value)
    assert "s3cret" not in text and "postgresql://tc:***@127.0.0.1" in text and "\n" not in text


async def test_a_missing_database_is_named(postgres_cluster: throwaway_pg.Cluster) -> None:
    url = _with(postgres_cluster.url, password="s3cret", db="no_such_memory")
    with pytest.raises(MemoryDatabaseError, match="no_such_memory") as caught:
        await open_store(url)
    assert "s3cret" not in str(caught.value) and "does not exist" in str(caught.value)


async def test_a_user_who_may_not_create_tables_is_told(postgres_cluster: throwaway_pg.Cluster) -> None:
    throwaway_pg.admin_execute(
        postgres_cluster,
        "DROP DATABASE IF EXISTS tierclaw_locked WITH (FORCE)",
        "CREATE DATABASE tierclaw_locked",
        "DROP ROLE IF EXISTS tierclaw_reader",
        "CREATE ROLE tierclaw_reader LOGIN",
    )
    try:
        url = _with(postgres_cluster.url, user="tierclaw_reader", db="tierclaw_locked")
        with pytest.raises(MemoryDatabaseError, match="permission denied") as caught:
            await open_store(url)
        assert "tierclaw_locked" in str(caught.value)
    finally:
        throwaway_pg.admin_execute(
            postgres_cluster, "DROP DATABASE tierclaw_locked WITH (FORCE)", "DROP ROLE tierclaw_reader"
        )


async def test_an_empty_database_is_not_created_when_asked_not_to(postgres_url: str) -> None:
    throwaway_pg.admin_execute(
        throwaway_pg.Cluster(postgres_url), "DROP TABLE tierclaw_schema, memories CASCADE"
    )
    with pytest.raises(MemoryDatabaseError, match="holds other tables but no tierclaw memory"):
        await open_store(postgres_url, create=False)


async def test_a_newer_schema_is_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE tierclaw_schema SET version = 99")
    with pytest.raises(MemoryDatabaseError, match=r"\b99\b"):
        await open_store(postgres_url)
