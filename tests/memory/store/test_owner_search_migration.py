"""Schema 26 on a database made before it (issue 38): the memories' full-text index is rebuilt keyed by
owner, the candidates and their bm25 scores are what version 25's query gave, and the index stays whole
through writes and FTS5's own rebuild (SQLite); PostgreSQL's version 26 is empty (``postgres/schema.py`` says
why) and a version 25 database goes through it with its rows and index."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import psycopg

from localservers import postgres_cluster as throwaway_pg
from memory.engine import MemoryEngine
from memory.store import schema
from memory.store.postgres import schema as pg_schema
from memory.text import tokenizer

WORDS = ("tea", "chess", "trip", "lyon", "green", "club", "river", "bicycle", "morning", "june", "piano")
WORDS += ("garden", "茶", "象棋", "旅行", "花园")
OWNERS = ("alice", "bob", "feishu:ou_1", "carol")

# Version 25's candidate query (main before schema 26): every owner's matches, then the owner's.
_V25_QUERY = (
    "SELECT m.id, bm25(memories_fts) AS b FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
    "WHERE memories_fts MATCH ? AND m.owner = ? AND m.is_archived = 0 AND m.tier IN (2) ORDER BY b LIMIT ?"
)


def _v25_file(path: Path, rows: int = 240) -> sqlite3.Connection:
    """A file at schema 25 holding ``rows`` memories of four owners, written by version 25's triggers."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    schema.migrate(conn, target=25)
    rng = random.Random(7)
    for i in range(rows):
        content = " ".join(rng.sample(list(WORDS), rng.randint(2, 7)))
        conn.execute(
            "INSERT INTO memories (owner, content, search_text, norm_key) VALUES (?, ?, ?, ?)",
            (OWNERS[i % len(OWNERS) if i % 5 else 0], content, tokenizer.index_text(content), f"k{i}"),
        )
    conn.execute("UPDATE memories SET is_archived = 1 WHERE id % 17 = 0")
    return conn


def _queries() -> list[tuple[str, list[str]]]:
    rng = random.Random(3)
    return [(owner, rng.sample(list(WORDS), rng.randint(1, 3))) for owner in OWNERS for _ in range(12)]


def _integrity(conn: sqlite3.Connection) -> None:
    """FTS5's check of the index against its content (raises when they differ)."""
    conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")


async def test_a_version_25_file_keeps_its_candidates_and_scores(tmp_path: Path) -> None:
    path = tmp_path / "v25.db"
    conn = _v25_file(path)
    before = {}
    for owner, terms in _queries():
        params = (tokenizer.match_expression(terms), owner, 50)
        before[owner, tuple(terms)] = conn.execute(_V25_QUERY, params).fetchall()
    conn.close()
    assert sum(map(len, before.values())) > 200

    engine = await MemoryEngine.open(path)
    try:
        for (owner, terms), rows in before.items():
            found = await engine.store.search.matches(owner, list(terms), tiers=(2,), limit=50)
            assert [(c.id, -c.text_score) for c in found] == [(i, b) for i, b in rows]  # bit for bit
    finally:
        await engine.close()
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        assert conn.execute("SELECT owner FROM search_owners ORDER BY slot").fetchall() == [
            (o,) for o in OWNERS
        ]  # slots in the order owners first wrote
        _integrity(conn)
    finally:
        conn.close()


def test_writes_and_rebuild_keep_the_index_whole(tmp_path: Path) -> None:
    path = tmp_path / "v26.db"
    conn = _v25_file(path, rows=80)
    schema.migrate(conn)
    conn.execute("INSERT INTO memories (owner, content, search_text) VALUES ('dave', 'piano', 'piano')")
    conn.execute("UPDATE memories SET search_text = 'river garden' WHERE id = 3")
    conn.execute("UPDATE memories SET owner = 'dave' WHERE id = 5")  # the row moves to dave's range
    conn.execute("DELETE FROM memories WHERE id = 7")
    _integrity(conn)

    def dave() -> list[int]:
        sql = (
            "SELECT rowid & ((1 << ?) - 1) FROM memories_fts WHERE memories_fts MATCH ? AND rowid BETWEEN "
            "(SELECT slot << ? FROM search_owners WHERE owner = 'dave') "
            "AND (SELECT ((slot + 1) << ?) - 1 FROM search_owners WHERE owner = 'dave') ORDER BY rowid"
        )
        shift = schema.OWNER_SHIFT
        words = tokenizer.match_expression(list(WORDS))
        return [r[0] for r in conn.execute(sql, (shift, words, shift, shift)).fetchall()]

    assert dave() == [5, 81]
    conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")  # the view gives the rowids
    _integrity(conn)
    assert dave() == [5, 81]
    conn.close()


async def test_postgres_version_25_migrates_with_its_index(postgres_cluster: throwaway_pg.Cluster) -> None:
    name = f"tierclaw_v25_{os.getpid()}"
    throwaway_pg.admin_execute(postgres_cluster, f"CREATE DATABASE {name} TEMPLATE template0")
    try:
        await _postgres_from_25(postgres_cluster.url_for(name))
    finally:
        throwaway_pg.admin_execute(postgres_cluster, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def _postgres_from_25(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        assert await pg_schema.migrate(conn, "test", target=25) == (0, 25)
        await conn.execute(
            "INSERT INTO memories (owner, content, search_text) "
            "VALUES ('alice', 'tea', 'tea'), ('bob', 'tea', 'tea')"
        )
        assert await pg_schema.migrate(conn, "test") == (25, schema.SCHEMA_VERSION)
        cur = await conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'memories'")
        indexes = " ".join(r[0] for r in await cur.fetchall())
        assert "idx_memories_search ON public.memories USING gin (search_tsv)" in indexes  # nothing new here
        cur = await conn.execute(
            "SELECT owner FROM memories WHERE search_tsv @@ CAST(%s AS tsquery) AND owner = %s",
            ("'tea'", "bob"),
        )
        assert await cur.fetchall() == [("bob",)]
