"""What a store's schema is, as a flat ``{key: definition}`` dict that two databases can be compared by,
and the committed snapshots of it (``schema_snapshots/``): every version's schema, for both stores.

The snapshots were written from the migrations as they were before the schema was written once for both
stores (issue 38 item 7); ``test_schema_snapshots.py`` checks that the migrations of today still build,
version by version, exactly those schemas. A new migration adds a version to the snapshots
(``python -m tests.memory.store.schema_dump URL``, the URL of an empty PostgreSQL database, appends the
versions they lack and refuses when a version they hold is built otherwise): a change to a version already
in them is a change to what a shipped migration does, which must never happen.

SQLite: every ``sqlite_master`` row, its ``CREATE`` text verbatim (``ALTER TABLE … ADD COLUMN`` appends the
column's text there, so a changed type shows), and the ``change_clock`` row.
PostgreSQL: columns (position, type, nullability, default, identity, collation), constraints, indexes,
triggers, functions (not an extension's own), extensions, sequences and storage parameters, from
``pg_catalog``, and the ``change_clock`` row.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

SNAPSHOTS = Path(__file__).parent / "schema_snapshots"

Schema = dict[str, str]


def sqlite_schema(conn: sqlite3.Connection) -> Schema:
    """The schema of a SQLite connection's main database."""
    out: Schema = {}
    for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
        out[f"{kind} {name}"] = f"on {table}: {sql}"
    out.update(_clock_rows(conn.execute, "change_clock" in {k.split(" ", 1)[1] for k in out}))
    return out


def _clock_rows(execute: Any, present: bool) -> Schema:
    if not present:
        return {}
    rows = execute("SELECT id, version, pruned_through FROM change_clock").fetchall()
    return {"rows change_clock": repr(sorted(tuple(r) for r in rows))}


_PG_QUERIES: dict[str, str] = {
    "column": """
        SELECT c.relname || '.' || a.attname,
               concat_ws(' ', 'position', a.attnum, format_type(a.atttypid, a.atttypmod),
                         CASE WHEN a.attnotnull THEN 'not null' END,
                         'default ' || pg_get_expr(d.adbin, d.adrelid),
                         CASE a.attidentity WHEN 'd' THEN 'identity by default'
                                            WHEN 'a' THEN 'identity always' END,
                         'collate ' || coll.collname)
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        LEFT JOIN pg_collation coll ON coll.oid = a.attcollation AND a.attcollation <> 0
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
          AND a.attnum > 0 AND NOT a.attisdropped
    """,
    "relation": """
        SELECT c.relname, c.relkind::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '')
        FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace
    """,
    "constraint": """
        SELECT conrelid::regclass::text || '.' || conname, pg_get_constraintdef(oid)
        FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
    """,
    "index": """
        SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
    """,
    "trigger": """
        SELECT tgrelid::regclass::text || '.' || tgname, pg_get_triggerdef(oid)
        FROM pg_trigger WHERE NOT tgisinternal
    """,
    # An extension's own functions (btree_gin's, schema 26) are its version's, not tierclaw's: the
    # extension is listed by name instead.
    "function": """
        SELECT proname, pg_get_functiondef(oid)
        FROM pg_proc p WHERE pronamespace = current_schema()::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                          AND d.objid = p.oid AND d.deptype = 'e')
    """,
    "extension": """
        SELECT extname, 'in the current schema' FROM pg_extension
        WHERE extnamespace = current_schema()::regnamespace
    """,
    "sequence": """
        SELECT c.relname, concat_ws(' ', format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement,
                                    s.seqmax, s.seqmin, s.seqcache, s.seqcycle)
        FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
        WHERE c.relnamespace = current_schema()::regnamespace
    """,
}


