"""The PostgreSQL schema and its forward migrations: the same versions as the SQLite file's (``schema.py``).

The migrations are ``schema_tables.TEMPLATES``, the tables both stores have written once, in PostgreSQL's
types (``schema_tables.POSTGRES``), with what PostgreSQL alone has filled in below; so a database of
either kind at version N has the same tables and columns, and ``tierclaw memory copy`` relies on it. The
version lives in ``tierclaw_schema``; migrations run one transaction per version under an advisory lock
(two processes opening a new database do not both create it); a newer version refuses, as on SQLite.

What PostgreSQL alone has, each for a reason:
- full text: ``search_tsv`` holds the jieba-segmented ``search_text`` tokens as they are
  (``array_to_tsvector``: no parser, no stemming, the ``simple`` behaviour without its token rules),
  ``search_len`` their count (bm25's document length); a trigger keeps both, a GIN index serves ``@@``
  (SQLite: an FTS5 table and its triggers);
- ``memory_terms``: how many memories hold each term (FTS5's vocabulary table): a document frequency is
  an index lookup instead of counting matches; since version 20 the trigger appends to
  ``memory_term_deltas``, folded in now and then (``_TERMS``), so writers share no row;
- ``idx_memories_superseded``: what a memory superseded, found without a scan;
- ``tierclaw_changes`` (versions 1 to 12): a per-writer counter bumped by a trigger on memories; replaced
  in ``_CHANGES`` by the change versions both stores keep (``memory/store/changes.py``);
- storage parameters that keep recall's access-time update cheap (``_TOUCHES``).
"""

from __future__ import annotations

from typing import Any

import psycopg

from memory.store import chat_next
from memory.store.errors import MemoryDatabaseError
from memory.store.schema_tables import POSTGRES, SCHEMA_VERSION, render

_MIGRATION_LOCK = 0x7469_6572  # "tier": pg_advisory_lock key of migrations

# The trigger functions of version 1: a searchable row's tsvector and length, the per-writer change
# counter (dropped in ``_CHANGES``), and the term counts of ``memory_terms``.
_INDEXED_TEXT = """
CREATE FUNCTION tierclaw_index_text() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE tokens text[] := array_remove(string_to_array(NEW.search_text, ' '), '');
BEGIN
    NEW.search_tsv := array_to_tsvector(tokens);
    NEW.search_len := cardinality(tokens);
    RETURN NEW;
END $$;
CREATE FUNCTION tierclaw_bump_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tierclaw_changes VALUES (current_setting('application_name'), 1)
        ON CONFLICT (writer) DO UPDATE SET version = tierclaw_changes.version + 1;
    RETURN NULL;
END $$;
CREATE TABLE tierclaw_changes (writer TEXT COLLATE "C" PRIMARY KEY, version BIGINT NOT NULL);
CREATE FUNCTION tierclaw_count_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE memory_terms SET docs = docs - 1 WHERE term = ANY(tsvector_to_array(OLD.search_tsv));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO memory_terms (term, docs)
            SELECT t, 1 FROM unnest(tsvector_to_array(NEW.search_tsv)) AS t ORDER BY t
            ON CONFLICT (term) DO UPDATE SET docs = memory_terms.docs + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TABLE memory_terms (term TEXT COLLATE "C" PRIMARY KEY, docs INTEGER NOT NULL);
"""

_MEMORIES = """
CREATE INDEX idx_memories_search ON memories USING GIN (search_tsv);
CREATE INDEX idx_memories_superseded ON memories(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE TRIGGER memories_index BEFORE INSERT OR UPDATE OF search_text ON memories
    FOR EACH ROW EXECUTE FUNCTION tierclaw_index_text();
CREATE TRIGGER memories_changed AFTER INSERT OR DELETE OR UPDATE OF content, tier, owner, is_archived
    ON memories FOR EACH STATEMENT EXECUTE FUNCTION tierclaw_bump_changes();
CREATE TRIGGER memories_terms AFTER INSERT OR DELETE OR UPDATE OF search_text ON memories
    FOR EACH ROW EXECUTE FUNCTION tierclaw_count_terms();
"""

_EVENTS = """
CREATE INDEX idx_events_search ON daily_events USING GIN (search_tsv);
CREATE TRIGGER events_index BEFORE INSERT OR UPDATE OF search_text ON daily_events
    FOR EACH ROW EXECUTE FUNCTION tierclaw_index_text();
"""

