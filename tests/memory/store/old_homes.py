"""Homes left at an older schema version with rows in them, for the migration tests of both stores."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import psycopg

from localservers import postgres_cluster as throwaway_pg
from memory.store import schema
from memory.store.postgres import schema as pg_schema


def old_sqlite_home(path: Path, version: int, statements: Sequence[str]) -> str:
    """A SQLite file at ``path`` migrated to ``version``, then ``statements`` run in it; its path."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        schema.migrate(conn, target=version)
        for sql in statements:
            conn.execute(sql)
    finally:
        conn.close()
    return str(path)


@contextlib.asynccontextmanager
async def old_postgres_home(
    cluster: throwaway_pg.Cluster, name: str, version: int, statements: Sequence[str]
) -> AsyncIterator[str]:
    """A database ``name`` (made unique to this process) on ``cluster`` migrated to ``version``, then
    ``statements`` run in it; its URL, dropped afterwards."""
    name = f"{name}_{os.getpid()}"
    throwaway_pg.admin_execute(cluster, f"CREATE DATABASE {name}")
    url = cluster.url_for(name)
    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        try:
            await pg_schema.migrate(conn, "test", target=version)
            for sql in statements:
                await conn.execute(sql)  # type: ignore[arg-type]
        finally:
            await conn.close()
        yield url
    finally:
        throwaway_pg.admin_execute(cluster, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
