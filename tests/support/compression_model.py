"""What the compression tests share: a scripted ``MemoryModel`` (canned answers, failures, a call log) and
reads of an owner's live memories, and a partition filled to merge size."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

from memory.engine import MemoryEngine
from memory.model.protocol import Extraction, MemoryModelError, Turn
from memory.records import Event, Fact, Memory

ALICE, BOB = "alice", "bob"
DAY = date(2026, 3, 10)
NOW = datetime(2026, 3, 16, 4, 0, tzinfo=UTC)


class ScriptedModel:
    """A test double of our MemoryModel protocol: canned answers, optional failures, a call log."""

    def __init__(
        self,
        *,
        compress: Callable[[list[Event]], list[Fact]] | None = None,
        merge: Callable[[list[Memory]], list[Fact]] | None = None,
        profile: Callable[[list[Memory], list[Memory]], list[Fact]] | None = None,
        fail_owners: frozenset[str] = frozenset(),
    ) -> None:
        self._compress = compress or (lambda events: [])
        self._merge = merge or (lambda mems: [])
        self._profile = profile or (lambda prof, imp: [])
        self.fail_owners = fail_owners
        self.calls: list[tuple[str, object]] = []

    @property
    def label(self) -> str:
        return "scripted"

    def _maybe_fail(self, owners: set[str]) -> None:
        if owners & self.fail_owners:
            raise MemoryModelError("scripted failure")

    async def extract(self, turns: list[Turn]) -> Extraction:
        return Extraction()

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        self.calls.append(("compress", [e.id for e in events]))
        self._maybe_fail({e.owner for e in events})
        return self._compress(events)

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        self.calls.append(("merge", (memories[0].project, memories[0].topic, len(memories))))
        self._maybe_fail({m.owner for m in memories})
        return self._merge(memories)

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        self.calls.append(("profile", (len(profile), len(important))))
        self._maybe_fail({m.owner for m in [*profile, *important]})
        return self._profile(profile, important)


def _same(mems: list[Memory]) -> list[Fact]:
    """A merge that returns every entry unchanged."""
    return [Fact(m.content, category=m.category, importance=m.importance) for m in mems]


async def _live(engine: MemoryEngine, owner: str = ALICE, tier: int | None = 2) -> list[Memory]:
    return await engine.list(owner, tier=tier, limit=10_000)


async def _live_contents(engine: MemoryEngine, owner: str = ALICE, tier: int | None = 2) -> list[str]:
    return sorted(m.content for m in await _live(engine, owner, tier))


async def _fill_partition(
    engine: MemoryEngine, n: int, project: str = "tierclaw", topic: str = "db"
) -> list[int]:
    facts = [
        Fact(
            f"Decision {i}: table {topic}{i} gets column c{i}",
            project=project,
            topic=topic,
            category="decision",
        )
        for i in range(n)
    ]
    return [r.id for r in await engine.write_many(ALICE, facts)]
