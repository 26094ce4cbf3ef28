"""What the intake (``inbox.py``), a chat's claims and its answered step (``chat_holds.py``) share: the
take of a chat's hold, the history read with a claim, and the rows a claim and an answered step give.

A claim is the reply's send intent (docs/scale-out.md, "Two commits"): it records its replica in the
inbox row (``claimed_by``) and moves the previous claimant, if any, to ``sending_by`` — a replica that
claimed the message and never marked it answered may have sent its reply. ``InboxRows.in_flight``
counts the messages a replica has claimed and not marked (``bench.replicas``: ``in_flight_at_kill``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from memory.clock import from_db
from memory.store.turn_sessions import CURRENT, history_order, newest


def take_sql(now: str, source: str) -> str:
    """The upsert of a hold's take (``ChatHoldRows.take``; with the message's intake: ``inbox.py``):
    ``source`` yields (channel, chat_id, holder, lease_until, 1), its parameters first, then
    ``take_params``. Taken when nobody held the chat, its lease ran out, it was released or ``holder``
    held it already (its lease extended, its generation kept); the hold's generation, or no row."""
    return (
        f"INSERT INTO chat_holds (channel, chat_id, holder, lease_until, generation) {source} "
        "ON CONFLICT(channel, chat_id) DO UPDATE SET "
        "holder = excluded.holder, lease_until = excluded.lease_until, generation = "
        "chat_holds.generation + "
        "CASE WHEN chat_holds.holder = excluded.holder AND ? = 0 THEN 0 ELSE 1 END "
        f"WHERE chat_holds.lease_until < {now} OR chat_holds.holder IN ('', excluded.holder) OR ? = 1 "
        "RETURNING generation"
    )


def take_params(force: bool) -> tuple[object, ...]:
    """The parameters of ``take_sql`` after its source's."""
    return (int(force), 0.0, int(force))


def history_sql(
    kind: str, limit: int, channel: str, chat_id: str, when: str = ""
) -> tuple[str, tuple[object, ...]]:
    """Two columns read with a claim (issue 38, item 5: no read of its own on the reply path): the chat's
    current Tier 0 session number and its last messages, a JSON array of [part, id, role, content]
    (``turn_sessions.newest``: up to ``limit`` of its kept turns of that session and of the rows of
    ``session_messages``, in no promised order: ``parse_history`` sorts them, the first ``limit`` are the
    history; ``memory/sessions.py``); NULLs for ``limit`` 0, or unless ``when`` (SQL) holds. With their
    parameters."""
    if limit <= 0:
        return "NULL, NULL", ()
    session = CURRENT
    rows, rows_params = newest(channel, chat_id, limit)
    each = f"{'json_build_array' if kind == 'postgresql' else 'json_array'}(s.part, s.id, s.role, s.content)"
    if kind == "postgresql":
        history = f"(SELECT json_agg({each})::text FROM {rows})"
    else:
        history = f"(SELECT json_group_array({each}) FROM {rows})"
    if when:
        session, history = (f"CASE WHEN {when} THEN {column} END" for column in (session, history))
    return f"{session}, {history}", (f"{channel}:{chat_id}", *rows_params)


@dataclass(frozen=True, slots=True)
class ClaimedRow:
    """A message claimed by its chat's holder."""

    id: int
    message: str  # the stored body
    received_at: str  # when it was stored, by the store's clock
    generation: int  # of the hold it was claimed under: the fence of its reply
    sent_by: str | None  # the replica that claimed it before and never marked it: its reply may be out
    media: str = ""  # its media references (JSON, "" for none: ``inbox.py``)
    session: int | None = None  # the chat's current session, read with the claim (None: not read)
    history: str | None = None  # its last messages (JSON [[part, id, role, content], …]): ``history_sql``
    lease_left_s: float | None = None  # of the chat's hold when claimed, by the store's clock (None: unknown)
    # turns of the session written by the claim's own statement (an exchange written with the previous
    # message's answered-mark), which its history read cannot see: (role, content), oldest first
    written: tuple[tuple[str, str], ...] = ()


@dataclass
class Arrival:
    """What an intake saw of its own message's arrival, filled by ``InboxRows.add``, ``add_and_hold`` and
    ``add_hold_and_claim`` when given: ``late_by_s``, how long after a later message of its chat (the
    platform's order), still unanswered, it was stored — on the store's clock, so whichever replicas stored
    the two —, or None (none was waiting, a redelivery, no platform order). The gateway's reorder window
    grows to cover what it sees (``gateway/inbox.py``, ``ReorderWindow``)."""

    late_by_s: float | None = None

    def saw(self, received: object, later: object) -> None:
        """Record the message's storing time against the later message's (both as stored; None: none)."""
        if received is not None and later is not None:
            self.late_by_s = max((from_db(str(received)) - from_db(str(later))).total_seconds(), 0.0)


def parse_history(history: str | None, written: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """``history_sql``'s messages as (role, content), newest first (more than its ``limit`` may come: the
    caller keeps the first ``limit``); ``written`` (oldest first: a claim's ``written``) newer than all of
    them."""
    rows = sorted(json.loads(history or "[]"), key=history_order)
    return [*reversed(written), *((str(role), str(content)) for _, _, role, content in rows)]


def lease_left(lease_until: object, now: object) -> float | None:
    """Seconds from ``now`` to ``lease_until`` (both the store's clock, as stored); None when unknown."""
    if lease_until is None or now is None:
        return None
    return (from_db(str(lease_until)) - from_db(str(now))).total_seconds()


def read_extras(columns: Sequence[object]) -> tuple[int | None, str | None]:
    """``ClaimedRow``'s session and history from ``history_sql``'s two columns."""
    session, history = columns
    return (None if session is None else int(str(session))), (None if history is None else str(history))


@dataclass(frozen=True, slots=True)
class AfterAnswer:
    """What ``answered_then_next`` did: the message marked (False: the chat changed hands, nothing else
    was done), then the chat's next message claimed (or the seconds it still has to settle, or None),
    or the hold let go because nothing was left; ``wrote``: the mark was made by this step, with the
    exchange (False on a step tried again whose first commit had gone through: nothing written twice)."""

    marked: bool
    next: ClaimedRow | float | None = None
    released: bool = False
    due_now: bool = False  # the exchange written with the mark made its owner's extraction due now
    wrote: bool = False
