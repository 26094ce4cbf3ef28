"""The memory store: everything that speaks SQL, behind the typed interface in ``protocol.py``.

``SQLiteStore`` (one file, aiosqlite, WAL) is the default implementation; ``postgres.PostgresStore`` the
second, with the same parts and results (``open.open_store`` picks one). Its parts, one table family each:
``memories`` (Tiers 1–2 and their references), ``search`` (full text and candidate queries), ``events``
(Tier 3), ``vectors`` (memory vectors and the content-hash cache), ``buffer`` (the extraction queue),
``extraction_due`` and ``embedding_claims`` (background work claimed across replicas), ``sessions``
(Tier 0), ``jobs`` (scheduled job runs), ``inbox`` (messages accepted, not yet answered), ``chat_holds``
(which replica answers each chat), ``turns`` (the raw conversation), ``exchange`` (one exchange
written to the session, the turns and the buffer at once), ``scratchpads``, ``browse_queries``
(the memory page's reads),
``seen`` (a channel's dedup marks), ``page`` (the memory page's token and sessions), ``attachments``
(voice notes, photos and files, and their bytes) and ``reminders`` (reminders and each person's time zone);
``transaction()`` makes several of their writes one unit of work. docs/architecture.md, "Storage", says
how the two backends share the table modules and where they differ.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from memory.store.attachments import AttachmentRows
from memory.store.browse_queries import BrowseRows
from memory.store.changes import ChangeFeed
from memory.store.chat_holds import ChatHoldRows
from memory.store.chat_sessions import SessionRows
from memory.store.dedup_marks import SeenRows
from memory.store.errors import MemoryDatabaseError
from memory.store.events import EventRows
from memory.store.exchange import ExchangeRows
from memory.store.extraction_buffer import BufferRows
from memory.store.inbox import InboxRows
from memory.store.job_runs import JobClaimRows, JobRows
from memory.store.memories import MemoryRows, NewRow
from memory.store.page_access import PageAccessRows
from memory.store.protocol import MemoryStore
from memory.store.reminders import ReminderRows
from memory.store.scratchpads import ScratchpadRows
from memory.store.search import Candidate, TermIndex
from memory.store.singleton import ProcessSingleton, Singleton
from memory.store.sqlite import SQLiteDatabase
from memory.store.turns import TurnRow, TurnRows
from memory.store.vectors import VectorRows
from memory.store.work_claims import EmbeddingClaimRows, ExtractionDueRows
from memory.text import tokenizer

__all__ = ["Candidate", "MemoryDatabaseError", "MemoryStore", "NewRow", "SQLiteStore", "TurnRow"]


class SQLiteStore:
    """The SQLite implementation of ``MemoryStore``. Create with ``await SQLiteStore.open(path)``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self.db = db
        self.path = db.path
        self.changes = ChangeFeed(db)
        self.search = TermIndex(db)
        self.changes.listen("memories", self.search.others_wrote)
        self.memories = MemoryRows(db, self.search, self.changes)
        self.events = EventRows(db)
        self.vectors = VectorRows(db, self.changes)
        self.buffer = BufferRows(db)
        self.extraction_due = ExtractionDueRows(db)
        self.embedding_claims = EmbeddingClaimRows(db)
        self.sessions = SessionRows(db, self.changes)
        self.jobs = JobRows(db)
        self.job_claims = JobClaimRows(db)
        self.inbox = InboxRows(db)
        self.chat_holds = ChatHoldRows(db)
        self.turns = TurnRows(db)
        self.exchange = ExchangeRows(db)
        self.scratchpads = ScratchpadRows(db, self.changes)
        self.browse = BrowseRows(db)
        self.seen = SeenRows(db)
        self.page = PageAccessRows(db)
        self.attachments = AttachmentRows(db)
        self.reminders = ReminderRows(db)

    @classmethod
    async def open(cls, path: str, *, create: bool = True, warm_text: bool = True) -> SQLiteStore:
        """Open (and create or upgrade) the file; jieba's dictionary starts loading in the background,
        without being waited for (unless ``warm_text`` is false: then on first use)."""
        if warm_text:
            tokenizer.warm_up_in_background()
        db = await SQLiteDatabase.open(path, create=create)
        store = cls(db)
        try:
            await store.search.load()
            await store.changes.load()
        except BaseException:
            await db.close()
            raise
        return store

    async def close(self) -> None:
        """Close the connection."""
        await self.db.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """One unit of work over any of the parts (see ``SQLiteDatabase.transaction``)."""
        async with self.db.transaction():
            yield

    def singleton(self, name: str) -> Singleton:
        """Exclusive work ``name``: one process owns a SQLite file, so always this one's."""
        return ProcessSingleton(name)


if TYPE_CHECKING:  # mypy (CI) checks here that SQLiteStore implements the whole protocol
    _implements: type[MemoryStore] = SQLiteStore
