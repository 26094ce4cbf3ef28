"""Full-text search over memories on PostgreSQL: the same ``SearchAPI`` as ``memory/store/search.py``.

Candidates come from the GIN index on ``search_tsv``; their ``text_score`` is bm25 as FTS5 computes it
(``fulltext.py``), so retrieval ranks them exactly as it ranks SQLite's. Document frequencies are cached
the same way as on SQLite (reused until the index grew or shrank by a few percent; a written text's terms
are dropped at once). They are ``memory_terms`` plus the deltas the memories' trigger appended since the
last fold (``fold_terms``, after memory writes): writers never lock a shared term row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from memory.store.errors import is_database_error
from memory.store.postgres.fulltext import Statistics, TableSize, all_of, any_of, bm25, bm25_join, ranked
from memory.store.search import Candidate
from memory.store.sql import TERM_FOLD_LOCK, SqlDatabase, marks

_CANDIDATE_COLUMNS = (
    "id, owner, tier, project, topic, category, content, importance, created_at, last_accessed, search_text"
)
_COLUMNS_M = ", ".join(f"m.{c.strip()}" for c in _CANDIDATE_COLUMNS.split(","))
_SEARCH_TEXT = 10  # position of search_text in a candidate row
# A document frequency: the folded count plus the deltas written since (schema version 20, ``_TERMS``).
# With each term, how many rows were summed: a term whose deltas piled up (a burst of writes and no write
# after it to fold them, a writer that died) has the reader fold them (``FOLD_ROWS``).
_FREQUENCIES = (
    "SELECT term, SUM(docs), COUNT(*) FROM (SELECT term, docs FROM memory_terms WHERE term = ANY(?) "
    "UNION ALL SELECT term, docs FROM memory_term_deltas WHERE term = ANY(?)) AS t GROUP BY term"
)
FOLD_ROWS = 32
# Folding the deltas into ``memory_terms``: one statement, by one process at a time (the others skip it
# rather than wait: the next fold takes what they would have); the upsert in term order.
_FOLD = (
    "WITH go AS (SELECT pg_try_advisory_xact_lock(?, 0) AS got), "
    "gone AS (DELETE FROM memory_term_deltas WHERE (SELECT got FROM go) RETURNING term, docs), "
    "summed AS (SELECT term, SUM(docs) AS docs FROM gone GROUP BY term) "
    "INSERT INTO memory_terms (term, docs) SELECT term, docs FROM summed ORDER BY term "
    "ON CONFLICT (term) DO UPDATE SET docs = memory_terms.docs + EXCLUDED.docs"
)
FOLD_EVERY_S = 2.0  # a process folds at most this often, after its own memory writes
log = logging.getLogger(__name__)


class PostgresTermIndex:
    """Term statistics of the memory index, and the candidate queries."""

    def __init__(self, db: SqlDatabase, clock: Callable[[], float] = time.monotonic) -> None:
        self._db = db
        self._clock = clock
        self._folded_at: float | None = None
        self._size = TableSize(db, "memories")
        self._indexed_rows = 0
        self._df_cache: dict[str, int] = {}
        self._df_cache_rows = 0
        # A text was written: +1 row of these tokens if an insert follows, else (an edit) read the size again.
        self._written_tokens: int | None = None

    @property
    def indexed_rows(self) -> int:
        """Rows in the index (all owners), kept current by this process's writes."""
        return self._indexed_rows

    @indexed_rows.setter
    def indexed_rows(self, value: int) -> None:
        if self._written_tokens is not None and value == self._indexed_rows + 1:
            self._size.add(1, self._written_tokens)  # the insert of the text just written
        else:
            self._size.changed()
        self._written_tokens = None
        self._indexed_rows = value

    async def load(self) -> None:
        """Count the indexed rows once at open."""
        self.indexed_rows = await self._db.scalar("SELECT COUNT(*) FROM memories")

    def forget_terms(self, search_text: str) -> None:
        """Drop cached frequencies of a written text's terms: a new word must be matchable at once."""
        tokens = search_text.split()
        for term in set(tokens):
            self._df_cache.pop(term, None)
        self._written_tokens = len(tokens)

    async def others_wrote(self, owner: str | None, rows_delta: int) -> None:
        """Another replica changed ``owner``'s memories (``memory/store/changes.py``): every cached
        frequency goes and the row count moves by their delta (counted again when unknown); the table's
        size for bm25 keeps its own age (``TableSize.MAX_AGE_S``)."""
        self._df_cache.clear()
        if owner is None:
            await self.load()
        else:
            self._indexed_rows += rows_delta

    async def document_frequencies(self, terms: tuple[str, ...]) -> dict[str, int]:
        """How many memories (all owners) contain each term; 0 for a term none has."""
        if abs(self.indexed_rows - self._df_cache_rows) > max(50, self._df_cache_rows // 20):
            self._df_cache.clear()
            self._df_cache_rows = self.indexed_rows
        missing = [t for t in dict.fromkeys(terms) if t not in self._df_cache]
        if missing:
            rows = await self._db.read(_FREQUENCIES, [missing, missing])
            self._df_cache.update(dict.fromkeys(missing, 0) | {str(t): int(d) for t, d, _ in rows})
            if any(int(n) > FOLD_ROWS for _, _, n in rows):
                await self.fold_terms()
        return {t: self._df_cache[t] for t in terms}

    async def fold_terms(self) -> None:
        """Fold the term deltas memory writes appended into ``memory_terms`` (at most every
        ``FOLD_EVERY_S`` in this process; after a write's commit, or when a read summed many deltas of a
        term — never inside a transaction).
        A failure is logged and left to the next fold: the frequencies read stay right meanwhile."""
        now = self._clock()
        if self._db.in_transaction():  # its locks would be held to that transaction's end: later
            return
        if self._folded_at is not None and now - self._folded_at < FOLD_EVERY_S:
            return
        self._folded_at = now
        try:
            await self._db.write(_FOLD, (TERM_FOLD_LOCK,))
        except Exception as exc:
            if not is_database_error(exc):
                raise
            log.info("[memory] term counts not folded this time: %s", type(exc).__name__)

    async def _statistics(self, terms: Sequence[str]) -> Statistics:
        if self._written_tokens is not None:  # an edit changed a row's length: read the size again
            self._size.changed()
            self._written_tokens = None
        return await self._size.statistics(await self.document_frequencies(tuple(terms)))

    async def _best(
        self, where: str, params: Sequence[object], terms: Sequence[str], limit: int
    ) -> list[Candidate]:
        """The ``limit`` rows matching ``where`` (over ``memories m``) with the best bm25, best first.

        The server scores and cuts (``fulltext.bm25_join``); the rows it returns are scored again here
        with ``bm25`` (a few dozen), so ``text_score`` is the very value the Python scorer gives."""
        stats = await self._statistics(terms)
        join, join_params = bm25_join(terms, stats)
        rows = await self._db.read(
            f"SELECT {_COLUMNS_M} FROM memories m {join}WHERE {where} ORDER BY s.score DESC, m.id LIMIT ?",
            [*join_params, *params, limit],
        )
        scores = [bm25(str(r[_SEARCH_TEXT]), terms, stats) for r in rows]
        order = ranked([(int(r[0]), s) for r, s in zip(rows, scores, strict=True)], limit)
        return [Candidate._make((*rows[i], scores[i])) for i in order]

    async def matches(
        self,
        owner: str,
        terms: list[str],
        *,
        tiers: tuple[int, ...],
        limit: int,
        newest_first: bool = False,
        created_between: tuple[str, str] | None = None,
    ) -> list[Candidate]:
        """The owner's live memories matching any term, best bm25 first (or the newest ``limit``)."""
        if not terms:
            return []
        when: str = ""
        when_params: tuple[str, ...] = ()
        if created_between is not None:
            when, when_params = "AND created_at >= ? AND created_at < ? ", created_between
        if not newest_first:
            where = (
                f"m.search_tsv @@ CAST(? AS tsquery) AND m.owner = ? AND m.is_archived = 0 "
                f"AND m.tier IN ({marks(tiers)}) {when}"
            )
            return await self._best(where, [any_of(terms), owner, *tiers, *when_params], terms, limit)
        rows = await self._db.read(
            f"SELECT {_CANDIDATE_COLUMNS} FROM memories WHERE search_tsv @@ CAST(? AS tsquery) "
            f"AND owner = ? AND is_archived = 0 AND tier IN ({marks(tiers)}) {when}ORDER BY id DESC LIMIT ?",
            [any_of(terms), owner, *tiers, *when_params, limit],
        )
        stats = await self._statistics(terms)
        return [Candidate._make((*r, bm25(str(r[_SEARCH_TEXT]), terms, stats))) for r in rows]

    async def containing_all(
        self, owner: str, terms: list[str], tier: int, limit: int = 5
    ) -> list[tuple[int, str]]:
        """(id, content) of the owner's live memories of ``tier`` containing every term, best bm25 first."""
        if not terms:
            return []
        where = "m.search_tsv @@ CAST(? AS tsquery) AND m.owner = ? AND m.is_archived = 0 AND m.tier = ?"
        best = await self._best(where, [all_of(terms), owner, tier], terms, limit)
        return [(c.id, c.content) for c in best]

    async def written_between(
        self, owner: str, start: str, end: str, tiers: tuple[int, ...], limit: int
    ) -> list[Candidate]:
        """The owner's most important live memories written in [start, end) (for time-only questions)."""
        rows = await self._db.read(
            f"SELECT {_CANDIDATE_COLUMNS} FROM memories WHERE owner = ? AND tier IN ({marks(tiers)}) "
            "AND is_archived = 0 AND created_at >= ? AND created_at < ? "
            "ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, *tiers, start, end, limit),
        )
        return [Candidate._make((*r, 0.0)) for r in rows]

    async def in_project(
        self, owner: str, project: str, tiers: tuple[int, ...], limit: int
    ) -> list[Candidate]:
        """The most important live memories of one project partition."""
        rows = await self._db.read(
            f"SELECT {_CANDIDATE_COLUMNS} FROM memories WHERE owner = ? AND tier IN ({marks(tiers)}) "
            "AND project = ? AND is_archived = 0 ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, *tiers, project, limit),
        )
        return [Candidate._make((*r, 0.0)) for r in rows]

    async def by_ids(self, owner: str, ids: list[int]) -> list[Candidate]:
        """Candidate rows for memories found by their vectors (live rows of the owner only)."""
        if not ids:
            return []
        rows = await self._db.read(
            f"SELECT {_CANDIDATE_COLUMNS} FROM memories WHERE id IN ({marks(ids)}) "
            "AND owner = ? AND is_archived = 0 ORDER BY id",
            (*ids, owner),
        )
        return [Candidate._make((*r, 0.0)) for r in rows]