async def postgres_schema(conn: Any) -> Schema:
    """The schema of the current schema of a psycopg ``AsyncConnection``."""
    out: Schema = {}
    for kind, query in _PG_QUERIES.items():
        cur = await conn.execute(query)
        for key, definition in await cur.fetchall():
            out[f"{kind} {key}"] = str(definition)
    cur = await conn.execute("SELECT to_regclass('change_clock') IS NOT NULL")
    row = await cur.fetchone()
    if row and row[0]:
        cur = await conn.execute("SELECT id, version, pruned_through FROM change_clock")
        out["rows change_clock"] = repr(sorted(tuple(r) for r in await cur.fetchall()))
    return out


def deltas(versions: list[Schema]) -> list[dict[str, Any]]:
    """Each version's change from the one before (``versions[0]`` is the empty database)."""
    out: list[dict[str, Any]] = []
    for before, after in itertools.pairwise(versions):
        out.append(
            {
                "set": {k: v for k, v in sorted(after.items()) if before.get(k) != v},
                "removed": sorted(k for k in before if k not in after),
            }
        )
    return out


def replay(snapshot: list[dict[str, Any]], version: int) -> Schema:
    """The schema at ``version``, from a snapshot's deltas."""
    schema: Schema = {}
    for step in snapshot[:version]:
        for key in step["removed"]:
            del schema[key]
        schema.update(step["set"])
    return schema


def load(store: str) -> list[dict[str, Any]]:
    """The committed snapshot of ``store`` ("sqlite" or "postgres")."""
    data: list[dict[str, Any]] = json.loads((SNAPSHOTS / f"{store}.json").read_text(encoding="utf-8"))
    return data


def sqlite_versions(path: Path) -> list[Schema]:
    """The schema after each migration, built one version at a time in a new file at ``path``."""
    from memory.store import schema

    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        out = [sqlite_schema(conn)]
        for version in range(1, schema.SCHEMA_VERSION + 1):
            schema.migrate(conn, target=version)
            out.append(sqlite_schema(conn))
        return out
    finally:
        conn.close()


SERVER = SNAPSHOTS / "postgres_server.txt"  # the PostgreSQL major the snapshot was written with


async def server_major(url: str) -> int:
    """The major version of the PostgreSQL server at ``url`` (its definitions' text may differ by major)."""
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    try:
        return int(conn.info.server_version) // 10_000
    finally:
        await conn.close()


async def postgres_versions(url: str) -> list[Schema]:
    """The schema after each migration, built one version at a time in the empty database at ``url``."""
    import psycopg

    from memory.store.postgres import schema
    from memory.store.schema import SCHEMA_VERSION

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    try:
        out = [await postgres_schema(conn)]
        for version in range(1, SCHEMA_VERSION + 1):
            await schema.migrate(conn, "test", target=version)
            out.append(await postgres_schema(conn))
        return out
    finally:
        await conn.close()


def _append(store: str, versions: list[Schema]) -> None:
    """Add the versions the snapshot of ``store`` lacks; refuse when a version it has was built otherwise."""
    built = deltas(versions)
    path = SNAPSHOTS / f"{store}.json"
    kept = load(store) if path.exists() else []
    if built[: len(kept)] != kept:
        pairs = enumerate(zip(built, kept, strict=False), start=1)
        changed = next((i for i, (a, b) in pairs if a != b), len(built) + 1)
        raise SystemExit(f"{store}: version {changed} is built otherwise: a shipped migration changed")
    text = json.dumps(built, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> None:
    """Add new versions to both snapshots: ``argv[0]`` is the URL of an empty PostgreSQL database."""
    import asyncio
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _append("sqlite", sqlite_versions(Path(tmp) / "snapshot.db"))
    major = asyncio.run(server_major(argv[0]))
    written_with = int(SERVER.read_text(encoding="utf-8")) if SERVER.exists() else major
    if written_with != major:
        raise SystemExit(f"the snapshot was written with PostgreSQL {written_with}: use that server")
    _append("postgres", asyncio.run(postgres_versions(argv[0])))
    SERVER.write_text(f"{major}\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
