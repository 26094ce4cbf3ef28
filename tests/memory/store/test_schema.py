"""Schema versioning of the memory database: fresh files, forward migration, and files we must refuse."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory.engine import MemoryDatabaseError, MemoryEngine
from memory.records import Fact
from memory.store import schema
from memory.text import tokenizer
from memory.text.dedup import norm_key
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

EXPECTED_TABLES = {"memories", "memories_fts", "daily_events", "extraction_failures", "memory_refs"}


def _sql(path: Path | str, query: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def _tables(path: Path | str) -> set[str]:
    return {r[0] for r in _sql(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}


def _user_version(path: Path | str) -> int:
    return _sql(path, "PRAGMA user_version")[0][0]


def _build_v1(path: Path) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        assert schema.migrate(conn, target=1) == (0, 1)
    finally:
        conn.close()


async def test_fresh_file_has_current_version_tables_and_wal(engine: MemoryEngine) -> None:
    assert schema.SCHEMA_VERSION >= 2
    assert _user_version(engine.path) == schema.SCHEMA_VERSION
    assert _tables(engine.path) >= EXPECTED_TABLES
    assert _sql(engine.path, "PRAGMA journal_mode")[0][0].lower() == "wal"


async def test_fresh_file_is_usable_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    async with await MemoryEngine.open(path) as eng:
        written = await eng.write("alice", Fact("User prefers green tea", source_ref="tg:1"))
    async with await MemoryEngine.open(path, create=False) as eng:
        mem = await eng.get("alice", written.id)
        assert mem is not None and mem.content == "User prefers green tea"
        assert mem.refs == ["tg:1"]
    assert _user_version(path) == schema.SCHEMA_VERSION


def test_migrate_to_v1_builds_old_schema(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    _build_v1(path)
    assert _user_version(path) == 1
    tables = _tables(path)
    assert {"memories", "memories_fts", "daily_events", "extraction_buffer"} <= tables  # version 1's
    assert "memory_refs" not in tables


async def test_v1_file_is_migrated_with_rows_intact_and_refs_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    _build_v1(path)
    content = "User deploys the gateway with systemd on a Raspberry Pi"
    plain = "User keeps notes in Obsidian"
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        rows = [(content, "telegram:42:1001", "decision", 0.8), (plain, None, "event", 0.5)]
        for text, ref, category, importance in rows:
            conn.execute(
                "INSERT INTO memories (owner, tier, project, topic, category, content, search_text, "
                "norm_key, importance, source, source_ref) "
                "VALUES (?, 2, '_global', 'setup', ?, ?, ?, ?, ?, 'manual', ?)",
                ("alice", category, text, tokenizer.index_text(text), norm_key(text), importance, ref),
            )
        ids = {r[1]: r[0] for r in conn.execute("SELECT id, content FROM memories")}
    finally:
        conn.close()

    async with await MemoryEngine.open(path) as eng:
        assert _user_version(path) == schema.SCHEMA_VERSION
        assert "memory_refs" in _tables(path)
        mem = await eng.get("alice", ids[content])
        assert mem is not None
        assert (mem.content, mem.category, mem.importance, mem.topic, mem.source) == (
            content,
            "decision",
            0.8,
            "setup",
            "manual",
        )
        assert mem.source_ref == "telegram:42:1001"
        assert mem.refs == ["telegram:42:1001"]
        assert await eng.refs("alice", [ids[content], ids[plain]]) == {ids[content]: ["telegram:42:1001"]}
        hits = await eng.search("alice", "how do I deploy the gateway on my raspberry pi?")
        assert [h.id for h in hits][:1] == [ids[content]]
        # Reopening an up-to-date file changes nothing (no duplicated refs, no second migration).
    async with await MemoryEngine.open(path) as eng:
        assert await eng.refs("alice", [ids[content]]) == {ids[content]: ["telegram:42:1001"]}
    assert _sql(path, "SELECT COUNT(*) FROM memory_refs")[0][0] == 1
    assert _sql(path, "SELECT COUNT(*) FROM memories")[0][0] == 2


async def test_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    newer = schema.SCHEMA_VERSION + 1
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("CREATE TABLE from_the_future (x)")
    conn.execute(f"PRAGMA user_version = {newer}")
    conn.close()
    with pytest.raises(MemoryDatabaseError, match=rf"\b{newer}\b"):
        await MemoryEngine.open(path)
    assert _user_version(path) == newer
    assert _tables(path) == {"from_the_future"}


def test_migrate_refuses_newer_schema_directly(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "f.db"), isolation_level=None)
    try:
        conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 5}")
        with pytest.raises(schema.SchemaTooNewError, match=str(schema.SCHEMA_VERSION + 5)):
            schema.migrate(conn)
    finally:
        conn.close()


@pytest.mark.parametrize(
    "payload",
    [
        random.Random(1234).randbytes(8192),
        b"this is a plain text file, not a database\n" * 100,
        b"SQLite format 3\x00" + random.Random(99).randbytes(4080),
    ],
    ids=["random-bytes", "text-file", "bad-header-body"],
)
async def test_corrupt_file_raises_memory_database_error(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(payload)
    with pytest.raises(MemoryDatabaseError):
        await MemoryEngine.open(path)


async def test_open_without_create_on_missing_path_does_not_create(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "missing.db"
    with pytest.raises(MemoryDatabaseError, match=r"missing\.db"):
        await MemoryEngine.open(path, create=False)
    assert not path.exists()
    assert not path.parent.exists()


def test_in_memory_database_is_refused_clearly_without_hanging() -> None:
    """``open(":memory:")`` cannot work (schema is built on a separate connection): a clear error, no hang.

    Run in a subprocess: a failed open that leaks its aiosqlite thread would otherwise hang pytest's exit.
    """
    script = textwrap.dedent(
        """
        import asyncio
        import os
        import sys
        import traceback

        from memory.engine import MemoryDatabaseError, MemoryEngine

        async def main():
            try:
                await MemoryEngine.open(":memory:")
            except MemoryDatabaseError as exc:
                assert "file path" in str(exc), exc
                print("OK")

        try:
            asyncio.run(main())
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)  # a leaked aiosqlite thread must not keep the interpreter alive
        """
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=PROCESS_CEILING,
            cwd=REPO,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        pytest.fail(f"open(':memory:') hung (leaked connection after a failed open?):\n{err[-2000:]}")
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr[-2000:]


async def test_stats_counts_an_owner_who_has_only_events(tmp_path: Path) -> None:
    """owners() and stats()['owners'] agree, also for an owner with Tier 3 events and no memories."""
    from memory.engine import MemoryEngine

    engine = await MemoryEngine.open(tmp_path / "m.db")
    try:
        await engine.events.add("bob", "went hiking", event_date="2024-05-01")
        assert await engine.owners() == ["bob"]
        assert (await engine.stats())["owners"] == 1
    finally:
        await engine.close()
