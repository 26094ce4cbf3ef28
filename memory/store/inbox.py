"""The SQL of the durable inbox: messages accepted from a platform and not yet answered. With several
gateways on one database the inbox is the queue: the replica holding a chat claims its rows in the
platform's order (``chat_holds.py``; docs/scale-out.md, "The message path").

Times here are the store's one clock (``sql.store_clock``): ``received_at`` is what the claim's reorder
window counts from, so it must be the clock the claim reads, not the storing host's.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.chat_next import NEXT_AFTER_LOCK
from memory.store.claim_rows import Arrival, ClaimedRow, history_sql, read_extras, take_params, take_sql
from memory.store.sql import CHAT_LOCKS, SqlDatabase, store_clock

# "no other message of the chat is unanswered" (the one just stored is not seen by its own statement).
_ALONE = "NOT EXISTS (SELECT 1 FROM inbox WHERE channel = ? AND chat_id = ? AND answered_at IS NULL{})"
# "the holder may take the chat's hold" (``claim_rows.take_sql``'s condition, not forced), in the insert
# of ``add_hold_and_claim`` on PostgreSQL: the claim it makes is recorded in the row it inserts.
_TAKEABLE = (
    "NOT EXISTS (SELECT 1 FROM chat_holds WHERE channel = ? AND chat_id = ? AND lease_until >= {now} "
    "AND holder NOT IN ('', ?))"
)
# ``add_hold_and_claim``'s first part on PostgreSQL (``lk``): the exclusive side of the chat's lock taken
# and the chat's unanswered messages read after it (``chat_next.py``): ``idle``, none; ``yes``, idle and
# the hold takeable by the holder — the intake claims its message (its insert records the claim);
# ``seen``, the statement's own snapshot, taken before the lock, finds the chat idle too. ``yes`` alone
# decides the claim: what the lock's read finds answered is answered (a message of the chat whose insert
# began before this statement committed before the lock was granted, so the read sees it), and an
# answered step that committed while this statement waited for the lock leaves the chat idle — the
# message is claimed here, not by a statement of its own (issue 38: two commits a message, always).
# ``seen`` decides only whether the chat's history is read with the claim: the snapshot cannot see
# the exchange that answered step wrote, so the handler reads the history itself then (a read, no
# commit). Parameters: (channel, chat_id, 0.0, holder, channel, chat_id, channel, chat_id, 0).
_LOCKED_IDLE = (
    f"SELECT idle, idle AND {_TAKEABLE} AS yes, {_ALONE.format('')} AS seen "
    f"FROM (SELECT NOT EXISTS ({NEXT_AFTER_LOCK}) AS idle) AS locked"
)


# The first storing time of the chat's unanswered messages later than this one in the platform's order, read
# with this one's insert (a column of its RETURNING, so no round trip of its own; served by
# idx_inbox_unanswered): this message arrived that long after a later one of its chat. Parameters:
# (channel, chat_id, platform_seq).
_LATER_STORED = (
    "(SELECT MIN(o.received_at) FROM inbox o WHERE o.channel = ? AND o.chat_id = ? "
    "AND o.answered_at IS NULL AND o.platform_seq > ?)"
)


def _later_stored(
    channel: str, chat_id: str, platform_seq: int, arrival: Arrival | None
) -> tuple[str, tuple[object, ...]]:
    """``_LATER_STORED`` with its parameters; NULL for a message without a platform order, or when no
    ``Arrival`` is asked for (the subquery is not run for nobody)."""
    if platform_seq <= 0 or arrival is None:
        return "NULL", ()
    return _LATER_STORED, (channel, chat_id, platform_seq)


class InboxRows:
    """``inbox``: one row per accepted message; ``answered_at`` is set once it has been answered."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self._now = store_clock(db.kind)

    async def add(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int = 0,
        media: str = "",
        *,
        arrival: Arrival | None = None,
    ) -> int | None:
        """Store one message, unclaimed (the chat's holder claims it: ``chat_holds.py``), with its media
        references (``media``: JSON, "" for none); its id, or None when this delivery (channel,
        delivery_key) is stored already. ``platform_seq`` is the platform's order of the chat's messages
        (0: arrival order).

        On PostgreSQL the insert holds the shared side of the chat's advisory lock until it commits, so a
        claim or a release of the chat (which take the exclusive side first) waits for it and then sees
        the row: an insert that began cannot be overtaken by its chat's next claim, whatever the order
        the inserts commit in (docs/scale-out.md, "Platform order"). ``arrival``: filled with how late
        the message came after a later one of its chat (``Arrival``), read by the same statement."""
        sql, params = self._insert(channel, chat_id, delivery_key, message, platform_seq, media)
        if arrival is None:
            return await self._db.insert(sql + " RETURNING id", params)
        later, later_params = _later_stored(channel, chat_id, platform_seq, arrival)
        rows = await self._db.returning(f"{sql} RETURNING id, received_at, {later}", (*params, *later_params))
        if not rows:
            return None
        arrival.saw(rows[0][1], rows[0][2])
        return int(rows[0][0])

    async def add_and_hold(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int,
        media: str,
        holder: str,
        lease_s: float,
        *,
        arrival: Arrival | None = None,
    ) -> tuple[int | None, int | None]:
        """``add``, then — when the message was new — its chat held for ``holder`` as
        ``ChatHoldRows.take`` does, in one unit of work (issue 38, item 5): on PostgreSQL one statement
        (one round trip, one commit), the take a ``WITH`` part of the insert, under the insert's shared
        chat lock; on SQLite one transaction. (the message's id or None for a redelivery, the hold's
        generation or None while another replica holds the chat). ``arrival``: as ``add``'s."""
        insert, params = self._insert(channel, chat_id, delivery_key, message, platform_seq, media)
        later, later_params = _later_stored(channel, chat_id, platform_seq, arrival)
        returned = f"RETURNING id, received_at, {later} AS later_at"
        hold = (channel, chat_id, holder, lease_s, *take_params(False))
        if self._db.kind == "postgresql":
            taken = take_sql(self._now, f"SELECT ?, ?, ?, {self._now}, 1 FROM stored")
            rows = await self._db.returning(
                f"WITH stored AS ({insert} {returned}), held AS ({taken}) "
                "SELECT (SELECT id FROM stored), (SELECT generation FROM held), "
                "(SELECT received_at FROM stored), (SELECT later_at FROM stored)",
                (*params, *later_params, *hold),
            )
            stored, generation, received, later_at = rows[0]
            if stored is None:
                return None, None
            if arrival is not None:
                arrival.saw(received, later_at)
            return int(stored), None if generation is None else int(generation)
        async with self._db.transaction():
            found = await self._db.returning(f"{insert} {returned}", (*params, *later_params))
            if not found:
                return None, None
            if arrival is not None:
                arrival.saw(found[0][1], found[0][2])
            rows = await self._db.returning(take_sql(self._now, f"VALUES (?, ?, ?, {self._now}, 1)"), hold)
        return int(found[0][0]), int(rows[0][0]) if rows else None

    async def add_hold_and_claim(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int,
        media: str,
        holder: str,
        lease_s: float,
        history: int = 0,
        settle_s: float = 0.0,
        *,
        arrival: Arrival | None = None,
    ) -> tuple[int | None, int | None, ClaimedRow | float | None]:
        """``add_and_hold``, and — when the hold was taken and no other message of the chat is unanswered —
        the message claimed for ``holder`` too, with ``history`` messages of the chat's history
        (``ChatHoldRows.next_message``): one round trip and one commit from intake to claim (issue 38,
        item 5). Returns (id or None for a redelivery, the hold's generation or None, the claim or None:
        then the holder claims as usual).

        A message with a platform order and a reorder window (``settle_s``) is not claimed: it may have to
        wait for an earlier one on its way; the seconds to wait before claiming it are returned instead,
        so the holder's first claim comes after the window. A message with nothing to wait for is claimed
        as soon as it is stored.

        On PostgreSQL the statement takes the exclusive side of the chat's lock before its insert
        (``chat_next.py``): every earlier insert of the chat has committed and is seen, and the message is
        claimed only when the chat is idle, so an earlier message is never overtaken — also when the
        chat's last message was answered while this statement waited for the lock, which its snapshot
        cannot see: then it is claimed with no history read (the handler reads it; ``_LOCKED_IDLE``). The
        claim is the hold's generation, read back, and ``claimed_by`` in the inserted row (the reply's
        send intent: ``claim_rows.py``), set when the chat is takeable and the message alone in it (a take
        of another replica committed between the two can leave it set on a message not claimed here: its
        next claim reports this replica as an earlier claimant). On SQLite one transaction. ``arrival``:
        as ``add``'s, read by the same statement (only when given)."""
        waits = settle_s > 0 and platform_seq != 0
        claimant = None if waits else holder  # the claim is the reply's send intent: recorded in the row
        insert, params = self._insert(
            channel, chat_id, delivery_key, message, platform_seq, media, claimant=claimant
        )
        hold = (channel, chat_id, holder, lease_s, *take_params(False))
        statement = self._hold_and_claim_pg if self._db.kind == "postgresql" else self._hold_and_claim_sqlite
        later = _later_stored(channel, chat_id, platform_seq, arrival)
        stored, received, generation, alone, extras, later_at = await statement(
            insert, params, hold, channel, chat_id, 0 if waits else history, claimant, later
        )
        if stored is None:
            return None, None, None
        if arrival is not None:
            arrival.saw(received, later_at)
        if generation is None or not alone:
            return stored, generation, None
        if waits:
            return stored, generation, settle_s
        claim = ClaimedRow(stored, message, received, generation, None, media, *read_extras(extras), lease_s)
        return claim.id, claim.generation, claim  # the hold was taken (or extended) by this statement

    async def _hold_and_claim_pg(
        self,
        insert: str,
        params: tuple[object, ...],
        hold: tuple[object, ...],
        channel: str,
        chat_id: str,
        history: int,
        claimant: str | None,
        later: tuple[str, tuple[object, ...]],
    ) -> tuple[int | None, str, int | None, bool, Sequence[object], object]:
        """``add_hold_and_claim`` on PostgreSQL: one statement, the exclusive side of the chat's lock its
        first part (``lk``, ``chat_next.NEXT_AFTER_LOCK``). (stored id or None, received at, the hold's
        generation or None, alone in the chat, history row, ``later``'s value: ``_later_stored``.)"""
        claimable = (
            "(SELECT generation FROM held) IS NOT NULL AND (SELECT yes FROM lk) AND (SELECT seen FROM lk)"
        )
        read, read_params = history_sql("postgresql", history, channel, chat_id, claimable)
        taken = take_sql(self._now, f"SELECT ?, ?, ?, {self._now}, 1 FROM stored")
        rows = await self._db.returning(
            f"WITH lk AS ({_LOCKED_IDLE.format(now=self._now)}), "
            f"stored AS ({insert} RETURNING id, received_at, {later[0]} AS later_at), held AS ({taken}) "
            "SELECT (SELECT id FROM stored), (SELECT received_at FROM stored), "
            "(SELECT generation FROM held), (SELECT yes FROM lk), (SELECT later_at FROM stored), "
            f"{read}",
            (
                *(channel, chat_id, 0.0, hold[2], channel, chat_id, channel, chat_id, 0),
                *params,
                *later[1],
                *hold,
                *read_params,
            ),
        )
        stored, received, generation, alone, later_at = rows[0][:5]
        return (
            None if stored is None else int(stored),
            str(received),
            None if generation is None else int(generation),
            bool(alone),
            rows[0][5:],
            later_at,
        )

    async def _hold_and_claim_sqlite(
        self,
        insert: str,
        params: tuple[object, ...],
        hold: tuple[object, ...],
        channel: str,
        chat_id: str,
        history: int,
        claimant: str | None,
        later: tuple[str, tuple[object, ...]],
    ) -> tuple[int | None, str, int | None, bool, Sequence[object], object]:
        """``add_hold_and_claim`` on SQLite: the same steps in one transaction (same result shape); the
        claim recorded in the row once it is known to be one."""
        async with self._db.transaction():
            found = await self._db.returning(
                f"{insert} RETURNING id, received_at, {later[0]}", (*params, *later[1])
            )
            if not found:
                return None, "", None, False, (), None
            stored, received, later_at = int(found[0][0]), str(found[0][1]), found[0][2]
            held = await self._db.returning(take_sql(self._now, f"VALUES (?, ?, ?, {self._now}, 1)"), hold)
            if not held:
                return stored, received, None, False, (), later_at
            read, read_params = history_sql("sqlite", history, channel, chat_id)
            rows = await self._db.read(
                f"SELECT {_ALONE.format(' AND id <> ?')}, {read}",
                (channel, chat_id, stored, *read_params),
            )
            if rows[0][0] and claimant is not None:
                await self._db.write("UPDATE inbox SET claimed_by = ? WHERE id = ?", (claimant, stored))
        return stored, received, int(held[0][0]), bool(rows[0][0]), rows[0][1:], later_at

    def _insert(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int,
        media: str,
        *,
        claimant: str | bool | None = False,
    ) -> tuple[str, tuple[object, ...]]:
        """The insert of one message (``add``), without its RETURNING; ``claimant`` (not False): its
        statement takes the chat's exclusive lock first (``add_hold_and_claim``'s ``lk``), so it takes no
        shared side, and on PostgreSQL records ``claimant`` (None: nobody) as the claimant when the
        statement's take and claim will succeed (``lk``'s ``yes``: ``_LOCKED_IDLE``)."""
        columns = "channel, chat_id, delivery_key, message, received_at, platform_seq, media"
        values: tuple[object, ...] = (channel, chat_id, delivery_key, message, 0.0, platform_seq, media)
        locked = claimant is not False
        if self._db.kind == "postgresql" and claimant:
            columns += ", claimed_by"
            source = f"SELECT ?, ?, ?, ?, {self._now}, ?, ?, CASE WHEN lk.yes THEN ? END FROM lk"
            return f"INSERT INTO inbox ({columns}) {source} ON CONFLICT DO NOTHING", (*values, claimant)
        if self._db.kind == "postgresql" and locked:  # after ``lk``: the chat's lock taken in the statement
            source = f"SELECT ?, ?, ?, ?, {self._now}, ?, ? FROM lk"
            return f"INSERT INTO inbox ({columns}) {source} ON CONFLICT DO NOTHING", values
        if self._db.kind == "postgresql" and not locked:
            source = (
                f"SELECT ?, ?, ?, ?, {self._now}, ?, ? "
                "FROM (SELECT pg_advisory_xact_lock_shared(?, hashtext(?))) AS intake"
            )
            params: tuple[object, ...] = (*values, CHAT_LOCKS, f"{channel}:{chat_id}")
        else:
            source, params = f"VALUES (?, ?, ?, ?, {self._now}, ?, ?)", values
        return f"INSERT INTO inbox ({columns}) {source} ON CONFLICT DO NOTHING", params

    async def pending(self) -> list[tuple[int, str, str]]:
        """(id, message, media) of every message not answered yet, oldest first."""
        rows = await self._db.read(
            "SELECT id, message, media FROM inbox WHERE answered_at IS NULL ORDER BY id"
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def with_media(self, *, answered: bool) -> int:
        """How many messages carrying media are (not) answered (``tierclaw status``, the bench)."""
        cond = "IS NOT NULL" if answered else "IS NULL"
        return await self._db.scalar(f"SELECT COUNT(*) FROM inbox WHERE media != '' AND answered_at {cond}")

    async def answer(self, inbox_id: int, send_error: str | None = None) -> None:
        """Mark a message answered now (again is harmless), whoever holds its chat; ``send_error`` when
        its reply could not be sent. The worker of a held chat marks through ``ChatHoldRows.answered``,
        which is fenced by the hold's generation."""
        await self._db.write(
            f"UPDATE inbox SET answered_at = {self._now}, send_error = ?, lease_until = NULL "
            "WHERE id = ? AND answered_at IS NULL",
            (0.0, send_error, inbox_id),
        )

    async def prune(self, keep_seconds: float) -> int:
        """Forget messages answered more than ``keep_seconds`` ago (kept a while to recognise
        redeliveries)."""
        cur = await self._db.write(
            f"DELETE FROM inbox WHERE answered_at IS NOT NULL AND answered_at < {self._now}",
            (-keep_seconds,),
        )
        return int(cur.rowcount)

    async def count(self, *, answered: bool) -> int:
        """How many messages are (not) answered."""
        cond = "IS NOT NULL" if answered else "IS NULL"
        return await self._db.scalar(f"SELECT COUNT(*) FROM inbox WHERE answered_at {cond}")

    async def unsent(self, within_seconds: float) -> int:
        """Replies that could not be sent, of messages answered in the last ``within_seconds``."""
        return await self._db.scalar(
            f"SELECT COUNT(*) FROM inbox WHERE send_error IS NOT NULL AND answered_at >= {self._now}",
            (-within_seconds,),
        )

    async def in_flight(self, replica: str) -> int:
        """Messages ``replica`` claimed and did not mark answered — the claim is the reply's send intent
        (``claim_rows.py``): what may go out twice if that replica died (``bench.replicas``:
        ``in_flight_at_kill``)."""
        return await self._db.scalar(
            "SELECT COUNT(*) FROM inbox WHERE answered_at IS NULL AND claimed_by = ?", (replica,)
        )

    async def forget_claims(self, replica: str) -> int:
        """Forget ``replica``'s claims of messages it did not mark answered: it is stopping on purpose, so
        no mark of its will come, and the next holder need not wait for one (``gateway/in_flight.py``)."""
        cur = await self._db.write(
            "UPDATE inbox SET claimed_by = NULL WHERE claimed_by = ? AND answered_at IS NULL", (replica,)
        )
        return int(cur.rowcount)

    async def is_answered(self, inbox_id: int) -> bool:
        """Whether the message is marked answered (by whichever replica: ``chat_holds._MARKER``)."""
        return bool(
            await self._db.scalar(
                "SELECT COUNT(*) FROM inbox WHERE id = ? AND answered_at IS NOT NULL", (inbox_id,)
            )
        )

    async def stored_out_of_order(self) -> int:
        """Messages stored after a later message of their chat (by the platform's order): deliveries the
        claim's platform order had to put back in order. For trials (``bench.replicas``'s ``race``) and
        tests; it reads every kept row."""
        return await self._db.scalar(
            "SELECT COUNT(*) FROM inbox a WHERE a.platform_seq > 0 AND EXISTS (SELECT 1 FROM inbox b "
            "WHERE b.channel = a.channel AND b.chat_id = a.chat_id AND b.platform_seq > a.platform_seq "
            "AND b.id < a.id)"
        )

    async def timeline(self) -> list[tuple[str, str, int, str, str | None]]:
        """(channel, chat_id, platform_seq, received_at, answered_at) of every kept row with a platform
        order, for trials (``bench.replicas`` tells an order violation's cause by them) and tests."""
        rows = await self._db.read(
            "SELECT channel, chat_id, platform_seq, received_at, answered_at FROM inbox "
            "WHERE platform_seq > 0 ORDER BY channel, chat_id, platform_seq"
        )
        return [
            (str(r[0]), str(r[1]), int(r[2]), str(r[3]), None if r[4] is None else str(r[4])) for r in rows
        ]

    async def set_reply_handle(self, inbox_id: int, handle: str) -> None:
        """Keep where a streamed reply to this message is being written on the platform (a message id, a
        card id: the channel's own text), so a restart completes that message instead of sending another."""
        await self._db.write("UPDATE inbox SET reply_handle = ? WHERE id = ?", (handle, inbox_id))

    async def reply_handle(self, inbox_id: int) -> str:
        """The handle ``set_reply_handle`` kept for this message ("" when none)."""
        rows = await self._db.read("SELECT reply_handle FROM inbox WHERE id = ?", (inbox_id,))
        return str(rows[0][0] or "") if rows else ""
