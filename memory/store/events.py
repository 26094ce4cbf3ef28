"""The SQL of Tier 3: ``daily_events`` (a day's conversation summaries) and their full-text index."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeVar

from memory import clock
from memory.records import Episode, Event
from memory.store.sql import Row, SqlDatabase, marks, qualified
from memory.text import tokenizer

_T = TypeVar("_T")

COLUMNS = (
    "id, owner, event_date, channel, sender_id, summary, raw_tokens, is_compressed, created_at, source_ref, "
    "goal, outcome, entities, started_at, ended_at, fact_ids"
)


def event_from_row(row: Row) -> Event:
    """An ``Event`` from a row selected as ``COLUMNS``."""
    return Event(
        id=row[0],
        owner=row[1],
        event_date=row[2],
        channel=row[3],
        sender_id=row[4],
        summary=row[5],
        raw_tokens=row[6],
        is_compressed=bool(row[7]),
        created_at=row[8],
        source_ref=row[9],
        goal=row[10],
        outcome=row[11],
        entities=_json_list(row[12], str),
        started_at=row[13],
        ended_at=row[14],
        fact_ids=_json_list(row[15], int),
    )


def _json_list(text: str | None, kind: type[_T]) -> list[_T]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, kind) and not isinstance(v, bool)]


class EventRows:
    """Reads and writes of Tier 3 events; every statement filters on the owner where it names one."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

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
        """Insert one event (an episode when ``episode`` is given; ``span``: its start and end, stored
        times; default now); returns its id."""
        episode = episode or Episode()
        start, end = span if span is not None else (None, None)  # the store's clock, not SQL's
        now = clock.to_db(clock.utcnow())
        new_id = await self._db.insert(
            "INSERT INTO daily_events (owner, event_date, channel, sender_id, summary, search_text, "
            "raw_tokens, source_ref, goal, outcome, entities, started_at, ended_at, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                owner,
                day,
                channel,
                sender_id,
                summary,
                search_text,
                raw_tokens,
                source_ref,
                episode.goal,
                episode.outcome,
                json.dumps(episode.entities, ensure_ascii=False),
                start if start is not None else now,
                end if end is not None else now,
                now,
            ),
        )
        return int(new_id or 0)

    async def link_facts(self, owner: str, event_id: int, fact_ids: Sequence[int]) -> None:
        """Record which facts were extracted with the episode."""
        await self._db.write(
            "UPDATE daily_events SET fact_ids = ? WHERE owner = ? AND id = ?",
            (json.dumps(sorted(set(fact_ids))), owner, event_id),
        )

    async def mark_compressed(self, owner: str, event_ids: Sequence[int]) -> int:
        """Flag events as folded into Tier 2; returns how many changed."""
        cur = await self._db.write(
            f"UPDATE daily_events SET is_compressed = 1 WHERE owner = ? AND id IN ({marks(event_ids)}) "
            "AND is_compressed = 0",
            (owner, *event_ids),
        )
        return int(cur.rowcount)

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
        """Events by date range (inclusive), source_ref and/or any of ``terms`` (best match first)."""
        where, params = self.filters(owner, since, until, include_compressed, source_ref)
        columns = qualified(COLUMNS, "e")
        if terms:
            sql = (
                f"SELECT {columns} FROM events_fts JOIN daily_events e ON e.id = events_fts.rowid "
                f"WHERE events_fts MATCH ? AND {' AND '.join(where)} ORDER BY bm25(events_fts) LIMIT ?"
            )
            params = [tokenizer.match_expression(terms), *params]
        else:
            sql = (
                f"SELECT {columns} FROM daily_events e WHERE {' AND '.join(where)} "
                "ORDER BY e.event_date DESC, e.id DESC LIMIT ?"
            )
        return [event_from_row(r) for r in await self._db.read(sql, (*params, limit))]

    @staticmethod
    def filters(
        owner: str, since: str | None, until: str | None, include_compressed: bool, source_ref: str | None
    ) -> tuple[list[str], list[object]]:
        """The WHERE conditions (on alias ``e``) and parameters of ``find`` besides its terms."""
        where: list[str] = ["e.owner = ?"]
        params: list[object] = [owner]
        if source_ref is not None:
            where.append("e.source_ref = ?")
            params.append(source_ref)
        if since:
            where.append("e.event_date >= ?")
            params.append(since)
        if until:
            where.append("e.event_date <= ?")
            params.append(until)
        if not include_compressed:
            where.append("e.is_compressed = 0")
        return where, params

    async def owners_with_uncompressed(self, until_day: str) -> list[str]:
        """Owners with events dated on or before ``until_day`` that are not compressed yet."""
        rows = await self._db.read(
            "SELECT DISTINCT owner FROM daily_events WHERE is_compressed = 0 AND event_date <= ? "
            "ORDER BY owner",
            (until_day,),
        )
        return [r[0] for r in rows]

    async def uncompressed(self, owner: str, until_day: str) -> list[Event]:
        """The owner's uncompressed events dated on or before ``until_day``, oldest first."""
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM daily_events WHERE owner = ? AND is_compressed = 0 "
            "AND event_date <= ? ORDER BY event_date, id",
            (owner, until_day),
        )
        return [event_from_row(r) for r in rows]

    async def count(self, owner: str | None) -> int:
        """Events of one owner, or of all when None."""
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        return await self._db.scalar(f"SELECT COUNT(*) FROM daily_events {cond}", params)

    async def owners(self, owner: str | None = None) -> list[str]:
        """Every owner with memories or events (or just ``owner`` if it has any), sorted."""
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        rows = await self._db.read(
            f"SELECT owner FROM memories {cond} UNION SELECT owner FROM daily_events {cond} ORDER BY 1",
            params * 2,
        )
        return [r[0] for r in rows]

    async def last_activity(self) -> dict[str, str]:
        """Every owner with memories, events or kept turns (the buffered ones among them) -> the stored
        time of their latest one (a memory written, changed or recalled; an event; a message)."""
        rows = await self._db.read(
            "SELECT owner, MAX(at) FROM ("
            " SELECT owner, MAX(CASE WHEN updated_at > last_accessed THEN updated_at ELSE last_accessed END)"
            " AS at FROM memories GROUP BY owner"
            " UNION ALL SELECT owner, MAX(created_at) FROM daily_events GROUP BY owner"
            " UNION ALL SELECT owner, MAX(created_at) FROM conversation_turns GROUP BY owner"
            ") AS latest GROUP BY owner ORDER BY owner"
        )
        return {str(owner): str(at or "") for owner, at in rows}
