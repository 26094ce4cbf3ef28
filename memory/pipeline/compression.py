"""The compression jobs (docs/architecture.md, "Extraction and compression"): daily Tier 3 → Tier 2, weekly
merge, profile refresh, forgetting.

Pure memory/: the gateway's scheduler decides when to call them; they take the engine and a
``MemoryModel`` and return a ``CompressionReport``. Both are safe to re-run and to interrupt:

* **daily** compresses every uncompressed event dated on or before the given day — a day missed while
  the process was down is picked up by the next run, never skipped. One model call per owner and day
  (at most ``EVENTS_PER_CALL`` events each); the facts go through the engine's clean write path and only
  then are the events marked compressed. When the model fails for an owner, that owner's events stay
  uncompressed for the next run and the other owners go on.
* **weekly**, per owner: archives temp/debug memories that decayed to nothing, merges within each Tier 2
  partition of at least ``MERGE_MIN_ENTRIES`` live entries, and refreshes the Tier 1 profile. Without an
  embedder the whole partition is one model call. With one (``engine.vectors.of_owner``), the partition's
  entries are grouped by vector similarity instead (``clustering.similar_groups``: cosine above a cut
  relative to the partition's median cosine and at least ``MERGE_CLUSTER_COSINE``, joined transitively,
  O(n log n) rather than comparing every pair); each group of two or more entries (at
  most ``MERGE_GROUP_MAX``) is one model call, and the entries in no group, or not embedded yet, are left
  as they are. A merge writes the merged facts and archives the entries they replace in one transaction
  (``MemoryEngine.replace_memories``): a merged fact equal to an old entry keeps that entry, a model that
  returns nothing or invalid facts changes nothing, so no merge can lose a memory. A merged fact stays in
  its entries' partition; a group's merged rows also take the source references of its archived entries.
  The profile is replaced only when the model returned at least one entry.

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

import numpy as np

from memory.clock import days_between, utcnow
from memory.engine import MemoryEngine
from memory.model.protocol import MemoryModel
from memory.records import GLOBAL_PROJECT, PROFILE_TOPIC, Event, Fact, Memory, WriteResult
from memory.retrieval.decay import FAST_DECAY, decayed_to_nothing
from memory.vectors.clustering import median_cosine, similar_groups
from memory.vectors.index import OwnerVectors

log = logging.getLogger("tierclaw.memory")

COMPRESSION_SOURCE = "compression"
# A partition with fewer live entries than this is not worth a model call.
MERGE_MIN_ENTRIES = 10
# With vectors, entries this similar (joined transitively) are one group of merge candidates for the
# model. e5's cosine scale differs by language and topic (unrelated pairs of one owner: median 0.83 in
# LoCoMo English, 0.90 in MADial Chinese), so the cut is relative to the partition's own median cosine:
# 1 - cos <= MERGE_CLUSTER_DISTANCE_RATIO * (1 - median), but never below MERGE_CLUSTER_COSINE. Chosen on
# LoCoMo observations (multilingual-e5-small): hand labels (bench/README.md, "Dedup threshold") find 4/10
# pairs in [0.94, 0.96) and 2/10 in [0.92, 0.94) to be the same fact, and below 0.94 groups snowball (at a
# fixed 0.93 the largest per owner holds 121 of 324 entries). With the ratio, LoCoMo owners get cuts of
# 0.940-0.947 (31 % of entries grouped, median group 2, largest 10-47), MADial zh owners 0.966-0.967
# (17 % grouped, largest 4) where a fixed 0.94 put 57 of 81 entries into one group. Candidates only: the
# model decides what merges; automatic dedup on write stays at writes.SEMANTIC_DUP_COSINE. A partition
# made mostly of restatements of one thing raises its own median and so its cut: grouping assumes that
# most pairs of a partition are unrelated.
MERGE_CLUSTER_COSINE = 0.94
MERGE_CLUSTER_DISTANCE_RATIO = 0.35
# Entries per model call in the grouped merge; a bigger group is cut into nearly equal parts.
MERGE_GROUP_MAX = 50
# Tier 2 entries that feed the profile refresh: importance at least this, at most this many.
PROFILE_MIN_IMPORTANCE = 0.7
PROFILE_SOURCE_LIMIT = 200
# Tier 1 capacity (about 100 entries: docs/architecture.md, "Tiers"); extra entries from the model are
# dropped.
PROFILE_MAX_ENTRIES = 100
# Events of one day handed to the model in one call; a busier day is compressed in several calls.
EVENTS_PER_CALL = 50


@dataclass
class CompressionReport:
    """What one run did, summed over owners. ``failures`` names each owner and step that failed.

    ``partitions_merged`` counts partitions with at least one merge (the whole partition, or at least
    one of its similarity groups)."""

    owners: int = 0
    events_compressed: int = 0
    facts_written: int = 0
    partitions_merged: int = 0
    groups_merged: int = 0  # similarity groups replaced by the model's facts (only with vectors)
    unembedded: int = 0  # entries of merge-sized partitions left out of grouping: no vector yet
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
    for owner in await engine.compression.owners_with_uncompressed_events(day):
        report.owners += 1
        events_done = facts_done = 0
        failed: str | None = None
        events = await engine.compression.uncompressed_events(owner, day)
        for _, same_day in groupby(events, key=lambda e: e.event_date):
            batch_of_day = list(same_day)
            for start in range(0, len(batch_of_day), EVENTS_PER_CALL):
                batch = batch_of_day[start : start + EVENTS_PER_CALL]
                try:
                    facts_done += await _compress_batch(engine, model, owner, batch)
                except Exception as exc:  # the model or its output: keep the events for the next run
                    failed = _failure(owner, f"daily compression of {batch[0].event_date}", exc)
                    break
                events_done += await engine.compression.mark_events_compressed(owner, [e.id for e in batch])
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
        merged_before, groups_before = report.partitions_merged, report.groups_merged
        unembedded_before = report.unembedded
        report.archived += await _archive_decayed(engine, owner, now)
        await _merge_partitions(engine, model, owner, now, report)
        await _refresh_profile(engine, model, owner, now, report)
        failed = len(report.failures) - failures_before
        (log.warning if failed else log.info)(
            "[memory] weekly compression owner=%s partitions_merged=%d groups_merged=%d unembedded=%d "
            "archived=%d failures=%d",
            owner,
            report.partitions_merged - merged_before,
            report.groups_merged - groups_before,
            report.unembedded - unembedded_before,
            report.archived - archived_before,
            failed,
        )
    return report


async def _archive_decayed(engine: MemoryEngine, owner: str, now: datetime) -> int:
    """Archive live temp/debug Tier 2 memories whose weight decayed below 1 %."""
    candidates = await engine.compression.memories_by_category(owner, sorted(FAST_DECAY))
    dead = [
        m.id
        for m in candidates
        if decayed_to_nothing(m.category, m.importance, days_between(m.last_accessed, now))
    ]
    return await engine.archive_many(owner, dead, now=now) if dead else 0


async def _merge_partitions(
    engine: MemoryEngine, model: MemoryModel, owner: str, now: datetime, report: CompressionReport
) -> None:
    for project, topic, count in await engine.compression.partitions(owner):
        if count < MERGE_MIN_ENTRIES:
            continue
        entries = await engine.compression.partition_memories(owner, project, topic)
        if len(entries) < MERGE_MIN_ENTRIES:
            continue
        # Per partition: the engine keeps the matrix until the owner's memories change, i.e. a merge.
        vectors = await engine.vectors.of_owner(owner)
        if vectors is None:  # no embedder: the whole partition is one model call
            outcome = await _merge_entries(engine, model, owner, project, topic, entries, now, report)
            merged = outcome is not None
        else:
            merged = await _merge_similar(engine, model, owner, project, topic, entries, vectors, now, report)
        report.partitions_merged += int(merged)


async def _merge_similar(
    engine: MemoryEngine,
    model: MemoryModel,
    owner: str,
    project: str,
    topic: str,
    entries: list[Memory],
    vectors: OwnerVectors,
    now: datetime,
    report: CompressionReport,
) -> bool:
    """One model call per group of similar entries of the partition; True when any group was merged."""
    row_of = {int(memory_id): row for row, memory_id in enumerate(vectors.ids.tolist())}
    embedded = [m for m in entries if m.id in row_of]
    report.unembedded += len(entries) - len(embedded)
    matrix = vectors.matrix[[row_of[m.id] for m in embedded]]
    groups = similar_groups(
        [m.id for m in embedded], matrix, merge_cluster_cosine(matrix), max_group_size=MERGE_GROUP_MAX
    )
    current = {m.id: m for m in entries}
    merged_any = False
    for group in groups:
        members = [current[i] for i in group if i in current]
        if len(members) < 2:
            continue  # an earlier group's merged facts superseded the rest of this one
        outcome = await _merge_entries(
            engine, model, owner, project, topic, members, now, report, grouped=True
        )
        if outcome is None:
            continue
        archived, results = outcome
        merged_any = True
        report.groups_merged += 1
        await _carry_refs(engine, archived, results)
        if _touched_others(results, group):  # a merged fact merged into or superseded another row
            current = {m.id: m for m in await engine.compression.partition_memories(owner, project, topic)}
    return merged_any


def merge_cluster_cosine(matrix: np.ndarray) -> float:
    """The cosine at which two of these entries (unit rows) are merge candidates (see the constants)."""
    relative = 1.0 - MERGE_CLUSTER_DISTANCE_RATIO * (1.0 - median_cosine(matrix))
    return max(MERGE_CLUSTER_COSINE, min(relative, 1.0))


async def _merge_entries(
    engine: MemoryEngine,
    model: MemoryModel,
    owner: str,
    project: str,
    topic: str,
    entries: list[Memory],
    now: datetime,
    report: CompressionReport,
    *,
    grouped: bool = False,
) -> tuple[list[int], list[WriteResult]] | None:
    """One model call over ``entries`` and their replacement: (archived ids, write results), or None when
    it failed (recorded in ``report``; nothing changed)."""
    step = f"merge of {project}/{topic}" + (f" ({len(entries)} similar entries)" if grouped else "")
    try:
        merged = await model.merge_partition(entries)
        if not merged:
            raise _StepFailed(f"the model returned no entries for {len(entries)}; originals kept")
        facts = [_as_partition_fact(f, project, topic) for f in merged]
        results, archived = await engine.replace_memories(owner, [m.id for m in entries], facts, now=now)
    except Exception as exc:  # model failure or invalid output: replace_memories changed nothing
        report.failures.append(_failure(owner, step, exc))
        return None
    report.archived += len(archived)
    report.facts_written += sum(1 for r in results if r.action != "kept")
    return archived, results


async def _carry_refs(engine: MemoryEngine, archived: list[int], results: list[WriteResult]) -> None:
    """Give the group's merged rows the source references of the group's entries that were archived.

    ``replace_memories`` moves references only to a row of the same content; a model that restates a
    group as a new fact would otherwise drop where its information came from. Every fact written for a
    group comes from that group, so each of its rows gets all of them (refs only add, never replace).
    """
    targets = sorted({r.id for r in results} - set(archived))
    if not archived or not targets:
        return
    await engine.compression.carry_refs(targets, archived)


def _touched_others(results: list[WriteResult], group: list[int]) -> bool:
    """Whether writing the merged facts changed rows outside ``group`` (later groups must be re-read)."""
    mine = set(group)
    return any(r.action == "superseded" or (r.action == "merged" and r.id not in mine) for r in results)


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
    important = await engine.compression.important_memories(
        owner, PROFILE_MIN_IMPORTANCE, PROFILE_SOURCE_LIMIT
    )
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
