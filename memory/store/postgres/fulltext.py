"""Full text on PostgreSQL: term queries over the ``search_tsv`` columns and bm25 computed as FTS5 does.

The candidates' ``text_score`` must mean the same on both stores (``memory/store/search.Candidate``), so it
is not ``ts_rank``: it is Okapi BM25 with FTS5's constants and statistics — every row of the table counts
for N and the average length (all owners, archived rows too), a term's document frequency is the rows
holding it, a row's length its token count (``search_len``), and an idf at or below 0 becomes 1e-6 —
computed here in Python over the rows the GIN index returns. Terms are given already segmented
(``memory/text/tokenizer.py``) and become tsquery lexemes quoted here, so no text a person typed is ever
query syntax.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory.store.sql import SqlDatabase

K1 = 1.2
B = 0.75


def lexeme(term: str) -> str:
    """One quoted tsquery lexeme (backslash and quote escaped)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def any_of(terms: Iterable[str]) -> str:
    """A tsquery matching rows that hold any of ``terms``."""
    return " | ".join(lexeme(t) for t in terms)


def all_of(terms: Iterable[str]) -> str:
    """A tsquery matching rows that hold every one of ``terms``."""
    return " & ".join(lexeme(t) for t in terms)


@dataclass(slots=True, frozen=True)
class Statistics:
    """What bm25 needs of a table: its rows, their average length, each query term's document count."""

    rows: int
    average_length: float
    frequencies: dict[str, int]

    def idf(self, term: str) -> float:
        """FTS5's idf: log((N - n + 0.5) / (n + 0.5)), at least 1e-6.

        N is ``TableSize``'s count, up to ``MAX_AGE_S`` old, while n is read fresh: after another replica
        inserted rows, n can exceed the N this process last read (the log of a negative number raised
        ``ValueError`` and failed retrieval and extraction on every replica). N is at least n."""
        n = self.frequencies.get(term, 0)
        rows = max(self.rows, n)
        value = math.log((rows - n + 0.5) / (n + 0.5)) if rows else 0.0
        return value if value > 0.0 else 1e-6


def bm25(search_text: str, terms: Sequence[str], stats: Statistics) -> float:
    """The row's bm25 for ``terms`` (higher is better), as FTS5's ``bm25()`` negated."""
    tokens = search_text.split()
    counts = Counter(t for t in tokens if t in terms)
    if not counts:
        return 0.0
    length_norm = K1 * (1.0 - B + B * len(tokens) / (stats.average_length or 1.0))
    score = 0.0
    for term in dict.fromkeys(terms):
        freq = counts.get(term, 0)
        if freq:
            score += stats.idf(term) * (freq * (K1 + 1.0)) / (freq + length_norm)
    return score


