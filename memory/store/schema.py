"""The SQLite schema and its forward migrations, versioned with ``PRAGMA user_version``.

Each entry of ``MIGRATIONS`` upgrades the file from version ``i`` to ``i + 1``; opening an older file runs
the missing steps in one transaction each, opening a newer file refuses (an older tierclaw must never
write into a schema it does not understand).

The migrations are ``schema_tables.TEMPLATES`` (the tables of both stores, written once; what each
version adds is said there) in SQLite's types, with what SQLite alone has filled in below: each searchable
table's FTS5 index (an external-content table over its ``search_text``, ``tokenize='unicode61
remove_diacritics 0'`` over the jieba tokens as they are) and the triggers that keep it, the vocabulary
table over the memories' index (since version 26 keyed by owner: ``_OWNER_SEARCH``), and ``INSERT OR
IGNORE`` for version 2's backfill. PostgreSQL's
counterparts are in ``postgres/schema.py``.
"""

from __future__ import annotations

import sqlite3

from memory.store import chat_next
from memory.store.schema_tables import SCHEMA_VERSION, SQLITE, render

__all__ = ["MIGRATIONS", "OWNER_SHIFT", "SCHEMA_VERSION", "SchemaTooNewError", "check_version", "migrate"]


# Full text over memories: FTS5 over ``search_text`` and, for term statistics, its vocabulary table.
_MEMORIES_FTS = """
CREATE VIRTUAL TABLE memories_fts USING fts5(
    search_text, content='memories', content_rowid='id', tokenize='unicode61 remove_diacritics 0'
);
CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF search_text ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
    INSERT INTO memories_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
"""

_EVENTS_FTS = """
CREATE VIRTUAL TABLE events_fts USING fts5(
    search_text, content='daily_events', content_rowid='id', tokenize='unicode61 remove_diacritics 0'
);
CREATE TRIGGER events_ai AFTER INSERT ON daily_events BEGIN
    INSERT INTO events_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER events_ad AFTER DELETE ON daily_events BEGIN
    INSERT INTO events_fts(events_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER events_au AFTER UPDATE OF search_text ON daily_events BEGIN
    INSERT INTO events_fts(events_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
    INSERT INTO events_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
"""

# Turns are kept, never edited: no update trigger.
_TURNS_FTS = """
CREATE VIRTUAL TABLE turns_fts USING fts5(
    search_text, content='conversation_turns', content_rowid='id', tokenize='unicode61 remove_diacritics 0'
);
CREATE TRIGGER turns_ai AFTER INSERT ON conversation_turns BEGIN
    INSERT INTO turns_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER turns_ad AFTER DELETE ON conversation_turns BEGIN
    INSERT INTO turns_fts(turns_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
END;
"""

_ATTACHMENTS_FTS = """
CREATE VIRTUAL TABLE attachments_fts USING fts5(
    search_text, content='attachments', content_rowid='id', tokenize='unicode61 remove_diacritics 0'
);
CREATE TRIGGER attachments_ai AFTER INSERT ON attachments BEGIN
    INSERT INTO attachments_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER attachments_ad AFTER DELETE ON attachments BEGIN
    INSERT INTO attachments_fts(attachments_fts, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER attachments_au AFTER UPDATE OF search_text ON attachments BEGIN
    INSERT INTO attachments_fts(attachments_fts, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
    INSERT INTO attachments_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
"""

