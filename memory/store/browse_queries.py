"""The SQL behind browsing a person's memory (the memory web page): light keys to sort and page many rows,
whole rows by id, the supersede chain, growth by category, dead letters.

Every statement filters on the owner (docs/architecture.md, "Who owns what"). Sorting by decay score
needs the category and the last access of every matching row, so the page asks for those few columns
of all rows first and for whole rows only of the page it shows (``memory/browse.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from memory import clock
from memory.records import Memory
from memory.store.memories import MEMORY_COLUMNS, memory_from_row
from memory.store.sql import SqlDatabase, chunks, marks
from memory.store.turn_watermark import pending

ARCHIVED_CHOICES = ("live", "archived", "all")


class MemoryKey(NamedTuple):
    """What sorting a page needs of one memory, without its text (a tuple: a page sorts thousands)."""

    id: int
    category: str
    importance: float
    created_at: str
    last_accessed: str
    access_count: int
    idle_days: float  # days from the last access to the ``now`` the keys were read for


@dataclass(slots=True, frozen=True)
class BufferedTurnRow:
    """One turn in the extraction buffer as the memory page lists it: still waiting, or given up on (a
    dead letter), with its last error (``memory/pipeline/buffer.BufferedTurn`` is what extraction reads)."""

    id: int
    role: str
    content: str
    created_at: str
    attempts: int
    last_error: str


def _escape_like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (``\\`` escapes ``%``, ``_`` and itself)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class _IdleDays:
    """Days from stored times to one ``now``, computed here rather than in SQL (the backends' date
    functions differ); a page reads thousands of rows that share few distinct access times."""

    def __init__(self, now: str) -> None:
        self._now = clock.from_db(now)
        self._seen: dict[str, float] = {}

    def since(self, stored: str) -> float:
        days = self._seen.get(stored)
        if days is None:
            days = self._seen[stored] = clock.days_between(stored, self._now)
        return days


class BrowseRows:
    """Reads for browsing one owner's memory."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def keys(
        self,
        owner: str,
        *,
        tier: int | None = None,
        category: str | None = None,
        project: str | None = None,
        archived: str = "live",
        ids: Sequence[int] | None = None,
        contains: str | None = None,
        now: str,
    ) -> list[MemoryKey]:
        """The owner's memories matching the filters (``archived``: live, archived or all; ``ids``: only
        these; ``contains``: text the content holds, any case), as sort keys, newest first; ``now`` (stored
        form) is what ``idle_days`` counts to."""
        if archived not in ARCHIVED_CHOICES:
            raise ValueError(f"archived must be one of {', '.join(ARCHIVED_CHOICES)}")
        where = ["owner = ?"]
        params: list[object] = [owner]
        for column, value in (("tier", tier), ("category", category), ("project", project)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if archived != "all":
            where.append("is_archived = ?")
            params.append(int(archived == "archived"))
        if contains:
            where.append("lower(content) LIKE ? ESCAPE '\\'")
            params.append("%" + _escape_like(contains.lower()) + "%")
        sql = (
            "SELECT id, category, importance, created_at, last_accessed, access_count "
            f"FROM memories WHERE {' AND '.join(where)}"
        )
        if ids is None:
            rows = await self._db.read(sql + " ORDER BY id DESC", params)
        else:
            rows = []
            for chunk in chunks(list(ids)):
                rows += await self._db.read(sql + f" AND id IN ({marks(chunk)})", (*params, *chunk))
            rows.sort(key=lambda r: -r[0])
        idle = _IdleDays(now)
        return [MemoryKey._make([*r, idle.since(r[4])]) for r in rows]

    async def by_ids(self, owner: str, ids: Sequence[int]) -> list[Memory]:
        """The owner's memories among ``ids``, in the order of ``ids`` (another owner's ids give nothing)."""
        found: dict[int, Memory] = {}
        for chunk in chunks(list(ids)):
            rows = await self._db.read(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner = ? AND id IN ({marks(chunk)})",
                (owner, *chunk),
            )
            for row in rows:
                found[int(row[0])] = memory_from_row(row)
        return [found[i] for i in ids if i in found]

    async def superseded_into(self, owner: str, memory_id: int) -> list[int]:
        """Ids of the owner's memories that ``memory_id`` superseded or absorbed (they point to it)."""
        rows = await self._db.read(
            "SELECT id FROM memories WHERE owner = ? AND superseded_by = ? ORDER BY id", (owner, memory_id)
        )
        return [int(r[0]) for r in rows]

    async def categories_and_projects(self, owner: str) -> tuple[list[str], list[str]]:
        """The categories and projects the owner's memories use (for the filter menus)."""
        cats = await self._db.read(
            "SELECT DISTINCT category FROM memories WHERE owner = ? ORDER BY category", (owner,)
        )
        projects = await self._db.read(
            "SELECT DISTINCT project FROM memories WHERE owner = ? ORDER BY project", (owner,)
        )
        return [str(r[0]) for r in cats], [str(r[0]) for r in projects]

    async def created_per_day(self, owner: str) -> list[tuple[str, str, int]]:
        """(day YYYY-MM-DD, category, memories created that day) of the owner's live memories."""
        rows = await self._db.read(
            "SELECT substr(created_at, 1, 10) AS day, category, COUNT(*) FROM memories "
            "WHERE owner = ? AND is_archived = 0 GROUP BY day, category ORDER BY day",
            (owner,),
        )
        return [(str(d), str(c), int(n)) for d, c, n in rows]

    async def buffered(self, owner: str, *, dead: bool, limit: int = 50) -> list[BufferedTurnRow]:
        """The owner's buffered turns, oldest first: the dead letters, or those still waiting."""
        rows = await self._db.read(
            "SELECT id, role, content, created_at, attempts, COALESCE(last_error, '') "
            f"FROM {pending(True)} WHERE dead = ? ORDER BY id LIMIT ?",
            (owner, owner, int(dead), limit),
        )
        return [BufferedTurnRow(int(r[0]), r[1], r[2], r[3], int(r[4]), r[5]) for r in rows]
