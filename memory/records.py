"""Plain data types that cross the engine's boundary: what goes in, what comes out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memory.retrieval.decay import DEFAULT_CATEGORY

GLOBAL_PROJECT = "_global"
GENERAL_TOPIC = "_general"
PROFILE_TOPIC = "_profile"


@dataclass(slots=True)
class Fact:
    """A memory to write. Everything but ``content`` has the original design's defaults."""

    content: str
    tier: int = 2
    project: str = GLOBAL_PROJECT
    topic: str = GENERAL_TOPIC
    category: str = DEFAULT_CATEGORY
    importance: float = 0.5
    source: str = "extraction"
    source_ref: str | None = None
    subject: str | None = None
    predicate: str | None = None
    created_at: datetime | None = None


@dataclass(slots=True)
class Memory:
    """A stored memory row (tiers 1 and 2)."""

    id: int
    owner: str
    tier: int
    project: str
    topic: str
    category: str
    content: str
    importance: float
    source: str
    source_ref: str | None
    subject: str | None
    predicate: str | None
    created_at: str
    updated_at: str
    last_accessed: str
    access_count: int
    is_archived: bool
    superseded_by: int | None
    refs: list[str] = field(default_factory=list)


@dataclass(slots=True)
class WriteResult:
    """What a clean write did: ``inserted``, ``merged`` into an existing row, or ``superseded`` one."""

    id: int
    action: str
    replaced_id: int | None = None


@dataclass(slots=True)
class Retrieved:
    """One retrieval hit. ``score`` ranks; ``match`` is the idf-weighted share of query terms it contains;
    ``cosine`` is its vector similarity to the query (0.0 without one, or below the vector candidates)."""

    id: int
    content: str
    tier: int
    project: str
    topic: str
    category: str
    importance: float
    created_at: str
    score: float
    match: float
    cosine: float = 0.0

    @classmethod
    def from_memory(cls, mem: Memory, score: float) -> Retrieved:
        """A stored memory handed to the prompt without a query (an overview ranks by decay score)."""
        return cls(
            id=mem.id,
            content=mem.content,
            tier=mem.tier,
            project=mem.project,
            topic=mem.topic,
            category=mem.category,
            importance=mem.importance,
            created_at=mem.created_at,
            score=score,
            match=0.0,
        )


OUTCOMES = ("done", "partial", "failed", "ongoing")


@dataclass(slots=True)
class Episode:
    """What the memory model says a stretch of conversation was about, beside its summary."""

    goal: str = ""
    outcome: str = ""  # one of OUTCOMES, or "" when not said
    entities: list[str] = field(default_factory=list)  # projects, people, places, tools


@dataclass(slots=True)
class Event:
    """A Tier 3 daily event: one episode — a summary of a stretch of conversation and what it was about."""

    id: int
    owner: str
    event_date: str
    channel: str
    sender_id: str
    summary: str
    raw_tokens: int
    is_compressed: bool
    created_at: str
    source_ref: str | None = None
    # An episode's fields (empty for a summary that says no more, e.g. a migrated daily file):
    goal: str = ""
    outcome: str = ""  # done / partial / failed / ongoing, or "" when not said
    entities: list[str] = field(default_factory=list)
    started_at: str | None = None
    ended_at: str | None = None
    fact_ids: list[int] = field(default_factory=list)