# Version 2 fills ``memory_refs`` from the references memories already had.
_REFS_BACKFILL = """
INSERT INTO memory_refs(memory_id, ref)
    SELECT id, source_ref FROM memories WHERE source_ref IS NOT NULL AND source_ref != ''
    ON CONFLICT DO NOTHING;
"""

# Version 4: a vector written or dropped counts as a change of the memories, too.
_VECTORS = """
DROP TRIGGER memories_changed ON memories;
CREATE TRIGGER memories_changed AFTER INSERT OR DELETE
    OR UPDATE OF content, tier, owner, is_archived, embedding, embedding_model
    ON memories FOR EACH STATEMENT EXECUTE FUNCTION tierclaw_bump_changes();
"""

_TURNS = """
CREATE INDEX idx_turns_search ON conversation_turns USING GIN (search_tsv);
CREATE TRIGGER turns_index BEFORE INSERT OR UPDATE OF search_text ON conversation_turns
    FOR EACH ROW EXECUTE FUNCTION tierclaw_index_text();
"""

# The change versions of ``memory/store/changes.py`` replace the per-writer counter of version 1
# (``tierclaw_changes``, one number for all owners, no sessions, no backfilled vectors), whose trigger goes
# with it.
_CHANGES = """
DROP TRIGGER memories_changed ON memories;
DROP FUNCTION tierclaw_bump_changes();
DROP TABLE tierclaw_changes;
"""

# Recalling a memory updates its ``last_accessed`` (``MemoryRows.touch``). While that column was in an
# index, every touch was a non-HOT update: a new entry in each of the table's indexes, the GIN index of
# ``search_tsv`` included (about fifteen lexemes per row), so every reply that recalled something wrote
# ~400 WAL records and grew the GIN pending list every later search scans. No query orders or filters by
# (category, last_accessed), so the index keeps ``category`` only (``schema_tables._HOT_TOUCHES``); with
# free room on each page (fillfactor 90) a touch becomes a heap-only update (bench/README.md, "What a
# message costs the database").
#
# GIN's pending list (new entries kept unsorted until it fills) is read in full by every search: at the
# default 4 MB limit that was 200+ pages per query at 100k memories. 256 kB keeps inserts batched and the
# scan short.
_TOUCHES = """
ALTER TABLE memories SET (fillfactor = 90);
ALTER INDEX idx_memories_search SET (gin_pending_list_limit = 256);
ALTER INDEX idx_turns_search SET (gin_pending_list_limit = 256);
ALTER INDEX idx_events_search SET (gin_pending_list_limit = 256);
"""

# Attachments' full text: ``search_tsv`` of the same jieba tokens, GIN (with the short pending list the
# other indexes got in ``_TOUCHES``).
_ATTACHMENTS = """
CREATE INDEX idx_attachments_search ON attachments USING GIN (search_tsv) WITH (gin_pending_list_limit = 256);
CREATE TRIGGER attachments_index BEFORE INSERT OR UPDATE OF search_text ON attachments
    FOR EACH ROW EXECUTE FUNCTION tierclaw_index_text();
"""

# Version 20: the term counts without shared hot rows. Every memory written used to upsert one
# ``memory_terms`` row per term, held until its transaction committed; extractions of different owners on
# different replicas then waited for each other on common terms and deadlocked (two transactions taking
# two terms in opposite orders across their rows: ``bench/db_contention.py``, a third of the batches of
# three replicas). The trigger now only appends (term, ±1) rows, which lock nothing another writer needs;
# a document frequency is ``memory_terms`` plus the deltas not folded in yet (``postgres/search.py``).
_TERMS = """
CREATE TABLE memory_term_deltas (term TEXT COLLATE "C" NOT NULL, docs INTEGER NOT NULL);
CREATE INDEX idx_memory_term_deltas ON memory_term_deltas(term);
CREATE OR REPLACE FUNCTION tierclaw_count_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO memory_term_deltas (term, docs)
            SELECT t, -1 FROM unnest(tsvector_to_array(OLD.search_tsv)) AS t;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO memory_term_deltas (term, docs)
            SELECT t, 1 FROM unnest(tsvector_to_array(NEW.search_tsv)) AS t;
    END IF;
    RETURN NULL;
END $$;
"""

