"""Browsing one person's memory page by page (``engine.browse``): filters, sorts, a memory's history.

The memory web page (``gateway/dashboard/``) is its user; it could serve any other browser of memory.
A search uses the same ranking as chat (``MemoryEngine.search``: keyword, or hybrid when an embedder is
attached). Sorting needs every matching row's category, importance and access times, not their text:
the store returns those keys (``memory/store/browse_queries.py``), they are sorted here, and only the page
shown is read in full — so a person with 10,000 memories costs one light query and one page of rows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import partial

from memory.clock import days_between, to_db, utcnow
from memory.records import Memory, Retrieved
from memory.retrieval.decay import relevance_score
from memory.store.browse_queries import ARCHIVED_CHOICES, BufferedTurnRow, MemoryKey
from memory.store.protocol import MemoryStore
from memory.writes import check_owner

SORTS = ("score", "date", "access")
PER_PAGE = 50
# Most hits a search on the page considers (then filtered and paged).
SEARCH_HITS = 200
# Supersede chains are short; this bounds a corrupt cycle.
MAX_CHAIN = 50

Search = Callable[..., Awaitable[list[Retrieved]]]


@dataclass(slots=True)
class BrowseFilter:
    """What the person asked the page for; ``check`` refuses values the page never offers."""

    query: str = ""
    tier: int | None = None
    category: str | None = None
    project: str | None = None
    archived: str = "live"
    sort: str = "score"
    page: int = 1

    def check(self) -> None:
        """Raise ValueError naming the first bad value."""
        if self.tier not in (None, 1, 2):
            raise ValueError("tier must be 1 or 2")
        if self.archived not in ARCHIVED_CHOICES:
            raise ValueError(f"archived must be one of {', '.join(ARCHIVED_CHOICES)}")
        if self.sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}")
        if self.page < 1:
            raise ValueError("page must be 1 or more")


@dataclass(slots=True)
class BrowsedMemory:
    """One row of a page: the memory and the score it was sorted by (search score or decay score)."""

    memory: Memory
    score: float


@dataclass(slots=True)
class BrowsePage:
    """One page of memories and where it sits in the whole result."""

    rows: list[BrowsedMemory]
    total: int
    page: int
    pages: int


@dataclass(slots=True)
class MemoryHistory:
    """A memory with what a person wants to know about it: its weight now and its supersede chain."""

    memory: Memory
    decay_score: float
    replaced: list[Memory] = field(default_factory=list)  # older rows it superseded or absorbed
    successors: list[Memory] = field(default_factory=list)  # the rows that replaced it, in order


@dataclass(slots=True)
class GrowthWeek:
    """New live memories in the week starting ``start`` (a Monday), by category."""

    start: date
    by_category: dict[str, int] = field(default_factory=dict)
    before: int = 0  # memories older than the chart (first week only)


def decay_score(memory: MemoryKey | Memory, now: datetime) -> float:
    """Importance after the category's decay since the last access (what recall weighs it by now)."""
    idle = memory.idle_days if isinstance(memory, MemoryKey) else days_between(memory.last_accessed, now)
    return relevance_score(memory.category, memory.importance, idle)


class MemoryBrowser:
    """Page-by-page reads of one owner's memories (``engine.browse``)."""

    def __init__(self, store: MemoryStore, search: Search) -> None:
        self._store = store
        self._search = search

    async def page(self, owner: str, wanted: BrowseFilter, *, per_page: int = PER_PAGE) -> BrowsePage:
        """The page of the owner's memories ``wanted`` asks for."""
        check_owner(owner)
        wanted.check()
        now = utcnow()
        keys_where = partial(
            self._store.browse.keys,
            owner,
            tier=wanted.tier,
            category=wanted.category,
            project=wanted.project,
            now=to_db(now),
        )
        scores: dict[int, float] = {}
        query = wanted.query.strip()
        if query and wanted.archived == "live":
            hits = await self._search(owner, query, SEARCH_HITS)
            scores = {h.id: h.score for h in hits}
            keys = await keys_where(ids=list(scores))
        elif query:  # archived rows are not in the search index's ranking: a plain text match
            keys = await keys_where(archived=wanted.archived, contains=query)
        else:
            keys = await keys_where(archived=wanted.archived)
        if wanted.sort == "score":
            if not scores:  # no search: the decay score of each
                scores = {k.id: decay_score(k, now) for k in keys}
            keys.sort(key=lambda k: (scores[k.id], k.id), reverse=True)
        elif wanted.sort == "access":
            keys.sort(key=lambda k: (k.access_count, k.last_accessed, k.id), reverse=True)
        else:
            keys.sort(key=lambda k: (k.created_at, k.id), reverse=True)
        pages = max(1, -(-len(keys) // per_page))
        page = min(wanted.page, pages)
        shown = keys[(page - 1) * per_page : page * per_page]
        mems = await self._store.browse.by_ids(owner, [k.id for k in shown])
        by_id = {k.id: k for k in shown}
        rows = [BrowsedMemory(m, scores.get(m.id, decay_score(by_id[m.id], now))) for m in mems]
        return BrowsePage(rows, len(keys), page, pages)

    async def history(self, owner: str, memory_id: int) -> MemoryHistory | None:
        """The owner's memory ``memory_id`` with its decay score and supersede chain; None when the owner
        has no such memory (another owner's id included)."""
        check_owner(owner)
        memory = await self._store.memories.get(owner, memory_id)
        if memory is None:
            return None
        successors: list[Memory] = []
        seen = {memory.id}
        current = memory
        while current.superseded_by is not None and len(successors) < MAX_CHAIN:
            nxt = await self._store.memories.get(owner, current.superseded_by)
            if nxt is None or nxt.id in seen:
                break
            successors.append(nxt)
            seen.add(nxt.id)
            current = nxt
        replaced = await self._store.browse.by_ids(
            owner, await self._store.browse.superseded_into(owner, memory_id)
        )
        return MemoryHistory(memory, decay_score(memory, utcnow()), replaced, successors)

    async def choices(self, owner: str) -> tuple[list[str], list[str]]:
        """The categories and projects the owner's memories use."""
        return await self._store.browse.categories_and_projects(owner)

    async def growth(self, owner: str, weeks: int = 12, today: date | None = None) -> list[GrowthWeek]:
        """Live memories created per week by category, the last ``weeks`` weeks (oldest first); earlier
        memories are counted in the first week's ``before`` total."""
        today = today or utcnow().date()
        first = today - timedelta(days=today.weekday() + 7 * (weeks - 1))
        out = [GrowthWeek(first + timedelta(weeks=i)) for i in range(weeks)]
        before = 0
        for day, category, count in await self._store.browse.created_per_day(owner):
            d = date.fromisoformat(day)
            if d < first:
                before += count
                continue
            week = out[min((d - first).days // 7, weeks - 1)]
            week.by_category[category] = week.by_category.get(category, 0) + count
        if out:
            out[0].before = before
        return out

    async def dead_letters(self, owner: str, limit: int = 50) -> list[BufferedTurnRow]:
        """Turns extraction gave up on, oldest first."""
        return await self._store.browse.buffered(owner, dead=True, limit=limit)

    async def buffered(self, owner: str, limit: int = 50) -> list[BufferedTurnRow]:
        """Turns waiting for extraction, oldest first."""
        return await self._store.browse.buffered(owner, dead=False, limit=limit)
