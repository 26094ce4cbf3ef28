"""The SQLite schema and its forward migrations, versioned with ``PRAGMA user_version``.

Each entry of ``MIGRATIONS`` upgrades the file from version ``i`` to ``i + 1``; opening an older file runs
the missing steps in one transaction each, opening a newer file refuses (an older tierclaw must never
write into a schema it does not understand).

Version 1 is the original design's tables plus an ``owner`` on every row, ``source_ref``,
``subject``/``predicate``,
``superseded_by`` and a ``search_text`` column holding the jieba-segmented text that FTS5 indexes.
Version 2 adds ``memory_refs``: every source reference a memory absorbed through merges.
Version 3 adds the message path's state: retry bookkeeping on ``extraction_buffer`` (attempts, next try,
dead letters), Tier 0 ``session_messages`` with the current session of each chat, and ``job_runs``
(when each scheduled job last ran, so a run missed while the process was down happens at start).
Version 4 adds embeddings: each memory's vector (``embedding``, little-endian float32) and the model key
that made it (``embedding_model``: a vector is only compared with vectors of the same key), and
``embedding_cache``: vectors keyed by SHA-256 of the exact text + model key, with the dimension stored
and checked, and when each was last used (for eviction).
Version 5 adds the durable ``inbox``; version 6 ``conversation_turns``, every turn kept and searchable
(version 9: with a vector);
version 7 makes daily events episodes (goal, outcome, entities, start and end, the facts extracted);
version 8 adds ``scratchpads``, one note per person.
Version 10 adds what the gateway kept outside the memory database: ``seen`` (a channel's dedup
marks, kept 48 hours) and the memory page's access token and browser sessions (``page_secrets``,
``page_sessions``), so several gateways on one PostgreSQL database share them.
Version 11 (``_COORDINATION``) adds ``job_claims`` (one row per scheduled job
and period, with the replica holding it and its lease) and a lease on each ``inbox`` row.
``_EXTRACTION_CLAIMS`` adds ``extraction_due`` (each owner's next extraction time and the replica
extracting it now, with a lease) and ``embedding_claims`` (rows the embedding backfill is embedding, so two
replicas never embed the same ones): docs/scale-out.md, "Extraction".
``_CHAT_HOLDS`` adds ``chat_holds``: which replica answers each chat's messages, until when.
``_ATTACHMENTS`` adds media references on inbox rows and the attachment memory (voice, photos, files);
``_REMINDERS`` adds ``reminders`` (what a person asked to be told later, and when) and ``person_zones``.
``_REPLY_HANDLES`` adds ``inbox.reply_handle``: where a streamed reply was being written on the platform.
"""

from __future__ import annotations

import sqlite3

from memory.store.schema_media import ATTACHMENTS as _ATTACHMENTS
from memory.store.schema_media import REMINDERS as _REMINDERS

