"""The seed-literal baseline: what the original design's schema and query do verbatim, for comparison in
every benchmark.

FTS5 with ``tokenize='unicode61'`` over the raw content (a run of Han characters is one token), keywords
split on non-word characters and ORed, top 10 by FTS rank, then re-sorted by the seed's relevanceScore.
It lives in bench/ because the product never uses it.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime

from memory.clock import days_between, to_db
from memory.retrieval.decay import relevance_score

_KEYWORD = re.compile(r"\w+", re.UNICODE)


def seed_keywords(text: str) -> list[str]:
    """Seed 000's rule keywords: word runs of two or more characters, lower case, distinct."""
    seen: dict[str, None] = {}
    for word in _KEYWORD.findall(text.lower()):
        if len(word) >= 2:
            seen.setdefault(word, None)
    return list(seen)


class SeedLiteralIndex:
    """An in-memory SQLite store with the seed's raw-text unicode61 FTS table."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.executescript(
            "CREATE TABLE memories (id INTEGER PRIMARY KEY, owner TEXT, ref TEXT, content TEXT, "
            "category TEXT, importance REAL, last_accessed TEXT);"
            "CREATE INDEX idx_owner ON memories(owner);"
            "CREATE VIRTUAL TABLE memories_fts USING fts5(content, content='memories', content_rowid='id', "
            "tokenize='unicode61');"
        )

    def add(self, owner: str, ref: str, content: str, category: str, importance: float, at: datetime) -> None:
        """Insert one memory (the FTS row is written alongside, as the seed's trigger does)."""
        cur = self.db.execute(
            "INSERT INTO memories (owner, ref, content, category, importance, last_accessed) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (owner, ref, content, category, importance, to_db(at)),
        )
        self.db.execute("INSERT INTO memories_fts(rowid, content) VALUES (?, ?)", (cur.lastrowid, content))

    def query(self, owner: str, text: str, now: datetime, k: int = 10) -> list[str]:
        """Refs of the top ``k`` memories for ``text`` the way the original design's query ranks them."""
        words = seed_keywords(text)
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT m.ref, m.category, m.importance, m.last_accessed FROM memories_fts "
            "JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? AND m.owner = ? "
            "ORDER BY rank LIMIT 10",
            (expr, owner),
        ).fetchall()
        ranked = sorted(
            rows, key=lambda r: -relevance_score(r[1], r[2], days_between(r[3], now))
        )  # stable: FTS order breaks ties
        return [r[0] for r in ranked[:k]]
