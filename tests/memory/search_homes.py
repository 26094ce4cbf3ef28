"""What the tests of a home re-indexed at open share (``test_traditional_chinese.py``,
``test_unknown_words.py``): where the home is, what a question finds in it, and a migration's data
statements run on it as an older tierclaw's upgrade leaves them (``memory/search_refold.py`` walks what
they mark)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from memory.engine import MemoryEngine


def target(memory_url: str, tmp_path: Path) -> str:
    """The store under test: the PostgreSQL URL of the ``both_stores`` run, else a SQLite file."""
    return memory_url or str(tmp_path / "memory.db")


async def found(engine: MemoryEngine, owner: str, query: str) -> list[str]:
    """The contents of the first three memories retrieval finds for ``query``."""
    return [hit.content for hit in await engine.retrieve(owner, query, k=3, touch=False)]


async def run_statements(target: str, statements: list[str]) -> None:
    """Run each SQL statement on the store at ``target``, outside the engine."""
    if target.startswith("postgresql"):
        async with await psycopg.AsyncConnection.connect(target, autocommit=True) as server:
            for statement in statements:
                await server.execute(statement.encode())
        return
    conn = sqlite3.connect(target)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()
