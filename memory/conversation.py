"""The raw conversation as a searchable tier: every turn kept per owner, found again by what was said.

Facts extraction keeps is what the memory model judged worth it; this keeps the rest, so that
``conversation_search`` (a tool of the main model), ``tierclaw memory search --turns`` and the memory page
can find a sentence nobody extracted. Turns are indexed the Chinese-correct way memories are (jieba
segmentation + stemming, ``memory/text/tokenizer.py``). A hit comes with its neighbours in the same chat,
because a turn read alone ("yes, the blue one") often says nothing.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.clock import to_db, utcnow
from memory.store.protocol import MemoryStore
from memory.store.turns import TurnRow
from memory.text import tokenizer
from memory.writes import check_owner

log = logging.getLogger("tierclaw.memory")

ROLES = ("user", "assistant")
# bm25 picks candidates; they are re-ranked by how many of the query's words they hold (a turn that holds
# all of them first), bm25 breaking ties. LoCoMo turns: bench/README.md, "Conversation search".
CANDIDATES_PER_HIT = 6
MIN_CANDIDATES = 30
LAST_WORDS_KEPT = 10_000  # chats whose last turn's words are kept in memory


def rerank(
    rows: list[tuple[TurnRow, float, str]], weights: dict[str, float]
) -> list[tuple[TurnRow, float, str]]:
    """``rows`` (turn, bm25, indexed text) ordered by the idf-weighted share of the query's terms the turn
    holds itself plus the share it holds with the turn before it (``weights``: term -> idf), then bm25."""
    total = sum(weights.values()) or 1.0

    def coverage(words: set[str]) -> float:
        return sum(w for term, w in weights.items() if term in words) / total

    def score(row: tuple[TurnRow, float, str]) -> tuple[float, float]:
        own = set(tokenizer.index_text(row[0].content).split())
        return (-round(coverage(own) + coverage(set(row[2].split())), 3), row[1])

    return sorted(rows, key=score)


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
        # Each chat's last turn, as indexed words, so the next turn need not read and segment it again.
        self._last_words: dict[tuple[str, str, str], str] = {}

    async def record(
        self, owner: str, *, channel: str, chat_id: str, role: str, content: str, now: datetime | None = None
    ) -> int:
        """Keep one turn (the user's words or the assistant's reply); returns its id."""
        check_owner(owner)
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        # The turn is also found by the words of the turn it answers ("When did you go?" → "Yesterday."):
        # its index holds the previous turn's words too, after its own.
        chat = (owner, channel, chat_id)
        previous = self._last_words.get(chat)
        if previous is None:
            last = await self._store.turns.last_in_chat(owner, channel, chat_id)
            previous = tokenizer.index_text(last.content) if last is not None else ""
        own = tokenizer.index_text(content)
        if len(self._last_words) >= LAST_WORDS_KEPT:
            self._last_words.pop(next(iter(self._last_words)))  # the chat that spoke longest ago
        self._last_words.pop(chat, None)
        self._last_words[chat] = own
        return await self._store.turns.add(
            owner,
            channel=channel,
            chat_id=chat_id,
            role=role,
            content=content,
            search_text=f"{own} {previous}" if previous else own,
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
            limit=max(limit * CANDIDATES_PER_HIT, MIN_CANDIDATES),
        )
        frequencies = await self._store.turns.document_frequencies(terms)
        n = await self._store.turns.total()
        weights = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequencies.items()}
        rows = rerank(rows, weights)[:limit]
        hits = []
        for turn, bm25, _indexed in rows:
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
