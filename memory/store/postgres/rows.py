"""The table parts whose statements differ on PostgreSQL: full text over events and kept turns.

Everything else of ``events.py`` and ``turns.py`` is shared SQL; here only term matching is replaced
(GIN ``@@`` instead of FTS5 ``MATCH``, bm25 as FTS5 computes it: ``fulltext.py``), and writes tell the
table's size cache that N changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.records import Episode, Event
from memory.store.events import COLUMNS as EVENT_COLUMNS
from memory.store.events import EventRows, event_from_row
from memory.store.postgres.fulltext import TableSize, any_of, bm25, ranked, term_frequencies
from memory.store.sql import SqlDatabase, qualified
from memory.store.turns import COLUMNS as TURN_COLUMNS
from memory.store.turns import TurnRow, TurnRows


class PostgresEventRows(EventRows):
    """Tier 3 events; ``find`` with terms ranks by bm25 over ``daily_events``."""

    def __init__(self, db: SqlDatabase) -> None:
        super().__init__(db)
        self._size = TableSize(db, "daily_events")

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
        episode: Episode | None = None,
        span: tuple[str, str] | None = None,
    ) -> int:
        """As ``EventRows.add``; the table's size is read again before the next score."""
        self._size.changed()
        return await super().add(
            owner,
            day,
            summary,
            search_text=search_text,
            channel=channel,
            sender_id=sender_id,
            raw_tokens=raw_tokens,
            source_ref=source_ref,
            episode=episode,
            span=span,
        )

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
    ) -> list[Event]:
        """Events by date range, source_ref and/or any of ``terms`` (best bm25 first)."""
        if not terms:
            return await super().find(
                owner,
                since=since,
                until=until,
                terms=terms,
                include_compressed=include_compressed,
                source_ref=source_ref,
                limit=limit,
            )
        where, params = self.filters(owner, since, until, include_compressed, source_ref)
        rows = await self._db.read(
            f"SELECT {qualified(EVENT_COLUMNS, 'e')}, e.search_text FROM daily_events e "
            f"WHERE e.search_tsv @@ CAST(? AS tsquery) AND {' AND '.join(where)}",
            (any_of(terms), *params),
        )
        stats = await self._size.statistics(await term_frequencies(self._db, "daily_events", terms))
        scored = [(int(r[0]), bm25(str(r[-1]), terms, stats)) for r in rows]
        return [event_from_row(rows[i][:-1]) for i in ranked(scored, limit)]


class PostgresTurnRows(TurnRows):
    """Kept turns; ``matches`` ranks by bm25 over ``conversation_turns``."""

    def __init__(self, db: SqlDatabase) -> None:
        super().__init__(db)
        self._size = TableSize(db, "conversation_turns")

    async def add(
        self, owner: str, *, channel: str, chat_id: str, role: str, content: str, search_text: str, at: str
    ) -> int:
        """As ``TurnRows.add``; the table's size is read again before the next score."""
        self._size.changed()
        return await super().add(
            owner,
            channel=channel,
            chat_id=chat_id,
            role=role,
            content=content,
            search_text=search_text,
            at=at,
        )

    def written(self) -> None:
        """Turns were added elsewhere (``exchange.py``): the table's size is read again."""
        self._size.changed()

    async def prune(self, before: str) -> int:
        """As ``TurnRows.prune``."""
        self._size.changed()
        return await super().prune(before)

    async def matches(
        self, owner: str, terms: Sequence[str], *, since: str | None, until: str | None, limit: int
    ) -> list[tuple[TurnRow, float, str]]:
        """The owner's turns matching any term within ``[since, until)``, best bm25 first."""
        if not terms:
            return []
        where, params = ["owner = ?"], [owner]
        if since:
            where.append("created_at >= ?")
            params.append(since)
        if until:
            where.append("created_at < ?")
            params.append(until)
        rows = await self._db.read(
            f"SELECT {TURN_COLUMNS}, search_text FROM conversation_turns "
            f"WHERE search_tsv @@ CAST(? AS tsquery) AND {' AND '.join(where)}",
            (any_of(terms), *params),
        )
        stats = await self._size.statistics(await self.document_frequencies(terms))
        scored = [(int(r[0]), bm25(str(r[7]), terms, stats)) for r in rows]
        return [(TurnRow(*rows[i][:7]), scored[i][1], str(rows[i][7])) for i in ranked(scored, limit)]

    async def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many kept turns (all owners) contain each term."""
        return await term_frequencies(self._db, "conversation_turns", list(dict.fromkeys(terms)))
