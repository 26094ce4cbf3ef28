"""Change versions: what another process (another gateway replica, ``tierclaw memory edit``) changed, so
the in-process caches built on the database stay true (docs/scale-out.md, "Caches that must stay true").

A write that changes something a process caches records it with ``bump(kind, key)``: ``memories`` (key:
the owner; their text, liveness or projects — known projects, vector matrices, term statistics),
``vectors`` (key: the owner; only their vectors — the backfill), ``session`` (key: the chat; ``/new``) and
``scratchpad`` (key: the owner; their note, which the system prompt shows).
The bumps of one transaction are written just before it commits (``before_commit``, called by the
database's ``transaction()``), in it: each key belongs to one of ``CHANGE_PARTS`` parts (``part_of``: a
hash of the owner or chat), and for each part it touches, one ``UPDATE`` of that part's ``change_clocks``
row gives the transaction its version in the part, and one ``INSERT`` adds a row per key to ``changes``.
A part's clock row stays locked until the commit, so a part's versions are given in commit order across
processes: a reader that has seen a part's clock at version v has seen every change of the part up to v,
and "changes of the part after v" can never miss a late commit. Only writes whose keys share a part wait
for each other's commits (one clock row for everything made every replica's memory writes queue there).
Taking the lock at the end of the transaction keeps it held for one statement and the commit only.

A cache asks ``refresh()`` before it trusts itself. At most once per ``interval_s`` that is one indexed
read — the clock and every other writer's change since the version last seen — and the listeners of each
changed kind drop just that key (that owner's matrix, that chat's session); between reads it costs a
clock comparison. Rows older than ``KEEP_CHANGES`` versions are pruned; a reader that has not looked
since before the pruned range cannot know what changed, so every listener drops everything (key None).
The process's own writes are not reported back to it: its caches follow them in place (an inserted
memory is appended to its owner's matrix, not reloaded).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import secrets
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from memory.store.schema_tables import CHANGE_PARTS
from memory.store.sql import SqlDatabase

# Longest time between two reads of the versions, in seconds: a cache is at most this stale after
# another process's commit (plus one read). Below one second so the target of ≤ 1 s holds with margin.
REFRESH_S = 0.5
# Versions of change rows kept; older ones are pruned every ``PRUNE_EVERY`` versions.
KEEP_CHANGES = 10_000
PRUNE_EVERY = 1_000

KINDS = ("memories", "vectors", "session", "scratchpad")
# The parts keys are hashed into: every part's clock row exists (schema version 20); a test may put
# every key in one part.
PARTS = CHANGE_PARTS

# Told (key, rows added minus removed) of a change; key None: anything of the kind may have changed.
Listener = Callable[[str | None, int], Awaitable[None] | None]


class ChangeFeed:
    """The change versions of one open store: ``bump`` in writes, ``refresh`` before a cache is used."""

    def __init__(
        self,
        db: SqlDatabase,
        *,
        interval_s: float = REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self.writer = f"tierclaw-{os.getpid()}-{secrets.token_hex(4)}"  # this open store's changes
        self.interval_s = interval_s
        self.clock = clock  # monotonic seconds (a test hands a clock it moves itself)
        self._seen: dict[int, int] = {}  # each part's clock version at the last read
        self._read_at: float | None = None
        self._listeners: dict[str, list[Listener]] = {kind: [] for kind in KINDS}
        self._pending: dict[tuple[str, str], int] = {}
        self.reads = 0  # reads of the versions (benchmarks and tests count them)
        db.commit_hook = self

    @property
    def seen(self) -> int:
        """The versions of the last read, summed over the parts (a transaction of one part adds one):
        every other writer's change up to them has been told."""
        return sum(self._seen.values())

    async def load(self) -> None:
        """Start from the database's version now (at open: the caches are empty, nothing to drop)."""
        rows = await self._db.read("SELECT part, version FROM change_clocks")
        self._seen = {int(part): int(version) for part, version in rows}
        self._read_at = self.clock()

    def listen(self, kind: str, listener: Listener) -> None:
        """Call ``listener(key, rows_delta)`` for each change of ``kind`` another writer made."""
        self._listeners[_checked(kind)].append(listener)

    # ----------------------------------------------------------------- writes

    async def bump(self, kind: str, keys: Iterable[str], rows_delta: int = 0) -> None:
        """Record that ``keys`` of ``kind`` changed, in the caller's transaction (or one of its own)."""
        _checked(kind)
        async with self.unit():
            for key in keys:
                self._pending[(kind, key)] = self._pending.get((kind, key), 0) + rows_delta

    @contextlib.asynccontextmanager
    async def unit(self) -> AsyncIterator[None]:
        """The caller's transaction when it holds one, else a new one: a write and its bump commit as one."""
        if self._db.in_transaction():
            yield
            return
        async with self._db.transaction():
            yield

    async def before_commit(self) -> None:
        """Write this transaction's bumps under one new version (the database calls it before COMMIT)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        by_part: dict[int, list[tuple[str, str, int]]] = {}
        for (kind, key), delta in pending.items():
            by_part.setdefault(part_of(key), []).append((kind, key, delta))
        rows: list[tuple[int, int, str, str, str, int]] = []
        for part in sorted(by_part):  # one order for every writer: two never wait for each other in a cycle
            # RETURNING the new value: ``insert`` hands back the first column of the one row.
            version = await self._db.insert(
                "UPDATE change_clocks SET version = version + 1 WHERE part = ? RETURNING version", (part,)
            )
            if version is None:
                raise RuntimeError(f"the change clock of part {part} is missing")
            rows += [(part, version, kind, key, self.writer, delta) for kind, key, delta in by_part[part]]
            if version % PRUNE_EVERY == 0 and version > KEEP_CHANGES:
                await self._db.write(
                    "DELETE FROM changes WHERE part = ? AND version <= ?", (part, version - KEEP_CHANGES)
                )
                await self._db.write(
                    "UPDATE change_clocks SET pruned_through = ? WHERE part = ?",
                    (version - KEEP_CHANGES, part),
                )
        await self._db.write_many(
            "INSERT INTO changes (part, version, kind, key, writer, rows_delta) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )

    def rolled_back(self) -> None:
        """The transaction did not commit: its bumps are void."""
        self._pending.clear()

    # ----------------------------------------------------------------- reads

    async def refresh(self, *, force: bool = False) -> None:
        """Tell the listeners what other writers changed since the last read; a read at most once per
        ``interval_s`` (``force``: now — the writer, before deciding on a duplicate)."""
        now = self.clock()
        if not force and self._read_at is not None and now - self._read_at < self.interval_s:
            return
        self._read_at = now
        self.reads += 1
        parts = sorted(self._seen)
        after = f"CASE k.part {' '.join('WHEN ? THEN ?' for _ in parts)} ELSE 0 END" if parts else "0"
        rows = await self._db.read(
            "SELECT k.part, k.version, k.pruned_through, c.kind, c.key, c.rows_delta FROM change_clocks k "
            f"LEFT JOIN changes c ON c.part = k.part AND c.version > {after} "
            "AND c.writer <> ?",
            [*(v for p in parts for v in (p, self._seen[p])), self.writer],
        )
        if not rows:
            return
        clocks = {int(r[0]): (int(r[1]), int(r[2])) for r in rows}
        if any(self._seen.get(p, 0) < pruned for p, (_, pruned) in clocks.items()):
            # what changed in between is gone: assume everything did
            for kind in KINDS:
                await self._tell(kind, None, 0)
        else:
            for _, _, _, kind, key, delta in rows:
                if kind is not None:
                    await self._tell(str(kind), str(key), int(delta))
        self._seen = {p: max(self._seen.get(p, 0), v) for p, (v, _) in clocks.items()}

    async def _tell(self, kind: str, key: str | None, rows_delta: int) -> None:
        for listener in self._listeners.get(kind, ()):
            result = listener(key, rows_delta)
            if inspect.isawaitable(result):
                await result


def part_of(key: str) -> int:
    """The part of the change clock a key's changes go to: the same for every process."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % PARTS


def _checked(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown change kind {kind!r} (one of {', '.join(KINDS)})")
    return kind
