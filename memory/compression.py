"""The compression jobs (seed 000 §7, §8): daily Tier 3 → Tier 2, weekly merge, profile refresh, forgetting.

Pure memory/: the gateway's scheduler decides when to call them; they take the engine and a
``MemoryModel`` and return a ``CompressionReport``. Both are safe to re-run and to interrupt:

* **daily** compresses every uncompressed event dated on or before the given day — a day missed while
  the process was down is picked up by the next run, never skipped. One model call per owner and day
  (at most ``EVENTS_PER_CALL`` events each); the facts go through the engine's clean write path and only
  then are the events marked compressed. When the model fails for an owner, that owner's events stay
  uncompressed for the next run and the other owners go on.
* **weekly**, per owner: archives temp/debug memories that decayed to nothing, merges each Tier 2
  partition of at least ``MERGE_MIN_ENTRIES`` live entries, and refreshes the Tier 1 profile. A merge
  writes the merged facts and archives the entries they replace in one transaction
  (``MemoryEngine.replace_memories``): a merged fact equal to an old entry keeps that entry, a model that
  returns nothing or invalid facts changes nothing, so no merge can lose a memory. The profile is
  replaced only when the model returned at least one entry.

The decayed entries are archived first (the seed lists it last): they then neither count towards a
partition's merge threshold nor get revived as freshly written merged facts.

Every owner gets one ``[memory]`` log line per job; memory content is never logged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from itertools import groupby

from memory.clock import days_between, utcnow
from memory.decay import FAST_DECAY, decayed_to_nothing
from memory.engine import MemoryEngine
from memory.model import MemoryModel
from memory.models import GLOBAL_PROJECT, PROFILE_TOPIC, Event, Fact

log = logging.getLogger("tierclaw.memory")

COMPRESSION_SOURCE = "compression"
# A partition with fewer live entries than this is not worth a model call (seed 000 §7.3).
MERGE_MIN_ENTRIES = 10
# Tier 2 entries that feed the profile refresh: importance at least this, at most this many (seed §7.3).
PROFILE_MIN_IMPORTANCE = 0.7
PROFILE_SOURCE_LIMIT = 200
# Tier 1 capacity (seed 000 §4.2: about 100 entries); extra entries from the model are dropped.
PROFILE_MAX_ENTRIES = 100
# Events of one day handed to the model in one call; a busier day is compressed in several calls.
EVENTS_PER_CALL = 50


@dataclass
class CompressionReport:
    """What one run did, summed over owners. ``failures`` names each owner and step that failed."""

    owners: int = 0
    events_compressed: int = 0
    facts_written: int = 0
    partitions_merged: int = 0
    archived: int = 0
    profile_entries: int = 0
    failures: list[str] = field(default_factory=list)


class _StepFailed(Exception):
    """A model call or its output failed for one owner's step; the step changed nothing."""


