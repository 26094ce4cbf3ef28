"""The memory store: everything that speaks SQL, behind the typed interface in ``protocol.py``.

``SQLiteStore`` (one file, aiosqlite, WAL) is the default implementation; ``postgres.PostgresStore`` the
second, with the same parts and results (``open.open_store`` picks one). Its parts, one table family each:
``memories`` (Tiers 1–2 and their references), ``search`` (full text and candidate queries), ``events``
(Tier 3), ``vectors`` (memory vectors and the content-hash cache), ``buffer`` (the extraction queue: the turns
past each owner's watermark, and the failed ones),
``extraction_due`` and ``embedding_claims`` (background work claimed across replicas), ``sessions``
(Tier 0), ``jobs`` (scheduled job runs), ``inbox`` (messages accepted, not yet answered), ``chat_holds``
(which replica answers each chat), ``turns`` (the raw conversation), ``exchange`` (one exchange
written to the session and the turns — the buffer — at once), ``scratchpads``, ``browse_queries``
(the memory page's reads),
``seen`` (a channel's dedup marks), ``page`` (the memory page's token and sessions), ``attachments``
(voice notes, photos and files, and their bytes) and ``reminders`` (reminders and each person's time zone);
``transaction()`` makes several of their writes one unit of work. Both stores have these rooms, wired
once in ``rooms.py`` (``StoreRooms``); each store makes only its full-text rooms itself (``FullText``).
docs/architecture.md, "Storage", says how the two backends share the table modules and where they differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.store.attachments import AttachmentRows
from memory.store.errors import MemoryDatabaseError
from memory.store.events import EventRows
from memory.store.memories import NewRow
from memory.store.protocol import MemoryStore
from memory.store.rooms import FullText, StoreRooms
from memory.store.search import Candidate, TermIndex
from memory.store.singleton import ProcessSingleton, Singleton
from memory.store.sqlite import SQLiteDatabase
from memory.store.turns import TurnRow, TurnRows
from memory.text import tokenizer

__all__ = ["Candidate", "MemoryDatabaseError", "MemoryStore", "NewRow", "SQLiteStore", "TurnRow"]


class SQLiteStore(StoreRooms[SQLiteDatabase]):
    """The SQLite implementation of ``MemoryStore``. Create with ``await SQLiteStore.open(path)``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        super().__init__(db, FullText(TermIndex(db), EventRows(db), TurnRows(db), AttachmentRows(db)))

    @classmethod
    async def open(cls, path: str, *, create: bool = True, warm_text: bool = True) -> SQLiteStore:
        """Open (and create or upgrade) the file; jieba's dictionary starts loading in the background,
        without being waited for (unless ``warm_text`` is false: then on first use)."""
        if warm_text:
            tokenizer.warm_up_in_background()
        return await cls(await SQLiteDatabase.open(path, create=create)).loaded()

    def singleton(self, name: str) -> Singleton:
        """Exclusive work ``name``: one process owns a SQLite file, so always this one's."""
        return ProcessSingleton(name)


if TYPE_CHECKING:  # mypy (CI) checks here that SQLiteStore implements the whole protocol
    _implements: type[MemoryStore] = SQLiteStore
