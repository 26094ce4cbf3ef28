"""The PostgreSQL implementation of ``MemoryStore``: the same parts and results as ``SQLiteStore``.

Imported only when the configured database is a ``postgresql://`` URL (``memory/store/open.py``), so
SQLite users never load psycopg. The parts share the backend-neutral table modules (``memory/store/*.py``)
through ``database.PostgresDatabase``; full text is ``search.py`` and ``rows.py``; the schema, with the
same version numbers as SQLite's, is ``schema.py`` (docs/architecture.md, "Storage").
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psycopg

from memory.store.browse_queries import BrowseRows
from memory.store.changes import ChangeFeed
from memory.store.chat_holds import ChatHoldRows
from memory.store.chat_sessions import SessionRows
from memory.store.dedup_marks import SeenRows
from memory.store.errors import MemoryDatabaseError
from memory.store.exchange import ExchangeRows
from memory.store.extraction_buffer import BufferRows
from memory.store.inbox import InboxRows
from memory.store.job_runs import JobClaimRows, JobRows
from memory.store.memories import MemoryRows
from memory.store.page_access import PageAccessRows
from memory.store.postgres.attachments import PostgresAttachmentRows
from memory.store.postgres.database import PostgresDatabase, connect, describe
from memory.store.postgres.rows import PostgresEventRows, PostgresTurnRows
from memory.store.postgres.schema import migrate
from memory.store.postgres.search import PostgresTermIndex
from memory.store.postgres.singleton import AdvisorySingleton
from memory.store.reminders import ReminderRows
from memory.store.scratchpads import ScratchpadRows
from memory.store.singleton import Singleton
from memory.store.urls import masked
from memory.store.vectors import VectorRows
from memory.store.work_claims import EmbeddingClaimRows, ExtractionDueRows
from memory.text import tokenizer

__all__ = ["PostgresStore"]


class PostgresStore:
    """``MemoryStore`` on a PostgreSQL database. Create with ``await PostgresStore.open(url)``."""

    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        self.path = db.path  # the URL, password masked: safe to show and log
        self.changes = ChangeFeed(db)
        self.search = PostgresTermIndex(db)
        self.changes.listen("memories", self.search.others_wrote)
        self.memories = MemoryRows(db, self.search, self.changes)
        self.events = PostgresEventRows(db)
        self.vectors = VectorRows(db, self.changes)
        self.buffer = BufferRows(db)
        self.extraction_due = ExtractionDueRows(db)
        self.embedding_claims = EmbeddingClaimRows(db)
        self.sessions = SessionRows(db, self.changes)
        self.jobs = JobRows(db)
        self.job_claims = JobClaimRows(db)
        self.inbox = InboxRows(db)
        self.chat_holds = ChatHoldRows(db)
        self.turns = PostgresTurnRows(db)
        self.exchange = ExchangeRows(db, self.turns.written)
        self.scratchpads = ScratchpadRows(db, self.changes)
        self.browse = BrowseRows(db)
        self.seen = SeenRows(db)
        self.page = PageAccessRows(db)
        self.attachments = PostgresAttachmentRows(db)
        self.reminders = ReminderRows(db)

    @classmethod
    async def open(cls, url: str, *, create: bool = True, warm_text: bool = True) -> PostgresStore:
        """Connect, create or upgrade the schema, and open the pool. ``MemoryDatabaseError`` (one line,
        the URL with its password masked) when the server is unreachable, refuses the login, has no such
        database, or the user may not create the tables."""
        if warm_text:
            tokenizer.warm_up_in_background()
        conn = await connect(url)
        try:
            await migrate(conn, masked(url), create=create)
        except psycopg.Error as exc:
            raise MemoryDatabaseError(describe(exc, url)) from None
        finally:
            await conn.close()
        db = await PostgresDatabase.open(url)
        store = cls(db)
        try:
            await store.search.load()
            await store.changes.load()
        except BaseException:
            await db.close()
            raise
        return store

    async def close(self) -> None:
        """Close the pool."""
        await self.db.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """One unit of work over any of the parts (see ``PostgresDatabase.transaction``)."""
        async with self.db.transaction():
            yield

    def singleton(self, name: str) -> Singleton:
        """Exclusive work ``name`` across replicas: an advisory lock on its own connection
        (``postgres/singleton.py``)."""
        return AdvisorySingleton(self.db.url, name)
