"""Read the engine's file with stdlib sqlite3: tests check what is really stored, not what the API says."""

from __future__ import annotations

import sqlite3

from memory.engine import MemoryEngine


def sql(engine: MemoryEngine, query: str, params: tuple = ()) -> list[tuple]:
    """Rows of ``query`` run on a separate connection to the engine's database file."""
    conn = sqlite3.connect(engine.path)
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()
