"""The raw conversation as a searchable tier: every turn kept per owner, found again by what was said.

Facts extraction keeps is what the memory model judged worth it; this keeps the rest, so that
``conversation_search`` (a tool of the main model), ``tierclaw memory search --turns`` and the memory page
can find a sentence nobody extracted. Turns are indexed the Chinese-correct way memories are (jieba
segmentation + stemming, ``memory/text/tokenizer.py``). A hit comes with its neighbours in the same chat,
because a turn read alone ("yes, the blue one") often says nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.clock import to_db, utcnow
from memory.store.protocol import MemoryStore
from memory.store.turns import TurnRow
from memory.text import tokenizer
from memory.writes import check_owner

log = logging.getLogger("tierclaw.memory")

ROLES = ("user", "assistant")


@dataclass(slots=True)
class ConversationHit:
    """One matching turn, its score (higher is better) and the turns around it in its chat, in order."""

    turn: TurnRow
    score: float
    context: list[TurnRow] = field(default_factory=list)


class ConversationLog:
    """Keeps and searches the owner's turns (``engine.conversation``)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    async def record(
        self, owner: str, *, channel: str, chat_id: str, role: str, content: str, now: datetime | None = None
    ) -> int:
        """Keep one turn (the user's words or the assistant's reply); returns its id."""
        check_owner(owner)
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        return await self._store.turns.add(
            owner,
            channel=channel,
            chat_id=chat_id,
            role=role,
            content=content,
            search_text=tokenizer.index_text(content),
            at=to_db(now or utcnow()),
        )

    async def search(
        self,
        owner: str,
        query: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 5,
        context: int = 1,
    ) -> list[ConversationHit]:
        """The owner's turns that best match ``query`` (bm25), each with ``context`` turns either side."""
        check_owner(owner)
        terms = tokenizer.query_terms(query)
        if not terms:
            return []
        rows = await self._store.turns.matches(
            owner,
            terms,
            since=to_db(since) if since else None,
            until=to_db(until) if until else None,
            limit=limit,
        )
        hits = []
        for turn, bm25 in rows:
            around = await self._store.turns.neighbours(owner, turn, context, context) if context else [turn]
            hits.append(ConversationHit(turn, -bm25, around))
        log.info("[memory] conversation search owner=%s hits=%d", owner, len(hits))
        return hits

    async def count(self, owner: str | None = None) -> int:
        """Kept turns of one owner, or of everyone."""
        return await self._store.turns.count(owner)

    async def prune(self, keep_days: int, now: datetime | None = None) -> int:
        """Delete turns older than ``keep_days`` (``memory.turnRetentionDays``); returns how many."""
        cutoff = (now or utcnow()) - timedelta(days=keep_days)
        removed = await self._store.turns.prune(to_db(cutoff))
        if removed:
            log.info("[memory] pruned %d conversation turns older than %d days", removed, keep_days)
        return removed
