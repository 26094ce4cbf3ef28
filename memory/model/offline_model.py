"""``OfflineMemoryModel``: the memory model without a model — deterministic rules, no network, no key.

It lets tierclaw remember plain first-person facts before any API key is configured, and it is what the
tests of the extraction and compression pipelines run against. It never invents or rewrites text:

* ``extract``: the fact keeper (``memory/model/keeper.py``: the learned head with the shipped embedder,
  short keyword rules without it) over the user's turns only — the assistant's
  words are never taken as facts about the user; the summary is the user's first sentences, cut at
  ``SUMMARY_MAX_CHARS``;
* ``compress_events``: the same keeper over the day's summaries (which, written by this model, are the
  user's own sentences; a model-written third-person summary usually yields nothing, which is fine);
* ``merge_partition``: exact duplicates (``norm_key``) folded into one fact, everything else kept as is;
* ``refresh_profile``: the profile entries the user put there themselves (manual, import, migration)
  plus the important identity/config/credential memories of Tier 2, at most ``PROFILE_MAX_ENTRIES``.
  Entries a previous refresh derived (source ``compression``) are rebuilt from Tier 2 instead of being
  carried over, so that a superseded fact ("I live in Berlin") leaves the profile with its source.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from memory.clock import from_db
from memory.model.keeper import FactKeeper
from memory.model.protocol import Extraction, Turn
from memory.model.quick_extract import MIN_MEANINGFUL_CHARS, split_sentences
from memory.records import GLOBAL_PROJECT, PROFILE_TOPIC, Episode, Event, Fact, Memory
from memory.text.dedup import norm_key

OFFLINE_LABEL = "offline (no API key: a small local model keeps plain facts)"
SUMMARY_MAX_CHARS = 200
PROFILE_MAX_ENTRIES = 100
# Tier 2 categories that belong in the core profile (never-decaying facts: docs/architecture.md, "Tiers").
PROFILE_CATEGORIES = frozenset({"identity", "config", "credential"})
COMPRESSION_SOURCE = "compression"


class OfflineMemoryModel:
    """The no-key ``MemoryModel`` (``memory/model/protocol.py``): the shared ``FactKeeper`` (learned head or
    keyword fallback); deterministic, offline, never fails."""

    def __init__(
        self, known_projects: frozenset[str] = frozenset(), keeper: FactKeeper | None = None
    ) -> None:
        self.known_projects = known_projects
        self.keeper = keeper or FactKeeper()

    @property
    def label(self) -> str:
        return OFFLINE_LABEL

    async def extract(self, turns: list[Turn]) -> Extraction:
        """Quick facts from the user's turns and a digest of what the user said ("" without user turns)."""
        user_texts = [t.content for t in turns if t.role == "user" and t.content.strip()]
        facts = _distinct(
            [f for text in user_texts for f in await self.keeper.facts(text, self.known_projects)]
        )
        # No goal or outcome without a language model; the projects the facts name are its entities.
        projects = list(dict.fromkeys(f.project for f in facts if f.project != GLOBAL_PROJECT))
        return Extraction(facts=facts, summary=_digest(user_texts), episode=Episode(entities=projects))

    async def update_scratchpad(self, current: str, turns: list[Turn]) -> str:
        """Unchanged: judging what is going on needs a language model."""
        return current

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        """Quick facts found in the events' summaries (often none)."""
        found = _distinct(
            [f for e in events for f in await self.keeper.facts(e.summary, self.known_projects)]
        )
        for fact in found:
            fact.source = COMPRESSION_SOURCE
        return found

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        """Each distinct content once: duplicates folded (highest importance, earliest creation)."""
        merged: dict[str, Fact] = {}
        for mem in memories:
            created = _parse(mem.created_at)
            fact = merged.get(norm_key(mem.content))
            if fact is None:
                merged[norm_key(mem.content)] = Fact(
                    content=mem.content,
                    tier=mem.tier,
                    project=mem.project,
                    topic=mem.topic,
                    category=mem.category,
                    importance=mem.importance,
                    source=COMPRESSION_SOURCE,
                    subject=mem.subject,
                    predicate=mem.predicate,
                    created_at=created,
                )
                continue
            if mem.importance > fact.importance:
                fact.importance, fact.category = mem.importance, mem.category
            if created is not None and (fact.created_at is None or created < fact.created_at):
                fact.created_at = created
            if not (fact.subject and fact.predicate) and mem.subject and mem.predicate:
                fact.subject, fact.predicate = mem.subject, mem.predicate
        return list(merged.values())

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        """User-made profile entries, then important identity/config/credential memories, deduplicated."""
        keep = [m for m in profile if m.source != COMPRESSION_SOURCE]
        add = [m for m in important if m.category in PROFILE_CATEGORIES]
        out: list[Fact] = []
        seen: set[str] = set()
        for mem in [*keep, *add]:
            key = norm_key(mem.content)
            if key in seen:
                continue
            seen.add(key)
            out.append(
                Fact(
                    content=mem.content,
                    tier=1,
                    project=GLOBAL_PROJECT,
                    topic=PROFILE_TOPIC,
                    category=mem.category,
                    importance=mem.importance,
                    source=mem.source if mem.tier == 1 else COMPRESSION_SOURCE,
                )
            )
            if len(out) >= PROFILE_MAX_ENTRIES:
                break
        return out


def _distinct(facts: Iterable[Fact]) -> list[Fact]:
    out: list[Fact] = []
    seen: set[str] = set()
    for fact in facts:
        key = norm_key(fact.content)
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


def _digest(texts: list[str]) -> str:
    """The user's sentences in order, joined, cut at ``SUMMARY_MAX_CHARS`` (with an ellipsis)."""
    sentences = [
        s
        for text in texts
        for s in split_sentences(text)
        if sum(ch.isalnum() for ch in s) >= MIN_MEANINGFUL_CHARS
    ]
    digest = " ".join(sentences).strip()
    if len(digest) <= SUMMARY_MAX_CHARS:
        return digest
    return digest[: SUMMARY_MAX_CHARS - 1].rstrip() + "…"


def _parse(stamp: str) -> datetime | None:
    try:
        return from_db(stamp)
    except (ValueError, AttributeError):
        return None
