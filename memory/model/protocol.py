"""What the memory model is asked to do, as a protocol: extract, compress, refresh the profile.

The extraction service and the compression jobs depend on this protocol only. Two implementations:
``memory/openai_model.py`` (any OpenAI-compatible endpoint, JSON-object output) and
``memory/offline_model.py`` (deterministic rules, no network, for trying tierclaw without a key).
An implementation raises ``MemoryModelError`` when the call failed or its output was unusable: the
caller keeps its input (buffered turns, uncompressed events) and tries again later.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from memory.records import Episode, Event, Fact, Memory


class MemoryModelError(RuntimeError):
    """The memory model call failed (network, HTTP error, timeout) or returned invalid output."""


@dataclass(slots=True)
class Turn:
    """One buffered message handed to extraction: who said it, what, and when (UTC, database format)."""

    role: str  # "user" or "assistant"
    content: str
    created_at: str


@dataclass(slots=True)
class Extraction:
    """What the model found in a batch of turns: Tier 2 facts and one Tier 3 episode (its summary may be
    empty: then nothing is stored for it)."""

    facts: list[Fact] = field(default_factory=list)
    summary: str = ""
    episode: Episode = field(default_factory=Episode)  # what the stretch was about, beside its summary


class MemoryModel(Protocol):
    """The memory model (docs/architecture.md, "Extraction and compression"): single structured
    completions, no tools, no streaming."""

    @property
    def label(self) -> str:
        """Human-readable name for logs and ``tierclaw status`` (e.g. ``openai:gpt-4o-mini``)."""
        ...

    async def extract(self, turns: list[Turn]) -> Extraction:
        """Lasting facts and a short summary from a conversation batch."""
        ...

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        """Daily job: a day's Tier 3 summaries distilled into Tier 2 facts."""
        ...

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        """Weekly job: one project/topic partition's entries, deduplicated and merged."""
        ...

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        """Weekly job: the new Tier 1 core profile from the current one and high-importance Tier 2."""
        ...

    async def update_scratchpad(self, current: str, turns: list[Turn]) -> str:
        """The person's whole new scratchpad note from the current one and what was just said
        (``memory/scratchpad.py``); the current one when nothing changed."""
        ...