# Version 26 (issue 38): the memories' index keyed by owner. ``memories_fts`` held every owner's rows
# under rowid = id, so a candidate query walked the matches of every owner (~200 a query at 20 owners of
# 200 memories) to keep one owner's (~20). Its rowid is now ``(slot << OWNER_SHIFT) | id``, ``slot`` the
# owner's number in ``search_owners`` (given once, never changed or reused): one owner's rows are one
# rowid range, which FTS5 seeks to (``search.py``, ``owner_range``). The index holds the same tokens in
# its one column, so bm25 — whole-table row count, average length, document frequencies, the row's
# length — is bit for bit what it was (929 of 929 captured candidate lists identical, scores included;
# ~166 → ~76 µs a query: bench/README.md, "stop 55"). The content table is a view that gives each memory
# its index rowid, so FTS5's 'rebuild' and 'integrity-check' still work; the query itself reads no
# content (bm25 takes lengths from the index's own docsize table). Memory ids stay below 2**40.
OWNER_SHIFT = 40
_OWNER_SEARCH = f"""
DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;
DROP TABLE memories_vocab;
DROP TABLE memories_fts;
CREATE TABLE search_owners (
    slot  INTEGER PRIMARY KEY,
    owner TEXT    NOT NULL UNIQUE
);
INSERT INTO search_owners (owner) SELECT owner FROM memories GROUP BY owner ORDER BY MIN(id);
CREATE VIEW memories_fts_rows AS
    SELECT (o.slot << {OWNER_SHIFT}) | m.id AS fts_id, m.search_text
    FROM memories m JOIN search_owners o ON o.owner = m.owner;
CREATE VIRTUAL TABLE memories_fts USING fts5(
    search_text, content='memories_fts_rows', content_rowid='fts_id',
    tokenize='unicode61 remove_diacritics 0'
);
CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row');
INSERT INTO memories_fts(memories_fts) VALUES ('rebuild');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO search_owners (owner)
        SELECT new.owner WHERE NOT EXISTS (SELECT 1 FROM search_owners WHERE owner = new.owner);
    INSERT INTO memories_fts(rowid, search_text) VALUES (
        ((SELECT slot FROM search_owners WHERE owner = new.owner) << {OWNER_SHIFT}) | new.id, new.search_text
    );
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, search_text) VALUES (
        'delete', ((SELECT slot FROM search_owners WHERE owner = old.owner) << {OWNER_SHIFT}) | old.id,
        old.search_text
    );
END;
CREATE TRIGGER memories_au AFTER UPDATE OF search_text, owner ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, search_text) VALUES (
        'delete', ((SELECT slot FROM search_owners WHERE owner = old.owner) << {OWNER_SHIFT}) | old.id,
        old.search_text
    );
    INSERT INTO search_owners (owner)
        SELECT new.owner WHERE NOT EXISTS (SELECT 1 FROM search_owners WHERE owner = new.owner);
    INSERT INTO memories_fts(rowid, search_text) VALUES (
        ((SELECT slot FROM search_owners WHERE owner = new.owner) << {OWNER_SHIFT}) | new.id, new.search_text
    );
END;
"""

# Version 2 fills ``memory_refs`` from the references memories already had.
_REFS_BACKFILL = """
INSERT OR IGNORE INTO memory_refs(memory_id, ref)
    SELECT id, source_ref FROM memories WHERE source_ref IS NOT NULL AND source_ref != '';
"""

MIGRATIONS: tuple[str, ...] = render(
    SQLITE,
    {
        "functions_own": "",
        "memories_own": _MEMORIES_FTS,
        "events_own": _EVENTS_FTS,
        "refs_backfill": _REFS_BACKFILL,
        "vectors_own": "",
        "turns_own": _TURNS_FTS,
        "changes_own": "",
        "touches_own": "",
        "attachments_own": _ATTACHMENTS_FTS,
        "terms_own": "",
        "chat_next_own": chat_next.SQLITE,
        "chat_claim_own": chat_next.CLAIM_SQLITE,
        "owner_search_own": _OWNER_SEARCH,
        "upkeep_own": "",  # version 28 is PostgreSQL's alone (``postgres/schema.py``, ``_UPKEEP``)
    },
)


class SchemaTooNewError(RuntimeError):
    """The database was written by a newer tierclaw; this one must not touch it."""


def check_version(conn: sqlite3.Connection) -> int:
    """The file's schema version; raises SchemaTooNewError when a newer tierclaw wrote it."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > SCHEMA_VERSION:
        raise SchemaTooNewError(
            f"memory database schema is version {current}, this tierclaw understands up to "
            f"{SCHEMA_VERSION}: upgrade tierclaw, or point --db at another file"
        )
    return current


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> tuple[int, int]:
    """Bring a synchronous connection (autocommit mode) up to schema ``target``; returns (old, new).

    The engine runs it in a worker thread before opening its aiosqlite connection; tests call it with
    a lower ``target`` to build an old-version file.
    """
    current = check_version(conn)
    for version in range(current, target):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # executescript would COMMIT the open transaction first; run statement by statement instead.
            for statement in _split_statements(MIGRATIONS[version]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return current, max(current, target)


def _split_statements(script: str) -> list[str]:
    """Split a DDL script into complete statements (triggers contain ``;`` inside BEGIN … END)."""
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements
