"""The store interface the rest of ``memory/`` uses: what a backend must offer, not how it does it.

``SQLiteStore`` (this package) implements it; a PostgreSQL store would be a second implementation of
the same protocols (docs/architecture.md, "Storage"). Callers never see SQL or a connection: they get
typed rows, pass already-segmented text and lists of terms, and give times as stored strings
(``memory/clock.to_db``) so both backends agree on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

from memory.records import Event, Fact, Memory

if TYPE_CHECKING:
    from memory.store.memories import NewRow
    from memory.store.search import Candidate


class MemoryRowsAPI(Protocol):
    """Tiers 1 and 2 and their source references (``memory/store/memories.py``)."""

    async def get(self, owner: str, memory_id: int) -> Memory | None: ...
    async def list(
        self,
        owner: str,
        *,
        tier: int | None = None,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Memory]: ...
    async def refs(self, owner: str, memory_ids: Sequence[int]) -> dict[int, list[str]]: ...
    async def live(
        self,
        owner: str,
        *,
        tier: int,
        project: str | None = None,
        topic: str | None = None,
        categories: Sequence[str] | None = None,
        min_importance: float | None = None,
        order: str = "id",
        limit: int | None = None,
    ) -> list[Memory]: ...
    async def projects(self, owner: str) -> frozenset[str]: ...
    async def partitions(self, owner: str, tier: int) -> list[tuple[str, str, int]]: ...
    async def counts(self, owner: str | None) -> dict[str, int]: ...
    async def same_subject(self, owner: str, subject: str, predicate: str) -> list[tuple[int, str]]: ...
    async def same_key(self, owner: str, norm_key: str, tier: int) -> int | None: ...
    async def live_embedded_content(
        self, owner: str, memory_id: int, tier: int, model_key: str
    ) -> str | None: ...
    async def live_keys(self, owner: str, ids: Sequence[int]) -> dict[int, tuple[str, int]]: ...
    async def archived_among(self, ids: Sequence[int]) -> list[int]: ...
    async def insert(self, owner: str, fact: Fact, row: NewRow) -> int: ...
    async def add_ref(self, memory_id: int, ref: str) -> None: ...
    async def copy_refs(self, target: int, from_ids: Sequence[int]) -> None: ...
    async def merge_into(self, memory_id: int, importance: float, now: str) -> None: ...
    async def raise_importance(self, memory_id: int, importance: float) -> None: ...
    async def supersede(self, old_ids: Iterable[int], new_id: int, now: str) -> None: ...
    async def archive_into(self, old_id: int, target: int | None, now: str) -> None: ...
    async def update(
        self, owner: str, memory_id: int, fact: Fact, *, norm_key: str, search_text: str, now: str
    ) -> None: ...
    async def archive(self, owner: str, ids: Sequence[int], now: str) -> int: ...
    async def purge(self, owner: str, memory_id: int) -> str | None: ...
    async def touch(self, ids: Sequence[int], now: str) -> None: ...


class SearchAPI(Protocol):
    """Full text over memories: term statistics and candidate queries (``memory/store/search.py``)."""

    indexed_rows: int

    async def document_frequencies(self, terms: tuple[str, ...]) -> dict[str, int]: ...
    async def matches(
        self,
        owner: str,
        terms: list[str],
        *,
        tiers: tuple[int, ...],
        limit: int,
        newest_first: bool = False,
        created_between: tuple[str, str] | None = None,
    ) -> list[Candidate]: ...
    async def containing_all(
        self, owner: str, terms: list[str], tier: int, limit: int = 5
    ) -> list[tuple]: ...
    async def written_between(
        self, owner: str, start: str, end: str, tiers: tuple[int, ...], limit: int
    ) -> list[Candidate]: ...
    async def in_project(
        self, owner: str, project: str, tiers: tuple[int, ...], limit: int
    ) -> list[Candidate]: ...
    async def by_ids(self, owner: str, ids: list[int]) -> list[Candidate]: ...


class EventRowsAPI(Protocol):
    """Tier 3 daily events (``memory/store/events.py``)."""

    async def add(
        self,
        owner: str,
        day: str,
        summary: str,
        *,
        search_text: str,
        channel: str,
        sender_id: str,
        raw_tokens: int,
        source_ref: str | None,
    ) -> int: ...
    async def mark_compressed(self, owner: str, event_ids: Sequence[int]) -> int: ...
    async def find(
        self,
        owner: str,
        *,
        since: str | None,
        until: str | None,
        terms: tuple[str, ...] | None,
        include_compressed: bool,
        source_ref: str | None,
        limit: int,
    ) -> list[Event]: ...
    async def owners_with_uncompressed(self, until_day: str) -> list[str]: ...
    async def uncompressed(self, owner: str, until_day: str) -> list[Event]: ...
    async def count(self, owner: str | None) -> int: ...
    async def owners(self, owner: str | None = None) -> list[str]: ...


class VectorRowsAPI(Protocol):
    """Memory vectors and the content-hash cache (``memory/store/vectors.py``)."""

    async def missing(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]: ...
    async def count_missing(self, model_key: str, owner: str | None = None) -> int: ...
    async def set(self, model_key: str, items: Sequence[tuple[int, str, bytes]]) -> tuple[int, list[str]]: ...
    async def of_owner(self, owner: str, model_key: str) -> list[tuple[int, int, bytes]]: ...
    async def cached(self, model: str, keys: Sequence[str]) -> list[tuple]: ...
    async def cache(
        self, model: str, fresh: Sequence[tuple[str, int, bytes]], touched: Sequence[str], stamp: str
    ) -> None: ...
    async def uncache(self, text_hash: str) -> None: ...
    async def evict_cached(self, unused_since: str) -> int: ...
    async def cache_counts(self) -> dict[str, int]: ...


class BufferRowsAPI(Protocol):
    """The extraction buffer, a work queue (``memory/store/queues.py``)."""

    async def append(
        self,
        owner: str,
        channel: str,
        chat_id: str,
        sender_id: str,
        role: str,
        content: str,
        token_count: int,
        created_at: str,
    ) -> int: ...
    async def oldest(self, owner: str, due_at: str | None) -> list[Sequence]: ...
    async def backlog(self, owner: str | None) -> list[tuple[str, str, str | None, int, int]]: ...
    async def pending_tokens(self, owner: str) -> int: ...
    async def remove(self, ids: Sequence[int]) -> int: ...
    async def attempts(self, ids: Sequence[int]) -> int: ...
    async def mark_failed(
        self, ids: Sequence[int], attempts: int, next_at: str, dead: bool, error: str
    ) -> None: ...
    async def count(self, owner: str | None = None, *, dead: bool | None = None) -> int: ...
    async def requeue_dead(self, owner: str | None) -> int: ...


class SessionRowsAPI(Protocol):
    """Tier 0 chat sessions (``memory/store/state.py``)."""

    async def current(self, chat_key: str) -> int | None: ...
    async def recent(self, chat_key: str, session: int, limit: int) -> list[tuple[str, str]]: ...
    async def append(self, chat_key: str, session: int, role: str, content: str, created_at: str) -> None: ...
    async def start(self, chat_key: str, session: int, started_at: str) -> None: ...
    async def keep_newest(self, chat_key: str, session: int, keep: int) -> None: ...


class JobRowsAPI(Protocol):
    """When each scheduled job last ran (``memory/store/state.py``)."""

    async def last_run(self, job: str) -> str | None: ...
    async def record(self, job: str, when: str, status: str) -> None: ...
    async def all(self) -> list[tuple[str, str, str]]: ...


class MemoryStore(Protocol):
    """One memory database: its parts, one unit-of-work helper, and change detection across processes."""

    path: str
    memories: MemoryRowsAPI
    search: SearchAPI
    events: EventRowsAPI
    vectors: VectorRowsAPI
    buffer: BufferRowsAPI
    sessions: SessionRowsAPI
    jobs: JobRowsAPI

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """Writes of any part made inside it by the same task commit together or not at all."""
        ...

    async def others_committed_since(self, version: int) -> tuple[bool, int]:
        """Whether another process committed since ``version``, and the version now."""
        ...

    async def close(self) -> None: ...
