"""Full-text search over memories: term statistics and the candidate queries retrieval ranks.

The caller gives already segmented terms (``memory/text/tokenizer.py``); how they become an FTS5 ``MATCH``
(quoted, so nothing a user types is FTS syntax) and how bm25 is computed stays here, on the SQLite side of
the store seam (docs/architecture.md, "Storage").

Every candidate query returns ``Candidate`` rows of one layout, so retrieval can mix FTS hits, partition
rows, time-window rows and vector hits without caring where each came from.
"""

from __future__ import annotations

from typing import NamedTuple

from memory.store.schema import OWNER_SHIFT
from memory.store.sql import SqlDatabase, marks, qualified
from memory.text import tokenizer

_CANDIDATE_COLUMNS = (
    "id, owner, tier, project, topic, category, content, importance, created_at, last_accessed, search_text"
)
# One owner's rows of ``memories_fts`` (schema version 26: rowid = owner's slot << OWNER_SHIFT | id): FTS5
# seeks to the range instead of walking every owner's matches; parameters (owner, owner). An owner
# without a slot (no memory yet) makes both bounds NULL: nothing matches.
_ID_BITS = (1 << OWNER_SHIFT) - 1
_OWNER_RANGE = (
    f"memories_fts.rowid BETWEEN (SELECT slot << {OWNER_SHIFT} FROM search_owners WHERE owner = ?) "
    f"AND (SELECT (slot << {OWNER_SHIFT}) | {_ID_BITS} FROM search_owners WHERE owner = ?)"
)
_JOIN = f"FROM memories_fts JOIN memories m ON m.id = (memories_fts.rowid & {_ID_BITS}) "


class Candidate(NamedTuple):
    """A live memory that may answer a query. ``text_score`` is its Okapi BM25 score for the query's terms
    (k1 1.2, b 0.75, over ``search_text`` tokens and the whole index's statistics: SQLite FTS5's ``bm25()``
    negated; the PostgreSQL store computes the same), higher is better; 0.0 when the row did not come from
    a full-text match. Both stores give it the same meaning, so ranking is one piece of code."""

    id: int
    owner: str
    tier: int
    project: str
    topic: str
    category: str
    content: str
    importance: float
    created_at: str
    last_accessed: str
    search_text: str
    text_score: float


