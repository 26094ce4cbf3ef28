"""Tier 3: what happened, as dated events (``engine.events``) — an episode when the extraction saw one.

A plain object the engine holds (docs/architecture.md, "Tiers"): events are written by the extraction
and by imports, read by the ``/memory`` and CLI listings, the model's tools and the export, and folded
into Tier 2 by the daily compression (``memory/compression_rows.py`` has those reads). Every
call takes the owner; the SQL is in ``memory/store/events.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date, datetime

from memory.clock import day_text, to_db, utcnow
from memory.records import Episode, Event
from memory.store.protocol import MemoryStore
from memory.text import tokenizer
from memory.writes import check_owner

log = logging.getLogger("tierclaw.memory")


class EventLog:
    """Add, link and find the owner's Tier 3 events."""

    def __init__(self, store: MemoryStore) -> None:
        self._rows = store.events

    async def add(
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
        event_id = await self._rows.add(
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

    async def link_facts(self, owner: str, event_id: int, fact_ids: Sequence[int]) -> None:
        """Record the ids of the facts extracted with an episode."""
        await self._rows.link_facts(owner, event_id, fact_ids)

    async def find(
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
        return await self._rows.find(
            owner,
            since=since,
            until=until,
            terms=terms,
            include_compressed=include_compressed,
            source_ref=source_ref,
            limit=limit,
        )
