"""Open the memory store a path or URL names: the SQLite file, or a PostgreSQL database.

The only place that chooses a backend (``MemoryEngine.open``, the benches and ``tierclaw memory copy``
come through here). The PostgreSQL package is imported only for a URL, so SQLite users never load its
driver (docs/architecture.md, "Storage").
"""

from __future__ import annotations

from memory.store.protocol import MemoryStore
from memory.store.urls import is_database_url


async def open_store(target: str, *, create: bool = True, warm_text: bool = True) -> MemoryStore:
    """The store at ``target``: a ``postgresql://`` URL or a SQLite file path (created and upgraded as
    needed unless ``create`` is false). Raises ``MemoryDatabaseError`` with a one-line reason."""
    if is_database_url(target):
        from memory.store.postgres import PostgresStore

        return await PostgresStore.open(target, create=create, warm_text=warm_text)
    from memory.store import SQLiteStore

    return await SQLiteStore.open(target, create=create, warm_text=warm_text)
