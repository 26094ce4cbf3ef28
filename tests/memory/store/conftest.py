"""The ``store`` fixture: one open ``MemoryStore`` per backend (a SQLite file, then a fresh PostgreSQL
database), so each contract test runs against both and states what every store must do."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memory.store.open import open_store
from memory.store.protocol import MemoryStore


@pytest.fixture
async def store(memory_db: str) -> AsyncIterator[MemoryStore]:
    """An open store on ``memory_db`` (parametrised over sqlite and postgres), closed after the test."""
    opened = await open_store(memory_db, warm_text=False)
    try:
        yield opened
    finally:
        await opened.close()
