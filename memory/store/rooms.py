"""Which rooms a memory store has, wired once for both stores: adding a room is one edit here.

``StoreRooms`` makes every part of ``MemoryStore`` (``protocol.py``) on one database and is the base of
``SQLiteStore`` (``memory/store/__init__.py``) and ``PostgresStore`` (``postgres/__init__.py``). The only
rooms the two make differently are those of full text — FTS5 and bm25 in SQLite, ``tsvector`` and bm25
computed in SQL on PostgreSQL —: each store hands over its own in ``FullText``. What else each store
adds is how it opens (a file, or a migrated server and a pool) and its ``singleton``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Generic, NamedTuple, Protocol, Self, TypeVar

from memory.store.attachments import AttachmentRows
from memory.store.browse_queries import BrowseRows
from memory.store.changes import ChangeFeed
from memory.store.chat_holds import ChatHoldRows
from memory.store.chat_sessions import SessionRows
from memory.store.dedup_marks import SeenRows
from memory.store.events import EventRows
from memory.store.exchange import ExchangeRows
from memory.store.extraction_buffer import BufferRows
from memory.store.inbox import InboxRows
from memory.store.job_runs import JobClaimRows, JobRows
from memory.store.memories import MemoryRows, WrittenTexts
from memory.store.page_access import PageAccessRows
from memory.store.protocol import SearchAPI
from memory.store.refold import RefoldRows
from memory.store.reminders import ReminderRows
from memory.store.scratchpads import ScratchpadRows
from memory.store.sql import SqlDatabase
from memory.store.turns import TurnRows
from memory.store.vectors import VectorRows
from memory.store.work_claims import EmbeddingClaimRows, ExtractionDueRows


class MemoryIndex(SearchAPI, WrittenTexts, Protocol):
    """A store's full text over memories as the wiring uses it: searched, told of each text written,
    counted at open, and told when another process wrote memories (``changes.py``)."""

    async def load(self) -> None: ...
    async def others_wrote(self, owner: str | None, rows_delta: int) -> None: ...


class FullText(NamedTuple):
    """The rooms each store makes its own way, because their full text differs."""

    search: MemoryIndex  # ``search.TermIndex`` or ``postgres/search.PostgresTermIndex``
    events: EventRows  # ``EventRows`` or ``postgres/rows.PostgresEventRows``
    turns: TurnRows  # ``TurnRows`` or ``postgres/rows.PostgresTurnRows``
    attachments: AttachmentRows  # ``AttachmentRows`` or ``postgres/attachments.PostgresAttachmentRows``


class OwnDatabase(SqlDatabase, Protocol):
    """What a store does with its own database beyond the table modules' ``SqlDatabase``: close it."""

    async def close(self) -> None: ...


DatabaseT = TypeVar("DatabaseT", bound=OwnDatabase)


class StoreRooms(Generic[DatabaseT]):
    """Every room of a store on ``db``, the full-text ones as the store made them."""

    def __init__(self, db: DatabaseT, full_text: FullText) -> None:
        self.db = db
        self.path = db.path  # a file path, or a URL with its password masked: safe to show and log
        self.changes = ChangeFeed(db)
        self.search = full_text.search
        self.changes.listen("memories", self.search.others_wrote)
        self.memories = MemoryRows(db, self.search, self.changes)
        self.events = full_text.events
        self.vectors = VectorRows(db, self.changes)
        self.buffer = BufferRows(db)
        self.extraction_due = ExtractionDueRows(db)
        self.embedding_claims = EmbeddingClaimRows(db)
        self.sessions = SessionRows(db, self.changes)
        self.jobs = JobRows(db)
        self.job_claims = JobClaimRows(db)
        self.inbox = InboxRows(db)
        self.chat_holds = ChatHoldRows(db)
        self.turns = full_text.turns
        self.exchange = ExchangeRows(db, self.turns.written)
        self.scratchpads = ScratchpadRows(db, self.changes)
        self.browse = BrowseRows(db)
        self.seen = SeenRows(db)
        self.page = PageAccessRows(db)
        self.attachments = full_text.attachments
        self.reminders = ReminderRows(db)
        self.refold = RefoldRows(db)  # re-indexing rows indexed before Traditional Chinese was folded

    async def loaded(self) -> Self:
        """This store once what its rooms cache is read (the index's row count, the change version): the
        last step of opening it; the database is closed when that fails."""
        try:
            await self.search.load()
            await self.changes.load()
        except BaseException:
            await self.db.close()
            raise
        return self

    async def close(self) -> None:
        """Close the database (SQLite's connection, PostgreSQL's pool)."""
        await self.db.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """One unit of work over any of the rooms (the database's ``transaction``)."""
        async with self.db.transaction():
            yield
