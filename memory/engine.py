"""``MemoryEngine``: the one object the gateway, the CLI and the benchmarks use to reach memory.

A façade: each method hands its work to the part that owns the idea — ``memory/writes.py`` (the clean
write path), ``memory/retrieval/retriever.py`` (ranking), ``memory/vectors/`` (the embedder and the
in-RAM vector matrices) and ``memory/store/`` (all SQL). Every method takes the ``owner`` and no call ever
returns or touches another owner's rows (docs/architecture.md, "Who owns what").
"""

from __future__ import annotations

import builtins
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path

from memory.attachments import AttachmentLog
from memory.browse import MemoryBrowser
from memory.clock import days_between, to_db, utcnow
from memory.compression_rows import CompressionRows
from memory.conversation import ConversationLog
from memory.counts import memory_counts
from memory.event_log import EventLog
from memory.records import Fact, Memory, Retrieved, WriteResult
from memory.retrieval.decay import relevance_score
from memory.retrieval.ranking import NO_FLOOR, RelevanceFloor
from memory.retrieval.retriever import Retriever
from memory.scratchpad import ScratchpadStore
from memory.search_refold import refold_search_text
from memory.store import MemoryDatabaseError
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from memory.text.names import names_any
from memory.text.tokenizer import is_mostly_chinese
from memory.touches import LaterTouches
from memory.vectors.index import StandOut
from memory.vectors.stored import StoredVectors
from memory.vectors.usage import EmbeddingUse, MemoryEmbedder
from memory.writes import MemoryWriter, check_owner

__all__ = ["MemoryDatabaseError", "MemoryEmbedder", "MemoryEngine"]

log = logging.getLogger("tierclaw.memory")

PROFILE_LIMIT = 100  # Tier 1 memories in the system prompt
PROFILE_MAX_AGE_S = 60.0  # the longest a cached profile is trusted without a change version saying so
PROFILES_KEPT = 10_000  # owners whose profile text is cached (the oldest go first)


