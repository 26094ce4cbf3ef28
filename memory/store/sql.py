"""What the table modules need of a database connection, whichever backend: the shared statement helpers.

The table modules (``memories.py``, ``events.py``, …) are written against ``SqlDatabase`` in the SQL both
backends accept, with ``?`` placeholders; the SQLite connection (``sqlite.py``) runs them as they are, the
PostgreSQL one (``postgres/database.py``) translates the placeholders. A statement that differs between the
two (full text, ``INSERT OR IGNORE``, generated ids) lives in the backend's own module
(docs/architecture.md, "Storage").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

Row = Sequence[Any]  # a result row (tuple-like): the database's values, typed by the caller's columns
Params = Sequence[object]  # the values bound to a statement's ``?`` marks


class WriteResult(Protocol):
    """What a write reports: the rows it changed (and, on SQLite, the id it generated)."""

    @property
    def rowcount(self) -> int: ...


class CommitHook(Protocol):
    """Told around each commit of ``transaction()``: the change versions (``changes.py``) write the
    transaction's bumps just before it commits, and forget them when it rolls back."""

    async def before_commit(self) -> None: ...
    def rolled_back(self) -> None: ...


class SqlDatabase(Protocol):
    """One database as the table modules use it: reads, writes, and a unit of work."""

    path: str
    kind: str  # "sqlite" or "postgresql": for the few steps that differ (``copying.py``)
    commit_hook: CommitHook | None

    def in_transaction(self) -> bool: ...

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...
    async def returning(
        self, sql: str, params: Sequence[Any] = (), *, chat_lock: str | None = None
    ) -> list[Row]: ...
    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    async def write(self, sql: str, params: Sequence[Any] = ()) -> WriteResult: ...
    async def write_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> WriteResult: ...
    async def insert(self, sql: str, params: Sequence[Any] = ()) -> int | None: ...
    def transaction(self) -> AbstractAsyncContextManager[None]: ...


# Transaction-scoped advisory locks (PostgreSQL), two-int keys ``(space, hashtext(name))`` so they never meet
# the single-key locks (migrations, the poller's singleton): a chat's intake against its claims and
# release (``inbox.py``, ``chat_holds.py``), one owner's memory writes (``memories.py``), and the fold of
# the term counts (``postgres/search.py``: one process folds at a time, the others skip it).
CHAT_LOCKS = 0x7463_0001
OWNER_LOCKS = 0x7463_0002
TERM_FOLD_LOCK = 0x7463_0003


def store_clock(kind: str) -> str:
    """SQL for the store's one clock, ``?`` seconds from now, as a stored timestamp (with fractions).

    Leases, due times, claims and sweeps are written and compared with this and only this (docs/scale-out.md,
    "One clock"): on PostgreSQL the server's ``clock_timestamp()``, so gateways on hosts whose clocks
    disagree still agree on whose lease is live; on SQLite ``'now'`` of the one process that owns the file.
    Its text sorts with ``memory.clock.to_db`` and ``to_db_fine`` values."""
    if kind == "postgresql":
        return (
            "to_char((clock_timestamp() + make_interval(secs => CAST(? AS DOUBLE PRECISION))) "
            "AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"
        )
    return "strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%.6f seconds', ?))"


def marks(values: Sequence[object]) -> str:
    """``?, ?, …`` placeholders for an ``IN (...)`` list of ``values``."""
    return ",".join("?" * len(values))


def qualified(columns: str, alias: str) -> str:
    """A comma-separated column list with each name prefixed by a table alias, for a join
    (``qualified("id, owner", "t")`` -> ``"t.id, t.owner"``)."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


def chunks(ids: Sequence[Any], size: int = 500) -> list[Sequence[Any]]:
    """``ids`` in slices small enough for one ``IN (...)`` list."""
    return [ids[i : i + size] for i in range(0, len(ids), size)]
