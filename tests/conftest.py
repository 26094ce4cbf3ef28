"""Shared fixtures for the memory tests: a real MemoryEngine on a fresh SQLite file per test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.engine import MemoryEngine


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[MemoryEngine]:
    """A MemoryEngine on tmp_path/"memory.db", closed after the test."""
    eng = await MemoryEngine.open(tmp_path / "memory.db")
    try:
        yield eng
    finally:
        await eng.close()