class TermIndex:
    """Term statistics of the memory index, and the candidate queries.

    Document frequencies come from the FTS vocabulary and are reused until enough rows changed that they
    may be off by more than a few percent (idf moves slowly; the lookup costs ~0.3 ms per query). Writes
    through ``memory/store/memories.py`` keep ``indexed_rows`` current and drop the cached frequencies of
    the terms they add, so a new word is matchable at once.
    """

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self.indexed_rows = 0
        self._df_cache: dict[str, int] = {}
        self._df_cache_rows = 0

    async def load(self) -> None:
        """Count the indexed rows once at open."""
        self.indexed_rows = await self._db.scalar("SELECT COUNT(*) FROM memories")

    def forget_terms(self, search_text: str) -> None:
        """Drop cached frequencies of a written text's terms: a new word must be matchable at once."""
        for term in set(search_text.split()):
            self._df_cache.pop(term, None)

    async def others_wrote(self, owner: str | None, rows_delta: int) -> None:
        """Another process changed ``owner``'s memories (``changes.py``): which terms is unknown, so every
        cached frequency goes (a new word of theirs must be matchable here too); the row count moves by
        their delta, or is counted again when unknown (``owner`` None)."""
        self._df_cache.clear()
        if owner is None:
            await self.load()
        else:
            self.indexed_rows += rows_delta

    async def fold_terms(self) -> None:
        """Nothing to fold: FTS5 keeps its own vocabulary (PostgreSQL folds its term deltas here)."""

    async def document_frequencies(self, terms: tuple[str, ...]) -> dict[str, int]:
        """How many memories (all owners) contain each term; 0 for a term none has."""
        if abs(self.indexed_rows - self._df_cache_rows) > max(50, self._df_cache_rows // 20):
            self._df_cache.clear()
            self._df_cache_rows = self.indexed_rows
        missing = [t for t in terms if t not in self._df_cache]
        if missing:
            rows = await self._db.read(
                f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks(missing)})", missing
            )
            self._df_cache.update(dict.fromkeys(missing, 0) | {t: int(d) for t, d in rows})
        return {t: self._df_cache[t] for t in terms}

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
        """The owner's live memories matching any term, best bm25 first (or newest first).

        Only the owner's rowid range of the index is read (``_OWNER_RANGE``); within it rowid order is id
        order, so ``newest_first`` and bm25's ties come out as they did when the index held ids.
        ``newest_first`` is for terms that are all very common: FTS5 walks its doclist by rowid and stops
        early instead of scoring every match; bm25 then orders that sample.
        """
        order = "memories_fts.rowid DESC" if newest_first else "b"
        when = ""
        when_params: tuple[str, ...] = ()
        if created_between is not None:
            when, when_params = "AND m.created_at >= ? AND m.created_at < ? ", created_between
        columns = qualified(_CANDIDATE_COLUMNS, "m")
        rows = await self._db.read(
            f"SELECT {columns}, bm25(memories_fts) AS b {_JOIN}"
            f"WHERE memories_fts MATCH ? AND {_OWNER_RANGE} AND m.owner = ? AND m.is_archived = 0 "
            f"AND m.tier IN ({marks(tiers)}) "
            f"{when}ORDER BY {order} LIMIT ?",
            (tokenizer.match_expression(terms), owner, owner, owner, *tiers, *when_params, limit),
        )
        return [Candidate._make([*r[:-1], -float(r[-1])]) for r in rows]

    async def containing_all(
        self, owner: str, terms: list[str], tier: int, limit: int = 5
    ) -> list[tuple[int, str]]:
        """(id, content) of the owner's live memories of ``tier`` containing every term, best bm25 first."""
        rows = await self._db.read(
            f"SELECT m.id, m.content {_JOIN}"
            f"WHERE memories_fts MATCH ? AND {_OWNER_RANGE} AND m.owner = ? AND m.is_archived = 0 "
            "AND m.tier = ? ORDER BY bm25(memories_fts) LIMIT ?",
            (" AND ".join(tokenizer.quote_term(t) for t in terms), owner, owner, owner, tier, limit),
        )
        return [(int(i), str(content)) for i, content in rows]

    async def written_between(
        self, owner: str, start: str, end: str, tiers: tuple[int, ...], limit: int
    ) -> list[Candidate]:
        """The owner's most important live memories written in [start, end) (for time-only questions)."""
        rows = await self._db.read(
            f"SELECT {_CANDIDATE_COLUMNS}, 0.0 FROM memories WHERE owner = ? AND tier IN ({marks(tiers)}) "
            "AND is_archived = 0 AND created_at >= ? AND created_at < ? "
            "ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, *tiers, start, end, limit),
        )
        return [Candidate(*r) for r in rows]

    async def in_project(
        self, owner: str, project: str, tiers: tuple[int, ...], limit: int
    ) -> list[Candidate]:
        """The most important live memories of one project partition."""
        rows = await self._db.read(
            f"SELECT {_CANDIDATE_COLUMNS}, 0.0 FROM memories WHERE owner = ? AND tier IN ({marks(tiers)}) "
            "AND project = ? AND is_archived = 0 ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, *tiers, project, limit),
        )
        return [Candidate(*r) for r in rows]

    async def by_ids(self, owner: str, ids: list[int]) -> list[Candidate]:
        """Candidate rows for memories found by their vectors (live rows of the owner only)."""
        rows = await self._db.read(
            # "+owner", "+is_archived": look the ids up by primary key, not through an owner index
            f"SELECT {_CANDIDATE_COLUMNS}, 0.0 FROM memories WHERE +owner = ? AND +is_archived = 0 "
            f"AND id IN ({marks(ids)})",
            (owner, *ids),
        )
        return [Candidate(*r) for r in rows]
