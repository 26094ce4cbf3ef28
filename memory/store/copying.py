"""Copy one memory database into another, whichever the backends: every table, ids kept, in batches.

``tierclaw memory copy`` (README.md, "Running on PostgreSQL") moves a SQLite memory to PostgreSQL or back.
Both schemas have the same tables and columns at the same version (``schema_tables.py``), so rows go
over as they are, ids included: references between rows (superseded_by, memory_refs, the facts of an
episode) stay right, and the destination's full-text index is built by its own triggers.

Each batch is one transaction in the destination. Rows with an id go in id order and a rerun starts after
the destination's highest id; keyed rows are inserted with ``ON CONFLICT DO NOTHING`` — so an interrupted
copy is resumed by running it again. ``superseded_by`` may point to a later row: memories are copied
without it and the pointers are set in a last pass. PostgreSQL's id sequences are moved past the copied
ids at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from memory.store.sql import SqlDatabase, marks


class HasDatabase(Protocol):
    """A store whose parts share one ``SqlDatabase`` (both ``SQLiteStore`` and ``PostgresStore``)."""

    db: SqlDatabase


@dataclass(frozen=True, slots=True)
class Table:
    """One table to copy: its columns, and its key (``id`` or the primary-key columns)."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...] = ("id",)
    batch: int = 0  # rows per batch when fewer than the copy's (a file's bytes: up to media.maxBytes each)

    @property
    def has_id(self) -> bool:
        return self.key == ("id",)


def _cols(text: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(","))


# In the order they are copied: a table comes after those its rows refer to.
TABLES: tuple[Table, ...] = (
    Table(
        "memories",
        _cols(
            "id, owner, tier, project, topic, category, content, search_text, norm_key, importance, source, "
            "source_ref, subject, predicate, created_at, updated_at, last_accessed, access_count, "
            "is_archived, embedding, embedding_model"
        ),
    ),
    Table("memory_refs", ("memory_id", "ref"), ("memory_id", "ref")),
    Table(
        "daily_events",
        _cols(
            "id, owner, event_date, channel, sender_id, summary, search_text, raw_tokens, source_ref, "
            "is_compressed, created_at, goal, outcome, entities, started_at, ended_at, fact_ids"
        ),
    ),
    Table(
        "extraction_failures",
        _cols("turn_id, owner, attempts, next_attempt_at, dead, last_error"),
        ("turn_id",),
    ),
    Table("extraction_due", _cols("owner, due_at, live_tokens, extracted_through"), ("owner",)),
    Table("chat_sessions", ("chat_key", "session_no", "started_at"), ("chat_key",)),
    Table("session_messages", _cols("id, chat_key, session_no, role, content, created_at")),
    Table("job_runs", ("job", "last_run", "last_status"), ("job",)),
    Table("embedding_cache", _cols("text_hash, model, dim, vector, last_used"), ("text_hash", "model")),
    Table(
        "inbox",
        _cols(
            "id, channel, chat_id, delivery_key, message, received_at, answered_at, send_error, "
            "platform_seq, sending_at, sending_by, media, reply_handle"
        ),
    ),
    Table(
        "conversation_turns",
        _cols(
            "id, owner, channel, chat_id, role, content, search_text, created_at, embedding, "
            "embedding_model, sender_id, token_count, session_no"
        ),
    ),
    Table("scratchpads", ("owner", "content", "updated_at"), ("owner",)),
    Table("seen", ("channel", "kind", "key", "seen_at"), ("channel", "kind", "key")),
    Table(
        "attachments",
        _cols(
            "id, owner, direction, channel, chat_id, message_id, part, kind, mime, size, file_name, "
            "file_key, caption, description, transcription, extracted_text, tags, memory_ids, status, "
            "sha256, search_text, created_at"
        ),
    ),
    Table("attachment_bytes", ("attachment_id", "data"), ("attachment_id",), batch=4),
    Table(
        "reminders",
        _cols(
            "id, owner, channel, chat_id, text, said, lang, zone, local_at, repeat, due_at, try_at, status, "
            "attempts, sent_count, claimed_by, lease_until, last_sent_at, last_error, created_at, "
            "updated_at, generation"
        ),
    ),
    Table("person_zones", ("owner", "zone", "updated_at"), ("owner",)),
)

Progress = Callable[[str, int, int], None]  # (table, rows done, rows in all)


async def row_counts(db: SqlDatabase) -> dict[str, int]:
    """Rows per table."""
    return {t.name: await db.scalar(f"SELECT COUNT(*) FROM {t.name}") for t in TABLES}


async def copy_all(
    source: HasDatabase, target: HasDatabase, *, batch: int = 1000, progress: Progress | None = None
) -> dict[str, int]:
    """Copy every table of ``source`` into ``target`` (resuming where an earlier run stopped); returns
    the source's rows per table. The caller checks the counts (``row_counts``) afterwards."""
    totals = await row_counts(source.db)
    for table in TABLES:
        await _copy_table(source.db, target.db, table, totals[table.name], batch, progress)
    await _copy_superseded(source.db, target.db, batch)
    # The owners' rows are copied with their watermarks and running counts (turn_watermark.py), not
    # their claims: nothing of the copy is being extracted.
    if target.db.kind == "postgresql":
        for table in TABLES:
            if table.has_id:
                await target.db.read(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f"GREATEST((SELECT MAX(id) FROM {table.name}), 1))"
                )
    return totals


async def _copy_table(
    source: SqlDatabase, target: SqlDatabase, table: Table, total: int, batch: int, progress: Progress | None
) -> None:
    batch = min(batch, table.batch or batch)
    columns = ", ".join(table.columns)
    insert = f"INSERT INTO {table.name} ({columns}) VALUES ({marks(table.columns)}) ON CONFLICT DO NOTHING"
    order = ", ".join(table.key)
    after = await target.scalar(f"SELECT MAX(id) FROM {table.name}") if table.has_id else 0
    done = await target.scalar(f"SELECT COUNT(*) FROM {table.name}")
    offset = 0
    while True:
        if table.has_id:
            rows = await source.read(
                f"SELECT {columns} FROM {table.name} WHERE id > ? ORDER BY id LIMIT ?", (after, batch)
            )
        else:
            rows = await source.read(
                f"SELECT {columns} FROM {table.name} ORDER BY {order} LIMIT ? OFFSET ?", (batch, offset)
            )
            offset += len(rows)
        if not rows:
            break
        async with target.transaction():
            await target.write_many(insert, [_plain(r) for r in rows])
        if table.has_id:
            after = int(rows[-1][0])
        done = min(total, done + len(rows)) if table.has_id else offset
        if progress is not None:
            progress(table.name, done, total)
    if progress is not None:
        progress(table.name, total, total)


async def _copy_superseded(source: SqlDatabase, target: SqlDatabase, batch: int) -> None:
    after = 0
    while True:
        rows = await source.read(
            "SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL AND id > ? "
            "ORDER BY id LIMIT ?",
            (after, batch),
        )
        if not rows:
            return
        async with target.transaction():
            await target.write_many(
                "UPDATE memories SET superseded_by = ? WHERE id = ?", [(r[1], r[0]) for r in rows]
            )
        after = int(rows[-1][0])


def _plain(row: Any) -> tuple[Any, ...]:
    """A row as plain values (memoryview blobs as bytes)."""
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
