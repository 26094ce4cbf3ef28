"""``MemoryEngine``: the one object the gateway, the CLI and the benchmarks use to reach memory.

A façade: each method hands its work to the part that owns the idea — ``memory/writes.py`` (the clean
write path), ``memory/retrieval/retriever.py`` (ranking), ``memory/vectors/`` (the embedder and the
in-RAM vector matrices) and ``memory/store/`` (all SQL). Every method takes the ``owner`` and no call ever
returns or touches another owner's rows (docs/architecture.md, "Who owns what").
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memory.browse import MemoryBrowser
from memory.clock import days_between, to_db, utcnow
from memory.conversation import ConversationLog
from memory.engine_jobs import BackgroundJobMethods, day_text
from memory.records import Episode, Event, Fact, Memory, Retrieved, WriteResult
from memory.retrieval.decay import relevance_score
from memory.retrieval.ranking import NO_FLOOR, RelevanceFloor
from memory.retrieval.retriever import Retriever
from memory.scratchpad import ScratchpadStore
from memory.store import MemoryDatabaseError, SQLiteStore
from memory.store.protocol import MemoryStore
from memory.text import tokenizer
from memory.vectors.owner_cache import OwnerVectorCache
from memory.vectors.usage import EmbeddingUse, MemoryEmbedder
from memory.writes import MemoryWriter, check_owner

__all__ = ["MemoryDatabaseError", "MemoryEmbedder", "MemoryEngine"]

log = logging.getLogger("tierclaw.memory")


class _PartAttribute:
    """An engine attribute that lives on one of its parts: reading and setting it reach ``part.name``."""

    def __init__(self, part: str, name: str) -> None:
        self._part, self._name = part, name

    def __get__(self, engine: object, owner: type | None = None) -> Any:
        return self if engine is None else getattr(getattr(engine, self._part), self._name)

    def __set__(self, engine: object, value: Any) -> None:
        setattr(getattr(engine, self._part), self._name, value)


class MemoryEngine(BackgroundJobMethods):
    """Async access to the tiered memory store. Create with ``await MemoryEngine.open(path)``."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.path = store.path
        self._embedding = EmbeddingUse()
        self._vectors = OwnerVectorCache(store)
        self._retriever = Retriever(store, self._embedding, self._vectors)
        self._writer = MemoryWriter(store, self._embedding, self._vectors, self._retriever.forget_owner)
        self.conversation = ConversationLog(store, self._embedding)  # every turn, kept and searchable
        self.scratchpad = ScratchpadStore(store)  # one note per person: what is going on
        self.browse = MemoryBrowser(store, self.search)  # page-by-page reads (the memory web page)

    @classmethod
    async def open(cls, path: str | Path, *, create: bool = True, warm_text: bool = True) -> MemoryEngine:
        """Open (and create or upgrade) the database at ``path``; jieba's dictionary is loaded off the
        event loop beside it (``warm_text=False``: on first use instead — a CLI command that only reads
        rows does not pay ~0.7 s for it)."""
        engine = cls(await SQLiteStore.open(str(path), create=create, warm_text=warm_text))
        log.info("[memory] opened %s", engine.path)
        return engine

    async def close(self) -> None:
        """Close the database (the embedder belongs to whoever attached it)."""
        await self.store.close()

    async def __aenter__(self) -> MemoryEngine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ settings the gateway attaches

    # The embedder (``vectors.cache.CachedEmbedder``), or None for keyword search only.
    embedder = _PartAttribute("_embedding", "embedder")
    # How long a reply may wait for its query embedding before retrieval goes keyword-only (seconds).
    query_embed_timeout = _PartAttribute("_embedding", "query_timeout")
    # Called when rows were stored without a vector (the gateway wakes its backfill with it).
    on_vectors_missing = _PartAttribute("_writer", "on_vectors_missing")
    # RAM budget of the loaded owner vector matrices, all owners together (bytes).
    vector_cache_bytes = _PartAttribute("_vectors", "budget_bytes")

    def loaded_vector_owners(self) -> list[str]:
        """Owners whose vector matrix is in RAM, least recently searched first."""
        return self._vectors.owners()

    # ------------------------------------------------------------ writes

    async def write(
        self, owner: str, fact: Fact, now: datetime | None = None, *, embed: bool = True
    ) -> WriteResult:
        """Store one fact through the clean path (merge duplicates, supersede same subject+predicate)."""
        return (await self.write_many(owner, [fact], now=now, embed=embed))[0]

    async def write_many(
        self,
        owner: str,
        facts: Iterable[Fact],
        now: datetime | None = None,
        *,
        embed: bool = True,
        first: Callable[[], Awaitable[None]] | None = None,
        then: Callable[[list[WriteResult]], Awaitable[None]] | None = None,
    ) -> list[WriteResult]:
        """Store several facts in one transaction, each through the clean path (``MemoryWriter.write_many``:
        embedded first; ``embed=False`` stores at once and leaves the vector to the backfill; ``first``
        joins the transaction before the facts and ``then`` after them, and if either raises nothing is
        written)."""
        return await self._writer.write_many(owner, facts, now, embed=embed, first=first, then=then)

    async def edit(
        self,
        owner: str,
        memory_id: int,
        *,
        content: str | None = None,
        project: str | None = None,
        topic: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        tier: int | None = None,
    ) -> Memory:
        """Change fields of one live memory the owner has; raises KeyError when there is none."""
        current = await self.get(owner, memory_id)
        if current is None or current.is_archived:
            raise KeyError(f"no live memory {memory_id} for this owner")
        changes = {"content": content, "project": project, "topic": topic, "category": category}
        await self._writer.edit(owner, current, importance=importance, tier=tier, **changes)
        updated = await self.get(owner, memory_id)
        assert updated is not None
        return updated

    async def archive(self, owner: str, memory_id: int) -> bool:
        """Soft-delete one memory of the owner; False when the owner has no such live memory."""
        done = await self._writer.archive(owner, [memory_id]) > 0
        if done:
            log.info("[memory] archive owner=%s id=%d", owner, memory_id)
        return done

    async def archive_many(self, owner: str, memory_ids: Iterable[int], now: datetime | None = None) -> int:
        """Soft-delete several of the owner's memories in one transaction; returns how many were live."""
        check_owner(owner)
        done = await self._writer.archive(owner, memory_ids, now)
        log.info("[memory] archive owner=%s count=%d", owner, done)
        return done

    async def restore(self, owner: str, memory_id: int) -> bool:
        """Make an archived memory of the owner live again; False when the owner has no such archived row."""
        check_owner(owner)
        done = await self._writer.restore(owner, memory_id)
        if done:
            log.info("[memory] restore owner=%s id=%d", owner, memory_id)
        return done

    async def purge(self, owner: str, memory_id: int) -> bool:
        """Delete one memory of the owner for good (the explicit exception to soft delete)."""
        return await self._writer.purge(owner, memory_id)

    async def replace_memories(
        self, owner: str, old_ids: Iterable[int], facts: Iterable[Fact], now: datetime | None = None
    ) -> tuple[list[WriteResult], list[int]]:
        """Replace memories by new facts in one transaction (the compaction jobs; ``MemoryWriter.replace``
        says how); returns (one result per fact, archived ids)."""
        return await self._writer.replace(owner, old_ids, facts, now)

    # ------------------------------------------------------------ reads

    async def get(self, owner: str, memory_id: int) -> Memory | None:
        """One memory of the owner (live or archived), with all its source references."""
        return await self.store.memories.get(owner, memory_id)

    async def list(
        self,
        owner: str,
        *,
        tier: int | None = None,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Memory]:
        """The owner's memories, newest first, optionally filtered by tier and project."""
        return await self.store.memories.list(
            owner, tier=tier, project=project, include_archived=include_archived, limit=limit, offset=offset
        )

    async def refs(self, owner: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        """Every source reference each memory absorbed (its own plus those of merged duplicates)."""
        return await self.store.memories.refs(owner, memory_ids)

    async def profile(self, owner: str, limit: int = 100) -> list[Memory]:
        """Tier 1, the core profile that is always in the system prompt (most important first)."""
        return await self.store.memories.live(owner, tier=1, order="importance", limit=limit)

    async def profile_text(self, owner: str, limit: int = 100) -> str:
        """Tier 1 as a Markdown list for the system prompt; empty when the profile is empty."""
        return "\n".join(f"- {m.content}" for m in await self.profile(owner, limit))

    async def top_memories(self, owner: str, limit: int = 10, now: datetime | None = None) -> list[Memory]:
        """The owner's live Tier 2 memories that weigh most now (importance after category decay).

        Used by ``/memory``, which has no query to rank by: what the assistant would recall first.
        """
        now = now or utcnow()
        mems = await self.store.memories.live(owner, tier=2)
        mems.sort(
            key=lambda m: (
                -relevance_score(m.category, m.importance, days_between(m.last_accessed, now)),
                -m.id,
            )
        )
        return mems[:limit]

    async def known_projects(self, owner: str) -> frozenset[str]:
        """Project names the owner's live memories use (cached until the owner's next write)."""
        return await self._retriever.known_projects(owner)

    async def stats(self, owner: str | None = None) -> dict[str, int]:
        """Row counts per tier, archived, events and buffered turns (one owner, or all when None)."""
        counts = await self.store.memories.counts(owner)
        counts["tier3_events"] = await self.store.events.count(owner)
        counts["buffered_turns"] = await self.store.buffer.count(owner)
        counts["conversation_turns"] = await self.store.turns.count(owner)
        counts["owners"] = len(await self.store.events.owners(owner))
        return counts

    async def owners(self) -> list[str]:
        """Every owner that has memories or events (for export and the CLI)."""
        return await self.store.events.owners()

    async def owner_activity(self) -> dict[str, str]:
        """Every owner with memories, events or buffered messages -> the time of their latest activity
        (stored form, UTC; ``tierclaw memory owners``)."""
        return await self.store.events.last_activity()

    async def owner_of(self, memory_id: int) -> str | None:
        """The owner of memory ``memory_id``, or None when there is no such memory."""
        return await self.store.memories.owner_of(memory_id)

    # ------------------------------------------------------------ retrieval

    async def retrieve(
        self,
        owner: str,
        text: str,
        now: datetime | None = None,
        *,
        k: int = 5,
        min_match: float = 0.0,
        touch: bool = True,
        floor: RelevanceFloor = NO_FLOOR,
        related: bool = True,
    ) -> list[Retrieved]:
        """Tier 2 memories for a message: project partition + FTS5 (+ vectors), ranked, top ``k``, touched.

        With an embedder the query is embedded (bounded by ``query_embed_timeout``; on failure or timeout
        this query is keyword-only) and the cosine ranking is fused with the keyword ranking.
        ``min_match`` drops keyword-only hits whose idf-weighted share of the query's terms is below it.
        ``touch=False`` leaves access times alone (benchmarks: the order of queries must not matter).
        ``floor`` drops hits not relevant enough to inject into a reply (``RelevanceFloor``).
        ``related``: the query's words also find their everyday relations (``retrieval/relations.py``).
        """
        check_owner(owner)
        hits = await self._retriever.rank(
            owner, text, now or utcnow(), tiers=(2,), k=k, min_match=min_match, floor=floor, related=related
        )
        if hits and touch:
            await self.store.memories.touch([h.id for h in hits], to_db(now or utcnow()))
            log.info("[memory] retrieve owner=%s hits=%d", owner, len(hits))
        return hits

    async def search(
        self, owner: str, query: str, k: int = 10, *, tiers: tuple[int, ...] = (1, 2)
    ) -> list[Retrieved]:
        """Memories matching ``query`` for browsing (CLI, model tool): ranked like retrieve, not touched."""
        check_owner(owner)
        return await self._retriever.rank(owner, query, utcnow(), tiers=tiers, k=k, min_match=0.0)

    async def warm_up_embedder(self) -> bool:
        """Load the embedding model now (at start) so the first reply does not pay for it."""
        return await self._embedding.warm_up()

    # ------------------------------------------------------------ tier 3

    async def add_event(
        self,
        owner: str,
        summary: str,
        *,
        event_date: date | str | None = None,
        channel: str = "unknown",
        sender_id: str = "",
        raw_tokens: int = 0,
        source_ref: str | None = None,
        episode: Episode | None = None,
        span: tuple[datetime, datetime] | None = None,
    ) -> int:
        """Write one Tier 3 event — an episode when ``episode`` is given (``span``: when its turns started
        and ended); returns its id. Its goal and entities are searchable with its summary."""
        check_owner(owner)
        if not summary.strip():
            raise ValueError("an event summary must not be empty")
        day = day_text(event_date or utcnow().date())
        searchable = " ".join([summary, episode.goal, *episode.entities]) if episode else summary
        event_id = await self.store.events.add(
            owner,
            day,
            summary,
            search_text=tokenizer.index_text(searchable),
            channel=channel,
            sender_id=sender_id,
            raw_tokens=raw_tokens,
            source_ref=source_ref,
            episode=episode,
            span=(to_db(span[0]), to_db(span[1])) if span else None,
        )
        log.info("[memory] event owner=%s id=%d date=%s", owner, event_id, day)
        return event_id

    async def link_episode_facts(self, owner: str, event_id: int, fact_ids: Sequence[int]) -> None:
        """Record the ids of the facts extracted with an episode."""
        await self.store.events.link_facts(owner, event_id, fact_ids)

    async def events(
        self,
        owner: str,
        *,
        since: str | None = None,
        until: str | None = None,
        query: str | None = None,
        include_compressed: bool = True,
        source_ref: str | None = None,
        limit: int = 50,
    ) -> list[Event]:
        """Tier 3 events of the owner by date range (inclusive, YYYY-MM-DD), source_ref and/or keywords."""
        terms = tokenizer.query_terms(query) if query else None
        if query and not terms:
            return []
        return await self.store.events.find(
            owner,
            since=since,
            until=until,
            terms=terms,
            include_compressed=include_compressed,
            source_ref=source_ref,
            limit=limit,
        )