_V1 = """
CREATE TABLE memories (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    owner         TEXT    NOT NULL,
    tier          INTEGER NOT NULL DEFAULT 2 CHECK (tier IN (1, 2)),
    project       TEXT    NOT NULL DEFAULT '_global',
    topic         TEXT    NOT NULL DEFAULT '_general',
    category      TEXT    NOT NULL DEFAULT 'event',
    content       TEXT    NOT NULL,
    search_text   TEXT    NOT NULL DEFAULT '',
    norm_key      TEXT    NOT NULL DEFAULT '',
    importance    REAL    NOT NULL DEFAULT 0.5,
    source        TEXT    NOT NULL DEFAULT 'extraction',
    source_ref    TEXT,
    subject       TEXT,
    predicate     TEXT,
    created_at    TEXT    NOT NULL DEFAULT (datetime('now')),
    updated_at    TEXT    NOT NULL DEFAULT (datetime('now')),
    last_accessed TEXT    NOT NULL DEFAULT (datetime('now')),
    access_count  INTEGER NOT NULL DEFAULT 0,
    is_archived   INTEGER NOT NULL DEFAULT 0,
    superseded_by INTEGER REFERENCES memories(id)
);
CREATE INDEX idx_memories_partition ON memories(owner, tier, project, topic, is_archived);
CREATE INDEX idx_memories_norm ON memories(owner, norm_key) WHERE is_archived = 0;
CREATE INDEX idx_memories_subject ON memories(owner, subject, predicate)
    WHERE is_archived = 0 AND subject IS NOT NULL;
CREATE INDEX idx_memories_category ON memories(category, last_accessed);
CREATE INDEX idx_memories_created ON memories(created_at);

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

CREATE TABLE daily_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    owner         TEXT    NOT NULL,
    event_date    TEXT    NOT NULL,
    channel       TEXT    NOT NULL DEFAULT 'unknown',
    sender_id     TEXT    NOT NULL DEFAULT '',
    summary       TEXT    NOT NULL,
    search_text   TEXT    NOT NULL DEFAULT '',
    raw_tokens    INTEGER NOT NULL DEFAULT 0,
    source_ref    TEXT,
    is_compressed INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX idx_events_owner_date ON daily_events(owner, event_date, is_compressed);
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

CREATE TABLE extraction_buffer (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    owner       TEXT    NOT NULL,
    channel     TEXT    NOT NULL,
    chat_id     TEXT    NOT NULL DEFAULT '',
    sender_id   TEXT    NOT NULL DEFAULT '',
    role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT    NOT NULL,
    token_count INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX idx_buffer_owner_created ON extraction_buffer(owner, created_at);
"""

_V2 = """
CREATE TABLE memory_refs (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    ref       TEXT    NOT NULL,
    PRIMARY KEY (memory_id, ref)
) WITHOUT ROWID;
INSERT OR IGNORE INTO memory_refs(memory_id, ref)
    SELECT id, source_ref FROM memories WHERE source_ref IS NOT NULL AND source_ref != '';
"""

_V3 = """
ALTER TABLE extraction_buffer ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_buffer ADD COLUMN next_attempt_at TEXT;
ALTER TABLE extraction_buffer ADD COLUMN dead INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_buffer ADD COLUMN last_error TEXT;
CREATE INDEX idx_buffer_dead ON extraction_buffer(dead, owner);

CREATE TABLE chat_sessions (
    chat_key   TEXT    PRIMARY KEY,
    session_no INTEGER NOT NULL DEFAULT 1,
    started_at TEXT    NOT NULL DEFAULT (datetime('now'))
) WITHOUT ROWID;
CREATE TABLE session_messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_key   TEXT    NOT NULL,
    session_no INTEGER NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT    NOT NULL,
    created_at TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX idx_session_messages_chat ON session_messages(chat_key, session_no, id);

CREATE TABLE job_runs (
    job         TEXT PRIMARY KEY,
    last_run    TEXT NOT NULL,
    last_status TEXT NOT NULL DEFAULT 'ok'
) WITHOUT ROWID;
"""

_V4 = """
ALTER TABLE memories ADD COLUMN embedding BLOB;
ALTER TABLE memories ADD COLUMN embedding_model TEXT;
CREATE INDEX idx_memories_embedding ON memories(owner, is_archived, embedding_model);

CREATE TABLE embedding_cache (
    text_hash TEXT    NOT NULL,
    model     TEXT    NOT NULL,
    dim       INTEGER NOT NULL CHECK (dim > 0),
    vector    BLOB    NOT NULL,
    last_used TEXT    NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (text_hash, model)
) WITHOUT ROWID;
CREATE INDEX idx_embedding_cache_last_used ON embedding_cache(last_used);
"""