class MemoryEngine:
    """Async access to the tiered memory store. Create with ``await MemoryEngine.open(path)``.

    Its parts are plain attributes: ``embedding`` (the embedder and its query timeout, shared by the
    writer, the retriever and the conversation log), ``vectors`` (stored vectors and the RAM matrices:
    the embedding jobs), ``writer`` (``writer.on_vectors_missing`` wakes the gateway's backfill),
    ``compression`` (what only the compression jobs read), ``events`` (Tier 3), ``conversation``,
    ``scratchpad``, ``browse``, ``attachments``.
    """

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.path = store.path
        self.embedding = EmbeddingUse()
        self.vectors = StoredVectors(store, self.embedding)
        self._retriever = Retriever(store, self.embedding, self.vectors.cache)
        # The system prompt's profile per owner (text, when read): dropped at this process's writes
        # (the writer), at another's (``store.changes``), and after ``PROFILE_MAX_AGE_S`` whatever happened.
        self._profiles: dict[str, tuple[str, float]] = {}
        store.changes.listen("memories", self._others_changed)
        self.writer = MemoryWriter(store, self.embedding, self.vectors.cache, self._forget_owner)
        self.compression = CompressionRows(store)
        self.events = EventLog(store)  # Tier 3: what happened (episodes)
        self.conversation = ConversationLog(store, self.embedding)  # every turn, kept and searchable
        self.scratchpad = ScratchpadStore(store)  # one note per person: what is going on
        self.browse = MemoryBrowser(store, self.search)  # page-by-page reads (the memory web page)
        self.attachments = AttachmentLog(store)  # voice notes, photos and files, and what they held
        self.touches = LaterTouches(store)  # recalled memories marked used off the reply path

    @classmethod
    async def open(cls, path: str | Path, *, create: bool = True, warm_text: bool = True) -> MemoryEngine:
        """Open (and create or upgrade) the database at ``path``; jieba's dictionary is loaded off the
        event loop beside it (``warm_text=False``: on first use instead — a CLI command that only reads
        rows does not pay ~0.7 s for it)."""
        engine = cls(await open_store(str(path), create=create, warm_text=warm_text))
        try:
            await refold_search_text(engine.store)  # a home indexed by an older tokenizer (Chinese)
        except BaseException:
            await engine.store.close()
            raise
        log.info("[memory] opened %s", engine.path)
        return engine

    async def close(self) -> None:
        """Close the database (the embedder belongs to whoever attached it); pending access marks first."""
        try:
            await self.touches.flush()
        finally:
            await self.store.close()

    async def __aenter__(self) -> MemoryEngine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def embedder(self) -> MemoryEmbedder | None:
        """The embedder the gateway attached (a ``memory/vectors/cache.CachedEmbedder``), None for keyword
        search only; kept in ``embedding`` because the writer, the retriever and the conversation log share
        it."""
        return self.embedding.embedder

    @embedder.setter
    def embedder(self, embedder: MemoryEmbedder | None) -> None:
        self.embedding.embedder = embedder

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
        return await self.writer.write_many(owner, facts, now, embed=embed, first=first, then=then)

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
        await self.writer.edit(owner, current, importance=importance, tier=tier, **changes)
        updated = await self.get(owner, memory_id)
        assert updated is not None
        return updated

    async def archive(self, owner: str, memory_id: int) -> bool:
        """Soft-delete one memory of the owner; False when the owner has no such live memory."""
        done = await self.writer.archive(owner, [memory_id]) > 0
        if done:
            log.info("[memory] archive owner=%s id=%d", owner, memory_id)
        return done

    async def archive_many(self, owner: str, memory_ids: Iterable[int], now: datetime | None = None) -> int:
        """Soft-delete several of the owner's memories in one transaction; returns how many were live."""
        check_owner(owner)
        done = await self.writer.archive(owner, memory_ids, now)
        log.info("[memory] archive owner=%s count=%d", owner, done)
        return done

    async def restore(self, owner: str, memory_id: int) -> bool:
        """Make an archived memory of the owner live again; False when the owner has no such archived row."""
        check_owner(owner)
        done = await self.writer.restore(owner, memory_id)
        if done:
            log.info("[memory] restore owner=%s id=%d", owner, memory_id)
        return done

    async def purge(self, owner: str, memory_id: int) -> bool:
        """Delete one memory of the owner for good (the explicit exception to soft delete)."""
        return await self.writer.purge(owner, memory_id)

    async def replace_memories(
        self, owner: str, old_ids: Iterable[int], facts: Iterable[Fact], now: datetime | None = None
    ) -> tuple[list[WriteResult], list[int]]:
        """Replace memories by new facts in one transaction (the compaction jobs; ``MemoryWriter.replace``
        says how); returns (one result per fact, archived ids)."""
        return await self.writer.replace(owner, old_ids, facts, now)

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
    ) -> builtins.list[Memory]:
        """The owner's memories, newest first, optionally filtered by tier and project."""
        return await self.store.memories.list(
            owner, tier=tier, project=project, include_archived=include_archived, limit=limit, offset=offset
        )

    async def refs(self, owner: str, memory_ids: Sequence[int]) -> dict[int, builtins.list[str]]:
        """Every source reference each memory absorbed (its own plus those of merged duplicates)."""
        return await self.store.memories.refs(owner, memory_ids)

    async def profile(self, owner: str, limit: int = 100) -> builtins.list[Memory]:
        """Tier 1, the core profile that is always in the system prompt (most important first)."""
        return await self.store.memories.live(owner, tier=1, order="importance", limit=limit)

    async def profile_text(self, owner: str, limit: int = PROFILE_LIMIT) -> str:
        """Tier 1 as a Markdown list for the system prompt; empty when the profile is empty. Cached per
        owner (issue 38, item 5: not read on every message) until the owner's memories change here or in
        another process (``store.changes``), or for ``PROFILE_MAX_AGE_S`` at most: a merge that only
        raises a memory's importance elsewhere bumps no version, and the order follows it that late."""
        if limit != PROFILE_LIMIT:
            return "\n".join(f"- {m.content}" for m in await self.profile(owner, limit))
        await self.store.changes.refresh()
        now = time.monotonic()
        cached = self._profiles.get(owner)
        if cached is not None and now - cached[1] < PROFILE_MAX_AGE_S:
            return cached[0]
        if len(self._profiles) >= PROFILES_KEPT:
            self._profiles.pop(next(iter(self._profiles)))
        text = "\n".join(f"- {m.content}" for m in await self.profile(owner, limit))
        self._profiles[owner] = (text, now)
        return text

    def _forget_owner(self, owner: str) -> None:
        """This process wrote the owner's memories: what is cached about them is read again."""
        self._retriever.forget_owner(owner)
        self._profiles.pop(owner, None)

    def _others_changed(self, owner: str | None, _rows_delta: int) -> None:
        if owner is None:
            self._profiles.clear()
        else:
            self._profiles.pop(owner, None)

    async def top_memories(
        self, owner: str, limit: int = 10, now: datetime | None = None
    ) -> builtins.list[Memory]:
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
        """The memory's counts (one owner, or all when None), the same in every view (memory/counts.py)."""
        return await memory_counts(self.store, owner)

    async def owners(self) -> builtins.list[str]:
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
        later: bool = False,
    ) -> builtins.list[Retrieved]:
        """Tier 2 memories for a message: project partition + FTS5 (+ vectors), ranked, top ``k``, touched.

        With an embedder the query is embedded (bounded by ``query_embed_timeout``; on failure or timeout
        this query is keyword-only) and the cosine ranking is fused with the keyword ranking.
        ``min_match`` drops keyword-only hits whose idf-weighted share of the query's terms is below it.
        ``touch=False`` leaves access times alone (benchmarks: the order of queries must not matter).
        ``floor`` drops hits not relevant enough to inject into a reply (``RelevanceFloor``).
        ``related``: the query's words also find their everyday relations (``retrieval/relations.py``).
        ``later``: the hits are marked used in the background (``memory/touches.py``; the reply path).
        """
        check_owner(owner)
        hits = await self._retriever.rank(
            owner, text, now or utcnow(), tiers=(2,), k=k, min_match=min_match, floor=floor, related=related
        )
        if hits and touch and later:
            self.touches.add([h.id for h in hits])
        elif hits and touch:
            await self.store.memories.touch([h.id for h in hits], to_db(now or utcnow()))
        if hits and touch:
            log.info("[memory] retrieve owner=%s hits=%d", owner, len(hits))
        return hits

    async def rescue(self, owner: str, text: str, floor: RelevanceFloor) -> builtins.list[Retrieved]:
        """The memory nearest to a message the gate refused, when it stands out as ``floor.rescues`` asks
        (else nothing); marked used in the background like the reply path's other hits."""
        check_owner(owner)
        stand = await self._retriever.stand_out(owner, text, embed=False)  # the gate's vector or none
        if stand is None or not floor.rescues(stand.lift, stand.gap, chinese=is_mostly_chinese(text)):
            return []
        hit = await self._retriever.hit_of(owner, stand)
        if hit is None:
            return []
        self.touches.add([hit.id])
        log.info("[memory] rescued one memory for owner=%s (lift %.3f)", owner, stand.lift)
        return [hit]

    async def recall_named(
        self,
        owner: str,
        text: str,
        names: tuple[str, ...],
        *,
        k: int,
        floor: RelevanceFloor,
        touch: bool = True,
    ) -> builtins.list[Retrieved]:
        """For a message the gate refused that names someone (``memory/text/names.py``): the hits the reply
        path would give a question about the person's own life when one of them names whom the message
        names (the name says the message is about the person's people; the others answer it: "翠萍生日"
        beside "我老伴儿叫孙翠萍" and "老伴儿生日是腊月初八"), else none; marked used in the background like
        the reply path's other hits (``touch=False``: not at all)."""
        check_owner(owner)
        hits = await self.retrieve(owner, text, k=k, floor=floor, related=True, touch=False)
        if not any(names_any(hit.content, names) for hit in hits):
            return []
        if touch:
            self.touches.add([hit.id for hit in hits])
            log.info("[memory] a refused message names someone its memories name, owner=%s", owner)
        return hits

    async def stand_out(self, owner: str, text: str) -> StandOut | None:
        """The owner's memory nearest to ``text`` and how far it stands out (``bench.floor_rescue``)."""
        check_owner(owner)
        return await self._retriever.stand_out(owner, text)

    async def search(
        self,
        owner: str,
        query: str,
        k: int = 10,
        *,
        tiers: tuple[int, ...] = (1, 2),
        floor: RelevanceFloor = NO_FLOOR,
    ) -> builtins.list[Retrieved]:
        """Memories matching ``query`` for browsing (CLI, model tool): ranked like retrieve, not touched;
        ``floor`` keeps only what the reply path would inject (``tierclaw memory search``'s weak split)."""
        check_owner(owner)
        return await self._retriever.rank(
            owner, query, utcnow(), tiers=tiers, k=k, min_match=0.0, floor=floor
        )

    async def warm_up_embedder(self) -> bool:
        """Load the embedding model now (at start) so the first reply does not pay for it."""
        return await self.embedding.warm_up()