# Version 26 (issue 38) is SQLite's alone (``schema.py``, ``_OWNER_SEARCH``): here the candidate query
# already visits only the owner's heap rows (a ``BitmapAnd`` of an owner B-tree and the GIN matches), and
# what it costs is scoring them (``fulltext.bm25_join``). A GIN index over (``owner``, ``search_tsv``) with
# ``btree_gin`` was built and measured (fts38, stop 55; pgcpu6/pgcpu7 before it): the index scan 0.077–0.095
# → 0.035 ms a query at 20 owners, but ``bench.db_cost`` not cheaper a message (candidate statements 0.28–0.35
# vs 0.30–0.49 ms, server CPU medians 5.13 vs 5.05 ms over three pairs; bench/README.md, "stop 55"), for an
# extension every server must offer. Not built: the version is empty here.
# Version 28 (issue 38, stop 63): fewer index entries a message. Every index a row is in gets an entry
# at each insert and each update that is not heap-only (HOT), and an update is HOT only when no index
# holds (or has in its predicate) a column it changes. These four served no statement of the message
# path, and the rare ones that read them stay cheap without them at 100k rows (docs/scale-out.md,
# "Where the server's CPU goes"):
# - ``idx_inbox_pending`` (answered_at, id): the start's prune and ``tierclaw status``'s unsent count
#   (a sequential scan of the inbox instead); the unanswered reads use ``idx_inbox_unanswered``;
# - ``idx_turns_owner`` (owner, created_at): conversation search within dates (the GIN index and
#   ``idx_turns_owner_id`` serve it);
# - ``idx_turns_embedding`` (owner, embedding_model): an owner's turn vectors (``idx_turns_owner_id``);
# - ``idx_chat_holds_holder``: a replica's renewals name their chats (the primary key); dropping all of a
#   stopping replica's holds reads the table once. Without it a take and a release of a hold are HOT.
# SQLite keeps them (its version 28 is empty).
_UPKEEP = """
DROP INDEX idx_inbox_pending;
DROP INDEX idx_turns_owner;
DROP INDEX idx_turns_embedding;
DROP INDEX idx_chat_holds_holder;
"""

MIGRATIONS: tuple[str, ...] = render(
    POSTGRES,
    {
        "functions_own": _INDEXED_TEXT,
        "memories_own": _MEMORIES,
        "events_own": _EVENTS,
        "refs_backfill": _REFS_BACKFILL,
        "vectors_own": _VECTORS,
        "turns_own": _TURNS,
        "changes_own": _CHANGES,
        "touches_own": _TOUCHES,
        "attachments_own": _ATTACHMENTS,
        "terms_own": _TERMS,
        "chat_next_own": chat_next.POSTGRES,
        "chat_claim_own": chat_next.CLAIM_POSTGRES,
        "owner_search_own": "",
        "upkeep_own": _UPKEEP,
    },
)


async def current_version(conn: psycopg.AsyncConnection[Any]) -> int | None:
    """The database's schema version; None when it holds no tierclaw schema."""
    cur = await conn.execute("SELECT to_regclass('tierclaw_schema') IS NOT NULL")
    row = await cur.fetchone()
    if not row or not row[0]:
        return None
    cur = await conn.execute("SELECT version FROM tierclaw_schema")
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def other_tables(conn: psycopg.AsyncConnection[Any]) -> int:
    """How many tables the connection's current schema holds (for a database without tierclaw's)."""
    cur = await conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()")
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def migrate(
    conn: psycopg.AsyncConnection[Any], where: str, *, create: bool = True, target: int = SCHEMA_VERSION
) -> tuple[int, int]:
    """Bring the database up to ``target`` (one transaction per version); returns (old, new).

    ``where`` names the database in errors (password masked). Refuses a newer schema; without
    ``create``, a database that holds other tables but no tierclaw schema (a wrong ``--db`` must not get
    tierclaw's tables). An empty one is prepared either way: the database someone made for tierclaw
    (README.md, "Running on PostgreSQL"), as an empty SQLite file is, so reading commands work on it."""
    await conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
    try:
        current = await current_version(conn)
        if current is None and not create and await other_tables(conn):
            raise MemoryDatabaseError(
                f"{where} holds other tables but no tierclaw memory: is memory.databaseUrl (or --db) the "
                "right database? tierclaw creates its tables only in an empty one"
            )
        current = current or 0
        if current > SCHEMA_VERSION:
            raise MemoryDatabaseError(
                f"memory database schema is version {current}, this tierclaw understands up to "
                f"{SCHEMA_VERSION}: upgrade tierclaw, or point --db at another database"
            )
        for version in range(current, target):
            async with conn.transaction():
                if version == 0:
                    await conn.execute("CREATE TABLE tierclaw_schema (version INTEGER NOT NULL)")
                    await conn.execute("INSERT INTO tierclaw_schema VALUES (0)")
                await conn.execute(MIGRATIONS[version].encode())
                await conn.execute("UPDATE tierclaw_schema SET version = %s", (version + 1,))
        return current, max(current, target)
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
