"""The SQL of the attachment memory: ``attachments`` (what was received or sent, and what understanding made
of it), its full-text index, and ``attachment_bytes`` (the file itself).

Every statement filters on the owner. The caller passes the segmented ``search_text``
(``memory/text/tokenizer.py``) and the MATCH terms, as for memories and turns. Long extracted text is read
in full only by ``full_text``: listings carry its first ``TEXT_PREVIEW`` characters.
"""

from __future__ import annotations

import builtins  # the class's own ``list`` method hides the builtin in its annotations
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.store.sql import SqlDatabase
from memory.text import tokenizer

TEXT_PREVIEW = 2000  # characters of the extracted text a listed row carries
_NAMES = (
    "id, owner, direction, channel, chat_id, message_id, part, kind, mime, size, file_name, file_key, "
    "caption, description, transcription, extracted_text, tags, memory_ids, status, sha256, created_at"
)


def columns(alias: str = "") -> str:
    """The columns of an ``AttachmentRow``, the extracted text cut to ``TEXT_PREVIEW``, with ``alias``."""
    prefix = f"{alias}." if alias else ""
    names = [f"{prefix}{name.strip()}" for name in _NAMES.split(",")]
    names[15] = f"substr({prefix}extracted_text, 1, {TEXT_PREVIEW})"
    return ", ".join(names)


COLUMNS = columns()


@dataclass(slots=True)
class NewAttachment:
    """What is known of an attachment when it arrives (or is sent), before it is understood."""

    direction: str  # "in" (the person sent it) or "out" (sent to them)
    channel: str
    chat_id: str
    message_id: str
    part: int
    kind: str
    mime: str = ""
    size: int = 0
    file_name: str = ""
    file_key: str = ""
    caption: str = ""
    status: str = "kept"
    sha256: str = ""
    search_text: str = ""


@dataclass(slots=True)
class UnderstoodRow:
    """What understanding made of an attachment, as stored (``search_text``: segmented, to index)."""

    description: str
    transcription: str
    extracted_text: str
    status: str
    search_text: str
    size: int
    mime: str
    sha256: str


@dataclass(slots=True)
class AttachmentRow:
    """One stored attachment (its extracted text cut to ``TEXT_PREVIEW`` characters)."""

    id: int
    owner: str
    direction: str
    channel: str
    chat_id: str
    message_id: str
    part: int
    kind: str
    mime: str
    size: int
    file_name: str
    file_key: str
    caption: str
    description: str
    transcription: str
    extracted_text: str
    tags: list[str] = field(default_factory=list)
    memory_ids: list[int] = field(default_factory=list)
    status: str = "kept"
    sha256: str = ""
    created_at: str = ""


def row_of(r: Sequence[object]) -> AttachmentRow:
    """An ``AttachmentRow`` from a row of ``COLUMNS``."""
    values = list(r)
    values[16] = json.loads(str(values[16]) or "[]")
    values[17] = json.loads(str(values[17]) or "[]")
    for i in (0, 6, 9):
        values[i] = int(values[i])  # type: ignore[call-overload]
    return AttachmentRow(*values)  # type: ignore[arg-type]