def _failure(owner: str, step: str, exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{owner}: {step} failed ({type(exc).__name__}{': ' + detail if detail else ''})"


# ----------------------------------------------------------------------------------------------- daily


async def daily_compress(engine: MemoryEngine, model: MemoryModel, day: date) -> CompressionReport:
    """Fold every uncompressed Tier 3 event dated ``day`` or earlier into Tier 2 facts."""
    report = CompressionReport()
    for owner in await engine.owners_with_uncompressed_events(day):
        report.owners += 1
        events_done = facts_done = 0
        failed: str | None = None
        events = await engine.uncompressed_events(owner, day)
        for _, same_day in groupby(events, key=lambda e: e.event_date):
            batch_of_day = list(same_day)
            for start in range(0, len(batch_of_day), EVENTS_PER_CALL):
                batch = batch_of_day[start : start + EVENTS_PER_CALL]
                try:
                    facts_done += await _compress_batch(engine, model, owner, batch)
                except Exception as exc:  # the model or its output: keep the events for the next run
                    failed = _failure(owner, f"daily compression of {batch[0].event_date}", exc)
                    break
                events_done += await engine.mark_events_compressed(owner, [e.id for e in batch])
            if failed:
                break
        report.events_compressed += events_done
        report.facts_written += facts_done
        if failed:
            report.failures.append(failed)
            log.warning(
                "[memory] daily compression owner=%s events=%d facts=%d failed; the rest is kept for the "
                "next run",
                owner,
                events_done,
                facts_done,
            )
        else:
            log.info("[memory] daily compression owner=%s events=%d facts=%d", owner, events_done, facts_done)
    return report


async def _compress_batch(engine: MemoryEngine, model: MemoryModel, owner: str, batch: list[Event]) -> int:
    """One model call for a day's events; writes the facts (clean path) and returns how many."""
    facts = await model.compress_events(batch)
    if not facts:
        return 0
    ref = f"events:{batch[0].id}-{batch[-1].id}" if len(batch) > 1 else f"events:{batch[0].id}"
    when = datetime.combine(date.fromisoformat(batch[0].event_date), time(12), tzinfo=UTC)
    for fact in facts:
        fact.tier = 2
        fact.source = COMPRESSION_SOURCE
        fact.source_ref = ref
        fact.created_at = fact.created_at or min(when, utcnow())
    # write_many validates every fact before it commits: one invalid fact writes nothing, and the events
    # stay uncompressed (retried next run) rather than half-compressed.
    return len(await engine.write_many(owner, facts))


# ---------------------------------------------------------------------------------------------- weekly


async def weekly_compress(
    engine: MemoryEngine, model: MemoryModel, now: datetime | None = None
) -> CompressionReport:
    """Per owner: archive what decayed to nothing, merge big Tier 2 partitions, refresh the Tier 1 profile."""
    now = now or utcnow()
    report = CompressionReport()
    for owner in await engine.owners():
        report.owners += 1
        archived_before, failures_before = report.archived, len(report.failures)
        merged_before = report.partitions_merged
        report.archived += await _archive_decayed(engine, owner, now)
        await _merge_partitions(engine, model, owner, now, report)
        await _refresh_profile(engine, model, owner, now, report)
        failed = len(report.failures) - failures_before
        (log.warning if failed else log.info)(
            "[memory] weekly compression owner=%s partitions_merged=%d archived=%d failures=%d",
            owner,
            report.partitions_merged - merged_before,
            report.archived - archived_before,
            failed,
        )
    return report


async def _archive_decayed(engine: MemoryEngine, owner: str, now: datetime) -> int:
    """Archive live temp/debug Tier 2 memories whose weight decayed below 1 % (seed 000 §8.4)."""
    candidates = await engine.memories_by_category(owner, sorted(FAST_DECAY))
    dead = [
        m.id
        for m in candidates
        if decayed_to_nothing(m.category, m.importance, days_between(m.last_accessed, now))
    ]
    return await engine.archive_many(owner, dead, now=now) if dead else 0


async def _merge_partitions(
    engine: MemoryEngine, model: MemoryModel, owner: str, now: datetime, report: CompressionReport
) -> None:
    for project, topic, count in await engine.partitions(owner):
        if count < MERGE_MIN_ENTRIES:
            continue
        entries = await engine.partition_memories(owner, project, topic)
        if len(entries) < MERGE_MIN_ENTRIES:
            continue
        step = f"merge of {project}/{topic}"
        try:
            merged = await model.merge_partition(entries)
            if not merged:
                raise _StepFailed(f"the model returned no entries for {len(entries)}; originals kept")
            facts = [_as_partition_fact(f, project, topic) for f in merged]
            results, archived = await engine.replace_memories(owner, [m.id for m in entries], facts, now=now)
        except Exception as exc:  # model failure or invalid output: replace_memories changed nothing
            report.failures.append(_failure(owner, step, exc))
            continue
        report.partitions_merged += 1
        report.archived += len(archived)
        report.facts_written += sum(1 for r in results if r.action != "kept")


def _as_partition_fact(fact: Fact, project: str, topic: str) -> Fact:
    """A merged fact stays Tier 2 in the partition it came from."""
    fact.tier = 2
    fact.project = project
    fact.topic = topic
    fact.source = COMPRESSION_SOURCE
    return fact


async def _refresh_profile(
    engine: MemoryEngine, model: MemoryModel, owner: str, now: datetime, report: CompressionReport
) -> None:
    profile = await engine.profile(owner, limit=10_000)
    important = await engine.important_memories(owner, PROFILE_MIN_IMPORTANCE, PROFILE_SOURCE_LIMIT)
    if not profile and not important:
        return
    try:
        new = await model.refresh_profile(profile, important)
        if not new:
            return  # nothing proposed: the current profile stays as it is
        facts = _as_profile_facts(new[:PROFILE_MAX_ENTRIES])
        results, archived = await engine.replace_memories(owner, [m.id for m in profile], facts, now=now)
    except Exception as exc:  # model failure or invalid output: the profile is untouched
        report.failures.append(_failure(owner, "profile refresh", exc))
        return
    report.archived += len(archived)
    report.facts_written += sum(1 for r in results if r.action != "kept")
    report.profile_entries += len({r.id for r in results})


def _as_profile_facts(facts: Sequence[Fact]) -> list[Fact]:
    """Tier 1 facts. Without subject/predicate: the engine's supersede path spans tiers, and a profile
    line must never archive (or merge into) the Tier 2 memory it summarises."""
    for fact in facts:
        fact.tier = 1
        fact.project = GLOBAL_PROJECT
        fact.topic = PROFILE_TOPIC
        fact.source = COMPRESSION_SOURCE
        fact.subject = None
        fact.predicate = None
    return list(facts)
