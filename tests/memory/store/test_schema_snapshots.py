"""Every migration of both stores still builds exactly the schema it built when it shipped.

The snapshots (``schema_snapshots/*.json``, see ``schema_dump.py``) hold each version's schema as the
migrations built it before the two stores' schemas were written once (issue 38 item 7). A database is
built here one version at a time and compared with the snapshot at every step: a fresh database ends
with the same schema as before, and a database left at any earlier version by an older tierclaw holds
the snapshot's schema of that version, so the remaining steps upgrade it exactly as they did.
With rows in it, ``test_schema.py`` (SQLite) and ``test_postgres_upgrade_from_v1`` below (PostgreSQL)
upgrade a version-1 database to the current one.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from localservers import postgres_cluster as throwaway_pg
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.store import schema, schema_tables
from memory.store.postgres import schema as pg_schema
from memory.text import tokenizer
from memory.text.dedup import norm_key
from tests.memory.store import schema_dump


def _differences(expected: schema_dump.Schema, got: schema_dump.Schema) -> list[str]:
    out = [f"missing {k}: {expected[k]}" for k in sorted(expected) if k not in got]
    out += [f"unexpected {k}: {got[k]}" for k in sorted(got) if k not in expected]
    out += [
        f"changed {k}:\n  was {expected[k]}\n  now {got[k]}"
        for k in sorted(expected)
        if k in got and got[k] != expected[k]
    ]
    return out


def _portable(schema: schema_dump.Schema) -> schema_dump.Schema:
    """What every PostgreSQL major prints alike: which objects exist, and each column's position, type,
    nullability, identity and collation (not its default's text)."""
    return {k: (v.split(" default ")[0] if k.startswith("column ") else "") for k, v in schema.items()}


def _check(store: str, versions: list[schema_dump.Schema], *, portable: bool = False) -> None:
    snapshot = schema_dump.load(store)
    if portable:
        versions = [_portable(v) for v in versions]
    assert len(snapshot) == schema.SCHEMA_VERSION, (
        f"a new migration: add its version to schema_snapshots/{store}.json (schema_dump.py says how)"
    )
    for version, got in enumerate(versions):
        expected = schema_dump.replay(snapshot, version)
        problems = _differences(_portable(expected) if portable else expected, got)
        assert not problems, f"{store} version {version}:\n" + "\n".join(problems)


def test_sqlite_every_version_matches_the_snapshot(tmp_path: Path) -> None:
    _check("sqlite", schema_dump.sqlite_versions(tmp_path / "versions.db"))


_numbers = itertools.count(1)


@pytest.fixture
def empty_postgres_url(postgres_cluster: throwaway_pg.Cluster) -> Iterator[str]:
    """A database with no tierclaw schema (``postgres_url``'s is copied from one that has it)."""
    name = f"tierclaw_empty_{os.getpid()}_{next(_numbers)}"
    throwaway_pg.admin_execute(postgres_cluster, f"CREATE DATABASE {name}")
    try:
        yield postgres_cluster.url_for(name)
    finally:
        throwaway_pg.admin_execute(postgres_cluster, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_postgres_every_version_matches_the_snapshot(empty_postgres_url: str) -> None:
    """On another PostgreSQL major than the snapshot's, definitions may print otherwise: only what every
    major prints alike is compared there."""
    written_with = int(schema_dump.SERVER.read_text(encoding="utf-8"))
    portable = await schema_dump.server_major(empty_postgres_url) != written_with
    _check("postgres", await schema_dump.postgres_versions(empty_postgres_url), portable=portable)


async def test_postgres_upgrade_from_v1_keeps_rows_and_backfills_refs(empty_postgres_url: str) -> None:
    """A version-1 database with memories in it opens as the current version with every row usable."""
    conn = await psycopg.AsyncConnection.connect(empty_postgres_url, autocommit=True)
    content = "User deploys the gateway with systemd on a Raspberry Pi"
    plain = "User keeps notes in Obsidian"
    try:
        assert await pg_schema.migrate(conn, "test", target=1) == (0, 1)
        for text, ref in ((content, "telegram:42:1001"), (plain, None)):
            await conn.execute(
                "INSERT INTO memories (owner, topic, category, content, search_text, norm_key, importance, "
                "source, source_ref) VALUES ('alice', 'setup', 'decision', %s, %s, %s, 0.8, 'manual', %s)",
                (text, tokenizer.index_text(text), norm_key(text), ref),
            )
        await conn.execute(
            "INSERT INTO daily_events (owner, event_date, summary) VALUES ('alice', '2026-01-02', 'moved')"
        )
        cur = await conn.execute("SELECT content, id FROM memories")
        ids = dict(await cur.fetchall())
    finally:
        await conn.close()

    async with await MemoryEngine.open(empty_postgres_url) as eng:
        mem = await eng.get("alice", ids[content])
        assert mem is not None and (mem.content, mem.importance, mem.topic) == (content, 0.8, "setup")
        assert mem.refs == ["telegram:42:1001"]
        assert await eng.refs("alice", [ids[content], ids[plain]]) == {ids[content]: ["telegram:42:1001"]}
        hits = await eng.search("alice", "how do I deploy the gateway on my raspberry pi?")
        assert [h.id for h in hits][:1] == [ids[content]]
        later = await eng.write("alice", Fact("User drinks green tea", source_ref="tg:2"))
        assert later.id not in ids.values()
    conn = await psycopg.AsyncConnection.connect(empty_postgres_url, autocommit=True)
    try:
        assert await pg_schema.current_version(conn) == schema.SCHEMA_VERSION
        cur = await conn.execute("SELECT started_at, ended_at, created_at FROM daily_events")
        started, ended, created = (await cur.fetchall())[0]
        assert started == ended == created  # version 7 gave the old event both ends
    finally:
        await conn.close()


def test_sqlite_migration_text_is_one_transaction_per_version(tmp_path: Path) -> None:
    """A failing step leaves the file at the version before it (the steps are applied as before)."""
    path = tmp_path / "v3.db"
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        schema.migrate(conn, target=3)
        conn.execute("CREATE TABLE embedding_cache (x)")  # version 4 creates it: that step must fail whole
        with pytest.raises(sqlite3.OperationalError):
            schema.migrate(conn)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        columns = {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
        assert "embedding" not in columns
    finally:
        conn.close()


def test_a_store_fills_exactly_the_parts_the_templates_name() -> None:
    """A store's own part left out, or one no template names (a typo), is refused when the schema loads."""
    parts = {name: "" for name in schema_tables.own_parts()}
    assert schema_tables.render(schema_tables.SQLITE, parts)
    with pytest.raises(ValueError, match="missing \\['memories_own'\\]"):
        schema_tables.render(schema_tables.SQLITE, {k: v for k, v in parts.items() if k != "memories_own"})
    with pytest.raises(ValueError, match="unused \\['memory_own'\\]"):
        schema_tables.render(schema_tables.POSTGRES, {**parts, "memory_own": ""})