class AttachmentRows:
    """Reads and writes of attachments and their bytes."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def add(self, owner: str, new: NewAttachment, at: str) -> tuple[int, bool]:
        """Keep one attachment; (its id, whether it is new). The same part of the same message again (a
        message answered again after a crash) is the row already there."""
        inserted = await self._db.insert(
            "INSERT INTO attachments (owner, direction, channel, chat_id, message_id, part, kind, mime, "
            "size, file_name, file_key, caption, status, sha256, search_text, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
            (
                owner,
                new.direction,
                new.channel,
                new.chat_id,
                new.message_id,
                new.part,
                new.kind,
                new.mime,
                new.size,
                new.file_name,
                new.file_key,
                new.caption,
                new.status,
                new.sha256,
                new.search_text,
                at,
            ),
        )
        if inserted is not None:
            return int(inserted), True
        rows = await self._db.read(
            "SELECT id FROM attachments WHERE channel = ? AND chat_id = ? AND message_id = ? AND part = ? "
            "AND direction = ? AND owner = ?",
            (new.channel, new.chat_id, new.message_id, new.part, new.direction, owner),
        )
        if not rows:
            raise KeyError("an attachment of this message belongs to another owner")
        return int(rows[0][0]), False

    async def understood(self, owner: str, attachment_id: int, found: UnderstoodRow) -> None:
        """Record what understanding made of the attachment (and what the download said of it)."""
        await self._db.write(
            "UPDATE attachments SET description = ?, transcription = ?, extracted_text = ?, status = ?, "
            "search_text = ?, size = ?, mime = ?, sha256 = ? WHERE id = ? AND owner = ?",
            (
                found.description,
                found.transcription,
                found.extracted_text,
                found.status,
                found.search_text,
                found.size,
                found.mime,
                found.sha256,
                attachment_id,
                owner,
            ),
        )

    async def set_file_key(self, owner: str, attachment_id: int, file_key: str) -> None:
        """The platform's id of the file changed (Telegram gives an uploaded file a new one)."""
        await self._db.write(
            "UPDATE attachments SET file_key = ? WHERE id = ? AND owner = ?", (file_key, attachment_id, owner)
        )

    async def link_memories(self, owner: str, attachment_id: int, memory_ids: Sequence[int]) -> None:
        """Add memory ids the attachment gave rise to."""
        row = await self.get(owner, attachment_id)
        if row is None:
            return
        ids = sorted(set(row.memory_ids) | {int(i) for i in memory_ids})
        await self._db.write(
            "UPDATE attachments SET memory_ids = ? WHERE id = ? AND owner = ?",
            (json.dumps(ids), attachment_id, owner),
        )

    async def put_bytes(self, attachment_id: int, data: bytes) -> None:
        """Keep the file's bytes (again: replaced)."""
        await self._db.write(
            "INSERT INTO attachment_bytes (attachment_id, data) VALUES (?, ?) "
            "ON CONFLICT(attachment_id) DO UPDATE SET data = excluded.data",
            (attachment_id, data),
        )

    async def get_bytes(self, owner: str, attachment_id: int) -> bytes | None:
        """The file's bytes, when kept (None: not kept, or not this owner's)."""
        rows = await self._db.read(
            "SELECT b.data FROM attachment_bytes b JOIN attachments a ON a.id = b.attachment_id "
            "WHERE a.id = ? AND a.owner = ?",
            (attachment_id, owner),
        )
        return bytes(rows[0][0]) if rows else None

    async def kept_bytes(self, owner: str, ids: Sequence[int]) -> set[int]:
        """Which of the owner's attachments among ``ids`` have their bytes kept."""
        if not ids:
            return set()
        marks = ",".join("?" * len(ids))
        rows = await self._db.read(
            f"SELECT a.id FROM attachments a JOIN attachment_bytes b ON b.attachment_id = a.id "
            f"WHERE a.owner = ? AND a.id IN ({marks})",
            (owner, *ids),
        )
        return {int(r[0]) for r in rows}

    async def get(self, owner: str, attachment_id: int) -> AttachmentRow | None:
        """One attachment of the owner."""
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM attachments WHERE id = ? AND owner = ?", (attachment_id, owner)
        )
        return row_of(rows[0]) if rows else None

    async def full_text(self, owner: str, attachment_id: int) -> str:
        """The whole extracted text of one attachment ("" when none)."""
        rows = await self._db.read(
            "SELECT extracted_text FROM attachments WHERE id = ? AND owner = ?", (attachment_id, owner)
        )
        return str(rows[0][0]) if rows else ""

    async def list(
        self,
        owner: str,
        *,
        kind: str | None = None,
        direction: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[AttachmentRow]:
        """The owner's attachments, newest first (``until`` exclusive)."""
        where, params = self._filters(owner, kind, direction, since, until)
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM attachments WHERE {' AND '.join(where)} "
            "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [row_of(r) for r in rows]

    @staticmethod
    def _filters(
        owner: str, kind: str | None, direction: str | None, since: str | None, until: str | None
    ) -> tuple[builtins.list[str], builtins.list[object]]:
        where, params = ["owner = ?"], [owner]
        for column, op, value in (
            ("kind", "=", kind),
            ("direction", "=", direction),
            ("created_at", ">=", since),
            ("created_at", "<", until),
        ):
            if value:
                where.append(f"{column} {op} ?")
                params.append(value)
        return where, list(params)

    async def matches(
        self, owner: str, terms: Sequence[str], *, limit: int
    ) -> builtins.list[tuple[AttachmentRow, float, str]]:
        """The owner's attachments holding any term: (row, bm25 — higher is better —, indexed text)."""
        if not terms:
            return []
        rows = await self._db.read(
            f"SELECT {columns('a')}, bm25(attachments_fts), a.search_text FROM attachments_fts "
            "JOIN attachments a ON a.id = attachments_fts.rowid "
            "WHERE attachments_fts MATCH ? AND a.owner = ? ORDER BY bm25(attachments_fts) LIMIT ?",
            (tokenizer.match_expression(list(terms)), owner, limit),
        )
        return [(row_of(r[:21]), -float(r[21]), str(r[22])) for r in rows]

    async def delete(self, owner: str, attachment_id: int) -> bool:
        """Delete one attachment and its bytes for good (``forget``); False when the owner has none."""
        async with self._db.transaction():
            cur = await self._db.write(
                "DELETE FROM attachments WHERE id = ? AND owner = ?", (attachment_id, owner)
            )
            if cur.rowcount:
                await self._db.write("DELETE FROM attachment_bytes WHERE attachment_id = ?", (attachment_id,))
        return cur.rowcount > 0

    async def count(self, owner: str | None) -> int:
        """Attachments of one owner, or of all."""
        if owner is None:
            return await self._db.scalar("SELECT COUNT(*) FROM attachments")
        return await self._db.scalar("SELECT COUNT(*) FROM attachments WHERE owner = ?", (owner,))