def bm25_join(terms: Sequence[str], stats: Statistics) -> tuple[str, list[object]]:
    """The server-side twin of ``bm25``: ``LATERAL`` joins giving each row of the table aliased ``m`` its
    score as ``s.score``, and their parameters (in the order the joins' placeholders appear).

    It does the same float operations in the same order as ``bm25`` over the same tokens (``search_len``
    is the count of ``search_text``'s space-separated tokens; every constant is computed here and sent as
    a float8 parameter, never a SQL numeric literal), so ``ORDER BY s.score DESC, m.id LIMIT n`` picks the
    rows ``bm25`` and ``ranked`` would: the server sends the best ``n`` instead of every match (at 100k
    memories one query's matches were thousands of rows, all sent and scored in Python). ``OFFSET 0``
    keeps the planner from inlining the joins, which would split ``search_text`` again for every use of a
    count (measured: the query took nearly twice as long).

    The terms take ``padded_size`` places, the ones past them switched off by a false flag (their count
    is 0, not looked for, and they add 0.0 after the real terms' sum): a few statement texts, not one per
    number of terms, so each pooled connection's prepared statement can settle on a generic plan instead
    of being planned again for every new length."""
    unique = list(dict.fromkeys(terms))
    places = padded_size(len(unique))
    counts = ", ".join(
        f"CASE WHEN CAST(? AS boolean) THEN cardinality(array_positions(x.toks, CAST(? AS text))) ELSE 0 "
        f"END AS f{i}"
        for i in range(places)
    )
    score = " + ".join(
        f"(CASE WHEN f.f{i} > 0 THEN CAST(? AS float8) * (f.f{i} * CAST(? AS float8)) / (f.f{i} + x.norm) "
        "ELSE CAST(0 AS float8) END)"
        for i in range(places)
    )
    join = (
        "CROSS JOIN LATERAL (SELECT string_to_array(m.search_text, ' ') AS toks, CAST(? AS float8) * "
        "(CAST(? AS float8) + CAST(? AS float8) * m.search_len / CAST(? AS float8)) AS norm OFFSET 0) x "
        f"CROSS JOIN LATERAL (SELECT {counts} OFFSET 0) f "
        f"CROSS JOIN LATERAL (SELECT {score} AS score) s "
    )
    padding = places - len(unique)
    params: list[object] = [K1, 1.0 - B, B, stats.average_length or 1.0]
    for term in unique:
        params += [True, term]
    params += [False, None] * padding
    for term in unique:
        params += [stats.idf(term), K1 + 1.0]
    return join, params + [0.0, K1 + 1.0] * padding


def padded_size(count: int, smallest: int = 4) -> int:
    """How many places a list of ``count`` values takes in a statement's text: ``smallest``, or the next
    power of two (4, 8, 16, …), so the texts a query can have stay few."""
    size = smallest
    while size < count:
        size *= 2
    return size


class TableSize:
    """N and the total token count of one table, read again after this process wrote to it (``changed``)
    or when older than ``MAX_AGE_S`` (another process may have written)."""

    MAX_AGE_S = 30.0

    def __init__(self, db: SqlDatabase, table: str) -> None:
        self._db = db
        self._table = table
        self._rows = 0
        self._tokens = 0
        self._read_at: float | None = None

    def changed(self) -> None:
        """This process wrote to the table: read the size again before the next score."""
        self._read_at = None

    def add(self, rows: int, tokens: int) -> None:
        """This process inserted ``rows`` holding ``tokens``: counted in place (no new read)."""
        self._rows += rows
        self._tokens += tokens

    async def get(self) -> tuple[int, float]:
        """(rows, average length)."""
        now = time.monotonic()
        if self._read_at is None or now - self._read_at > self.MAX_AGE_S:
            rows = await self._db.read(f"SELECT COUNT(*), COALESCE(SUM(search_len), 0) FROM {self._table}")
            self._rows, self._tokens = int(rows[0][0]), int(rows[0][1])
            self._read_at = now
        return self._rows, (self._tokens / self._rows if self._rows else 0.0)

    async def statistics(self, frequencies: dict[str, int]) -> Statistics:
        """``Statistics`` with these document frequencies."""
        rows, average = await self.get()
        return Statistics(rows, average, frequencies)


async def term_frequencies(db: SqlDatabase, table: str, terms: Sequence[str]) -> dict[str, int]:
    """How many rows of ``table`` hold each term (the GIN index finds them; the rows are not read)."""
    if not terms:
        return {}
    counts = ", ".join("COUNT(*) FILTER (WHERE search_tsv @@ CAST(? AS tsquery))" for _ in terms)
    rows = await db.read(
        f"SELECT {counts} FROM {table} WHERE search_tsv @@ CAST(? AS tsquery)",
        [*(lexeme(t) for t in terms), any_of(terms)],
    )
    return {t: int(rows[0][i] or 0) for i, t in enumerate(terms)}


def ranked(rows: Sequence[tuple[int, float]], limit: int | None) -> list[int]:
    """Indexes into ``rows`` ((id, score) pairs) best score first, then lowest id; ``limit`` at most."""
    order = sorted(range(len(rows)), key=lambda i: (-rows[i][1], rows[i][0]))
    return order if limit is None else order[:limit]
