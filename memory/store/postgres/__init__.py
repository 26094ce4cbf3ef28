"""The PostgreSQL implementation of ``MemoryStore``: the same parts and results as ``SQLiteStore``.

Imported only when the configured database is a ``postgresql://`` URL (``memory/store/open.py``), so
SQLite users never load psycopg. The rooms are ``SQLiteStore``'s, wired once in ``memory/store/rooms.py``
on ``database.PostgresDatabase``; full text, which differs, is ``search.py``, ``rows.py`` and
``attachments.py``; the schema, with the same version numbers as SQLite's, is ``schema.py``
(docs/architecture.md, "Storage").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg

from memory.store.errors import MemoryDatabaseError
from memory.store.postgres.attachments import PostgresAttachmentRows
from memory.store.postgres.database import PostgresDatabase, connect, describe
from memory.store.postgres.rows import PostgresEventRows, PostgresTurnRows
from memory.store.postgres.schema import migrate
from memory.store.postgres.search import PostgresTermIndex
from memory.store.postgres.singleton import AdvisorySingleton
from memory.store.rooms import FullText, StoreRooms
from memory.store.singleton import Singleton
from memory.store.urls import masked
from memory.text import tokenizer

if TYPE_CHECKING:
    from memory.store.protocol import MemoryStore

__all__ = ["PostgresStore"]


class PostgresStore(StoreRooms[PostgresDatabase]):
    """``MemoryStore`` on a PostgreSQL database. Create with ``await PostgresStore.open(url)``."""

    def __init__(self, db: PostgresDatabase) -> None:
        full_text = FullText(
            PostgresTermIndex(db), PostgresEventRows(db), PostgresTurnRows(db), PostgresAttachmentRows(db)
        )
        super().__init__(db, full_text)

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
        return await cls(await PostgresDatabase.open(url)).loaded()

    def singleton(self, name: str) -> Singleton:
        """Exclusive work ``name`` across replicas: an advisory lock on its own connection
        (``postgres/singleton.py``)."""
        return AdvisorySingleton(self.db.url, name)


if TYPE_CHECKING:  # mypy (CI) checks here that PostgresStore implements the whole protocol
    _implements: type[MemoryStore] = PostgresStore