# The durable inbox (docs/architecture.md, "The path of one message"): a message is stored before the
# platform is told it arrived, and answered_at is set when it has been answered. delivery_key is the
# platform's id of the delivery (Telegram update id, Feishu event id): a redelivery after a crash is
# recognised by it and answered once. send_error says why its reply could not be sent, when it could not.
_V5 = """
CREATE TABLE inbox (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    channel      TEXT    NOT NULL,
    chat_id      TEXT    NOT NULL,
    delivery_key TEXT    NOT NULL DEFAULT '',
    message      TEXT    NOT NULL,
    received_at  TEXT    NOT NULL,
    answered_at  TEXT,
    send_error   TEXT
);
CREATE UNIQUE INDEX idx_inbox_delivery ON inbox(channel, delivery_key) WHERE delivery_key != '';
CREATE INDEX idx_inbox_pending ON inbox(answered_at, id);
"""

# The raw conversation as a searchable tier (docs/architecture.md, "Storage"): every turn, kept for
# conversation_search when a fact was never extracted; indexed like memories (jieba-segmented
# search_text). Existing files start empty: what earlier versions did not keep cannot be restored.
_V6 = """
CREATE TABLE conversation_turns (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    owner       TEXT    NOT NULL,
    channel     TEXT    NOT NULL,
    chat_id     TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT    NOT NULL,
    search_text TEXT    NOT NULL DEFAULT '',
    created_at  TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX idx_turns_owner ON conversation_turns(owner, created_at);
CREATE INDEX idx_turns_chat ON conversation_turns(owner, channel, chat_id, id);
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

# Episodes (docs/architecture.md, "Tiers"): a daily event is what an extraction saw happen — the summary
# as before, and now the person's goal, the outcome (done / partial / failed / ongoing, "" when not
# said), the entities involved (a JSON list), when it started and ended, and the ids of the facts
# extracted with it (a JSON list). Existing events move forward with their creation time as both ends.
_V7 = """
ALTER TABLE daily_events ADD COLUMN goal TEXT NOT NULL DEFAULT '';
ALTER TABLE daily_events ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE daily_events ADD COLUMN entities TEXT NOT NULL DEFAULT '[]';
ALTER TABLE daily_events ADD COLUMN started_at TEXT;
ALTER TABLE daily_events ADD COLUMN ended_at TEXT;
ALTER TABLE daily_events ADD COLUMN fact_ids TEXT NOT NULL DEFAULT '[]';
UPDATE daily_events SET started_at = created_at, ended_at = created_at WHERE started_at IS NULL;
"""

# The scratchpad: one short Markdown note per person (active projects, focus, open questions, next
# steps), kept up to date by the memory model and shown in the system prompt.
_V8 = """
CREATE TABLE scratchpads (
    owner      TEXT PRIMARY KEY,
    content    TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
"""

# Turn vectors: with embeddings on, every kept turn gets a vector of the configured embedder (filled in
# the background, like memories'), so conversation_search finds a turn by meaning as well as by words.
_V9 = """
ALTER TABLE conversation_turns ADD COLUMN embedding BLOB;
ALTER TABLE conversation_turns ADD COLUMN embedding_model TEXT;
CREATE INDEX idx_turns_embedding ON conversation_turns(owner, embedding_model);
"""

# The gateway's own small state (docs/architecture.md, "Storage"): a channel's dedup marks (a Feishu
# event id or message id seen, kept 48 hours: channels/README.md), the memory page's access token and its
# browser sessions (a session id is kept only as its SHA-256: gateway/dashboard/access.py).
_V_GATEWAY_STATE = """
CREATE TABLE seen (
    channel TEXT NOT NULL,
    kind    TEXT NOT NULL,
    key     TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (channel, kind, key)
);
CREATE INDEX idx_seen_at ON seen(seen_at);
CREATE TABLE page_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE page_sessions (
    sid_hash  TEXT PRIMARY KEY,
    csrf      TEXT NOT NULL,
    flash     TEXT NOT NULL DEFAULT '[]',
    last_seen TEXT NOT NULL
);
CREATE INDEX idx_page_sessions_last_seen ON page_sessions(last_seen);
"""

# Several gateways on one database (docs/scale-out.md): a claim per scheduled job and period, so each
# period's run happens once across replicas; and a lease on each inbox message a replica is answering,
# so a restarting replica does not re-answer another live replica's messages. On SQLite (one process)
# every claim succeeds; the columns are here so both stores keep the same tables.
_COORDINATION = """
CREATE TABLE job_claims (
    job         TEXT NOT NULL,
    period      TEXT NOT NULL,
    claimed_by  TEXT NOT NULL,
    lease_until TEXT NOT NULL,
    done_at     TEXT,
    status      TEXT,
    PRIMARY KEY (job, period)
);
CREATE INDEX idx_job_claims_open ON job_claims(done_at, lease_until);
ALTER TABLE inbox ADD COLUMN claimed_by TEXT;
ALTER TABLE inbox ADD COLUMN lease_until TEXT;
"""

_EXTRACTION_CLAIMS = """
CREATE TABLE extraction_due (
    owner       TEXT PRIMARY KEY,
    due_at      TEXT NOT NULL,
    claimed_by  TEXT,
    lease_until TEXT
);
CREATE INDEX idx_extraction_due_at ON extraction_due(due_at);
CREATE TABLE embedding_claims (
    target      TEXT    NOT NULL,
    row_id      INTEGER NOT NULL,
    claimed_by  TEXT    NOT NULL,
    lease_until TEXT    NOT NULL,
    PRIMARY KEY (target, row_id)
);
"""

# Caches that stay true across processes (``memory/store/changes.py``): one clock row whose version each
# transaction that changes something cached takes at its end, and a row per changed key (an owner's
# memories or vectors, a chat's session) under that version, read by "changes after the version I saw".
_CHANGES = """
CREATE TABLE change_clock (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    version        INTEGER NOT NULL,
    pruned_through INTEGER NOT NULL
);
INSERT INTO change_clock VALUES (1, 0, 0);
CREATE TABLE changes (
    version    INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    writer     TEXT NOT NULL,
    rows_delta INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (version, kind, key)
) WITHOUT ROWID;
"""

# A chat held by one replica at a time (docs/scale-out.md, "The message path"): the holder answers the
# chat's unanswered inbox rows oldest first, whoever stored them, and drops the hold only when none is
# left; a hold whose lease ran out (its replica died) is taken over. The partial index serves the
# holder's "oldest unanswered of this chat" and the sweep for chats nobody holds.
_CHAT_HOLDS = """
CREATE TABLE chat_holds (
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    holder      TEXT NOT NULL,
    lease_until TEXT NOT NULL,
    PRIMARY KEY (channel, chat_id)
);
CREATE INDEX idx_chat_holds_holder ON chat_holds(holder);
CREATE INDEX idx_inbox_unanswered ON inbox(channel, chat_id, id) WHERE answered_at IS NULL;
"""

# The PostgreSQL twin of this version makes recall's access-time update a heap-only one there
# (memory/store/postgres/schema.py, ``_HOT_TOUCHES``); here the same index change keeps both schemas alike.
_HOT_TOUCHES = """
DROP INDEX idx_memories_category;
CREATE INDEX idx_memories_category ON memories(category);
"""

# A streamed reply (docs/architecture.md, "Streamed replies") writes a platform message before it is
# finished (a Telegram group message being edited, a Feishu card): its handle is kept on the inbox row,
# so a gateway restarted after a crash completes or replaces that message instead of sending a second.
_REPLY_HANDLES = """
ALTER TABLE inbox ADD COLUMN reply_handle TEXT;
"""

MIGRATIONS: tuple[str, ...] = (
    _V1,
    _V2,
    _V3,
    _V4,
    _V5,
    _V6,
    _V7,
    _V8,
    _V9,
    _V_GATEWAY_STATE,
    _COORDINATION,
    _EXTRACTION_CLAIMS,
    _CHANGES,
    _CHAT_HOLDS,
    _HOT_TOUCHES,
    _ATTACHMENTS,
    _REMINDERS,
    _REPLY_HANDLES,
)
SCHEMA_VERSION = len(MIGRATIONS)


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
