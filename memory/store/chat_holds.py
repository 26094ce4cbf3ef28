"""The SQL of chat holds: one replica at a time answers a chat's messages (docs/scale-out.md, "The message
path"). The inbox is the queue: the holder claims the chat's unanswered rows in the platform's order,
whoever stored them, and lets the hold go only in the statement that sees none left.

A hold lives until ``lease_until``; its replica renews it while it works the chat, so a hold whose lease
ran out belongs to a replica that died or stalled, and another takes it over. Each hold carries a
``generation`` that rises whenever the hold changes hands (a takeover, a take after a release): a reply
goes out only after ``fence`` (a read) found the sender's generation current, and the answered-mark is
conditional on it too, so a replica that stalled past its lease and wakes after a takeover sends
nothing. A released hold keeps its row (``holder`` ''), so its generation keeps rising. The claim is the
reply's send intent (``claim_rows.py``): no statement records one before the send, and the exchange is
written with the answered-mark after it (``answered_then_next``; docs/scale-out.md, "Two commits").

Claims and releases on PostgreSQL run after the exclusive side of the chat's advisory lock, whose
shared side every insert of the chat holds until it commits (``inbox.py``): a claim sees every message
whose insert began before it, and a release never drops the hold over a message being stored
(docs/scale-out.md, "Platform order"). The answered step takes the lock inside its one statement
(``chat_next.py``: the chat's next message read and claimed after the lock, by queries of their own,
so a message stored while the lock was waited for is claimed too); a claim or a release of its own
sends the lock before its statement.
All times are the store's one clock (``sql.store_clock``).

On SQLite (one process) every hold is this process's; the statements are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memory.clock import from_db
from memory.store.chat_next import CLAIM_AFTER_LOCK
from memory.store.claim_rows import (
    AfterAnswer,
    ClaimedRow,
    history_sql,
    lease_left,
    read_extras,
    take_params,
    take_sql,
)
from memory.store.exchange import ExchangeWrite, run_in_transaction, with_parts
from memory.store.sql import SqlDatabase, marks, store_clock

# "the held chat has an unanswered message" (``h``: the chat_holds row); served by idx_inbox_unanswered.
_UNANSWERED = (
    "SELECT 1 FROM inbox i WHERE i.channel = h.channel AND i.chat_id = h.chat_id AND i.answered_at IS NULL"
)
# The chat's next message: the platform's order first (Telegram update id, Feishu create time), then the
# order of storing (messages without a platform order, and ties).
_OLDEST = (
    "SELECT id FROM inbox WHERE channel = ? AND chat_id = ? AND answered_at IS NULL "
    "ORDER BY platform_seq, id LIMIT 1"
)


# Whose answered-mark counts: the holder at the claim's generation, or — the message still unanswered —
# the replica whose claim a takeover moved to ``sending_by``: its reply went out before it stalled, and
# the taker waits for that mark before answering again (``gateway/in_flight.py``; docs/scale-out.md,
# "Fencing"). Only the send is fenced by the generation; a mark says what happened. Parameters: (channel,
# chat_id, holder, generation, holder).
_MARKER = (
    "(EXISTS (SELECT 1 FROM chat_holds h WHERE h.channel = ? AND h.chat_id = ? AND h.holder = ? "
    "AND h.generation = ?) OR (answered_at IS NULL AND sending_by = ?))"
)


def _mark_answered_sql(now: str) -> str:
    """The answered-mark, fenced (``ChatHoldRows.answered``): by the holder at the claim's generation, or
    by the stalled claimant a takeover found (``_MARKER``); a mark made again keeps the first time and
    error. Parameters: (0.0, send_error, inbox_id, channel, chat_id, holder, generation, holder)."""
    return (
        f"UPDATE inbox SET answered_at = COALESCE(answered_at, {now}), send_error = "
        "CASE WHEN answered_at IS NULL THEN ? ELSE send_error END, lease_until = NULL "
        f"WHERE id = ? AND {_MARKER}"
    )


# A claim records its replica and moves the previous claimant to ``sending_by`` (``claim_rows.py``).
_CLAIM_SET = "claimed_by = ?, sending_by = claimed_by"
# The same claim made again by a retried answered step (its first commit claimed it): the claimant kept.
_CLAIM_AGAIN_SET = "claimed_by = ?, sending_by = CASE WHEN claimed_by = ? THEN sending_by ELSE claimed_by END"
# The hold's lease end, read with a claim: the send's fence needs no statement while enough of it is left.
_LEASE_UNTIL = "(SELECT lease_until FROM chat_holds WHERE channel = ? AND chat_id = ?)"


# The answered-mark made once (``answered_then_next``): it changes the row only while the message is
# unanswered and its marker may mark it (``_MARKER``), so the exchange written with it is written once.
# Parameters: (0.0, send_error, inbox_id, channel, chat_id, holder, generation, holder).
def _mark_once_sql(now: str) -> str:
    return (
        f"UPDATE inbox SET answered_at = {now}, send_error = ?, lease_until = NULL "
        f"WHERE id = ? AND answered_at IS NULL AND {_MARKER}"
    )


# "this holder's mark of the message went through before": a mark tried again after a lost connection
# whose commit had gone through (the holder's claim is the last one: a later claimant would show).
# Parameters: (inbox_id, holder).
_MARKED_BEFORE = "SELECT id FROM inbox WHERE id = ? AND answered_at IS NOT NULL AND claimed_by = ?"
# The claim's go (``chat_next.CLAIM_AFTER_LOCK``): the statement's mark was made, or found made before.
_GO = "EXISTS (SELECT 1 FROM marked)"


def _answered_then_next_sql(now: str, read: str, exchange: str, due: bool) -> str:
    """``ChatHoldRows.answered_then_next`` on PostgreSQL, data-modifying ``WITH`` parts of one statement:
    the mark made once (``done``), or found made before by this holder (``again``: a retry whose first
    commit went through); the exchange's inserts (``exchange``: its ``WITH`` parts, each conditional on
    ``done``; ``due``: with the due-time push); the next message's claim, after the chat's lock by a
    query of its own (``chat_next.CLAIM_AFTER_LOCK``: also a message stored while the lock was waited
    for; a retry claims again what its first commit claimed, its earlier claimant kept) and the release.
    ``read``: ``history_sql``'s columns. Columns: marked, released, the claim's five, the next's storing
    time, now, due, the lease's end, ``read``'s two, and whether the exchange was written here."""
    return (
        f"WITH done AS ({_mark_once_sql(now)} RETURNING id), again AS ({_MARKED_BEFORE}), "
        f"{exchange + ', ' if exchange else ''}"
        "marked AS (SELECT id FROM done UNION ALL SELECT id FROM again), "
        f"nxt AS ({CLAIM_AFTER_LOCK.format(go=_GO, again='EXISTS (SELECT 1 FROM again)')}), "
        "claimed AS (SELECT id, message, received_at, sending_by, media FROM nxt WHERE claimed), "
        f"rel AS (UPDATE chat_holds SET holder = '', lease_until = {now} WHERE channel = ? "
        "AND chat_id = ? AND holder = ? AND generation = ? AND EXISTS (SELECT 1 FROM marked) "
        "AND NOT EXISTS (SELECT 1 FROM nxt) RETURNING 1) "
        "SELECT (SELECT COUNT(*) FROM marked), (SELECT COUNT(*) FROM rel), c.id, c.message, c.received_at, "
        f"c.sending_by, c.media, (SELECT received_at FROM nxt), {now}, "
        f"{'(SELECT * FROM due)' if due else '0'}, {_LEASE_UNTIL}, {read}, (SELECT COUNT(*) FROM done) "
        "FROM (SELECT 1 AS one) AS one LEFT JOIN claimed c ON TRUE"
    )


def _after_answer(
    row: Sequence[object], generation: int, settle_s: float, exchange: ExchangeWrite | None
) -> AfterAnswer:
    """``answered_then_next``'s answer from the one row of ``_answered_then_next_sql``."""
    marked, released, claimed_id, body, received, sent_by, media, waiting, now_at = row[:9]
    due_now, lease_until, wrote = bool(row[9]), row[10], bool(row[13])
    if not marked:
        return AfterAnswer(False)
    if claimed_id is not None:
        session, history_json = read_extras(row[11:13])
        same = wrote and exchange is not None and session == exchange.session
        claimed = ClaimedRow(
            int(str(claimed_id)),
            str(body),
            str(received),
            generation,
            None if sent_by is None else str(sent_by),
            str(media or ""),
            session,
            history_json,
            lease_left(lease_until, now_at),
            tuple(exchange.said) if same and exchange is not None else (),
        )
        return AfterAnswer(True, claimed, due_now=due_now, wrote=wrote)
    if waiting is not None:  # the next message is younger than the reorder window
        wait = settle_s - (from_db(str(now_at)) - from_db(str(waiting))).total_seconds()
        return AfterAnswer(True, max(wait, 0.001), due_now=due_now, wrote=wrote)
    return AfterAnswer(True, None, bool(released), due_now, wrote)


class ChatHoldRows:
    """``chat_holds``: (channel, chat_id) → the replica answering it (``holder``), its lease and its
    generation."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self._now = store_clock(db.kind)  # SQL for "the store's clock, ? seconds from now"

    async def take(
        self, channel: str, chat_id: str, holder: str, lease_s: float, *, force: bool = False
    ) -> int | None:
        """Hold the chat for ``holder`` for ``lease_s`` seconds: when nobody held it, its lease ran out,
        it was released, or ``holder`` held it already (then the lease is extended); ``force``: whatever
        the lease (a store one process owns, at start). The hold's generation, or None while another
        replica holds it with a live lease. The generation rises unless ``holder`` keeps its own hold."""
        rows = await self._db.returning(
            take_sql(self._now, f"VALUES (?, ?, ?, {self._now}, 1)"),
            (channel, chat_id, holder, lease_s, *take_params(force)),
        )
        return int(rows[0][0]) if rows else None

    async def holder(self, channel: str, chat_id: str) -> str | None:
        """Who holds the chat (None: nobody, or released)."""
        held = await self.get(channel, chat_id)
        return held[0] if held else None

    async def get(self, channel: str, chat_id: str) -> tuple[str, int] | None:
        """(holder, generation) of the chat's hold; None when nobody holds it."""
        rows = await self._db.read(
            "SELECT holder, generation FROM chat_holds WHERE channel = ? AND chat_id = ? AND holder <> ''",
            (channel, chat_id),
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    async def next_message(
        self,
        channel: str,
        chat_id: str,
        holder: str,
        settle_s: float = 0.0,
        history: int = 0,
        *,
        again: bool = False,
    ) -> ClaimedRow | float | None:
        """Claim for ``holder`` the chat's next unanswered message in the platform's order — only while
        it holds the chat — with the hold's generation and its media references; None (none left, or the
        hold is not ``holder``'s any more), or the seconds until the next message has been stored for
        ``settle_s`` (the reorder window: an earlier message still on its way over another connection is
        claimed first if it arrives by then; a message without a platform order has nothing to wait
        for). Claimed again when a previous answer was cut short: the holder is the only one answering
        the chat. ``history``: the chat's last messages read with the claim (``history_sql``); ``again``:
        a retried answered step claims what its first commit claimed (the earlier claimant kept)."""
        chat = (channel, chat_id)
        read, read_params = history_sql(self._db.kind, history, channel, chat_id)
        claim_set, claim_params = (_CLAIM_AGAIN_SET, (holder, holder)) if again else (_CLAIM_SET, (holder,))
        claimed = await self._db.returning(
            f"UPDATE inbox SET {claim_set} WHERE id = ({_OLDEST}) "
            f"AND (received_at <= {self._now} OR platform_seq = 0) "
            "AND EXISTS (SELECT 1 FROM chat_holds WHERE channel = ? AND chat_id = ? AND holder = ?) "
            "RETURNING id, message, received_at, sending_by, (SELECT generation FROM chat_holds "
            f"WHERE channel = ? AND chat_id = ?), media, {_LEASE_UNTIL}, {self._now}, {read}",
            (*claim_params, *chat, -settle_s, *chat, holder, *chat, *chat, 0.0, *read_params),
            chat_lock=f"{channel}:{chat_id}",
        )
        if claimed:
            row = claimed[0]
            found = ClaimedRow(
                int(row[0]),
                str(row[1]),
                str(row[2]),
                int(row[4]),
                row[3],
                str(row[5] or ""),
                *read_extras(row[8:]),
            )
            return replace(found, lease_left_s=lease_left(row[6], row[7]))
        if settle_s <= 0:
            return None
        waiting = await self._db.read(
            f"SELECT i.received_at, {self._now} FROM inbox i WHERE i.id = ({_OLDEST}) "
            "AND EXISTS (SELECT 1 FROM chat_holds WHERE channel = ? AND chat_id = ? AND holder = ?)",
            (0.0, channel, chat_id, channel, chat_id, holder),
        )
        if not waiting:
            return None
        stored, now = (from_db(str(value)) for value in waiting[0])
        return max(settle_s - (now - stored).total_seconds(), 0.001)

    async def fence(
        self, inbox_id: int, channel: str, chat_id: str, holder: str, generation: int, margin_s: float
    ) -> bool:
        """Right before a reply's send, a read: whether ``holder`` still holds the chat at ``generation``
        with at least ``margin_s`` seconds of lease left and the message is not answered. False: do not
        send (extend the hold and ask again, or the chat was taken over). Nothing is recorded: the
        message's claim is its send intent (``claim_rows.py``)."""
        rows = await self._db.read(
            "SELECT 1 FROM chat_holds h WHERE h.channel = ? AND h.chat_id = ? AND h.holder = ? "
            f"AND h.generation = ? AND h.lease_until > {self._now} "
            "AND EXISTS (SELECT 1 FROM inbox WHERE id = ? AND answered_at IS NULL)",
            (channel, chat_id, holder, generation, margin_s, inbox_id),
        )
        return bool(rows)

    async def extend(self, channel: str, chat_id: str, holder: str, generation: int, lease_s: float) -> bool:
        """Renew one hold for ``lease_s`` seconds only if it is still ``holder``'s at ``generation`` (a
        lease that ran out while nobody took the chat over is ``holder``'s again)."""
        rows = await self._db.returning(
            f"UPDATE chat_holds SET lease_until = {self._now} WHERE channel = ? AND chat_id = ? "
            "AND holder = ? AND generation = ? RETURNING 1",
            (lease_s, channel, chat_id, holder, generation),
        )
        return bool(rows)

    async def answered(
        self,
        inbox_id: int,
        channel: str,
        chat_id: str,
        holder: str,
        generation: int,
        send_error: str | None = None,
    ) -> bool:
        """Mark a claimed message answered — while ``holder`` still holds its chat at ``generation``, or
        while the message is unanswered and a takeover moved ``holder``'s claim to ``sending_by`` (its
        reply went out before it stalled: ``_MARKER``); False when the chat changed hands and the
        message is answered or claimed again by its new holder's taker. Marking it again
        under the same generation is True and changes nothing: a mark whose commit went through while
        its connection was lost is tried again by the worker, and must not read as a lost chat."""
        rows = await self._db.returning(
            f"{_mark_answered_sql(self._now)} RETURNING 1",
            (0.0, send_error, inbox_id, channel, chat_id, holder, generation, holder),
        )
        return bool(rows)

    async def answered_then_next(
        self,
        inbox_id: int,
        channel: str,
        chat_id: str,
        holder: str,
        generation: int,
        send_error: str | None = None,
        settle_s: float = 0.0,
        history: int = 0,
        exchange: ExchangeWrite | None = None,
    ) -> AfterAnswer:
        """``answered``, with ``exchange`` written (the message's, after its reply went out), then
        ``next_message``, then — when nothing is left — ``release``, as one step (issue 38, item 5): on
        PostgreSQL one statement that takes the chat's lock inside it (one round trip, one commit; the
        next message read and claimed after the lock, ``chat_next.CLAIM_AFTER_LOCK``: also one stored
        while the lock was waited for); on SQLite, whose ``WITH`` cannot write, the steps in turn in one
        transaction.

        Once, whatever the retries: the exchange is written only by the step whose mark changes the row
        (the message unanswered, its chat held by ``holder`` at ``generation``). A step tried again after
        its connection was lost — its commit having gone through — finds the message marked by
        ``holder`` already: it writes nothing, reports it marked, and claims again what the first
        claimed (or finds the chat let go). A mark refused (the chat changed hands) writes nothing either:
        the chat's new holder answers the message and writes its exchange. A stalled claimant's mark
        (``_MARKER``) writes its exchange and claims and releases nothing: the chat is its taker's."""
        if self._db.kind != "postgresql":
            step = (inbox_id, channel, chat_id, holder, generation, send_error)
            return await self._answered_then_next_in_turn(step, settle_s, history, exchange)
        chat = (channel, chat_id)
        mark = (0.0, send_error, inbox_id, *chat, holder, generation, holder)
        claim = (*chat, inbox_id, holder, generation, settle_s)
        read, read_params = history_sql("postgresql", history, channel, chat_id, "c.id IS NOT NULL")
        written, written_params = with_parts(exchange, only_if="done") if exchange else ("", [])
        due = exchange is not None and exchange.due is not None
        rows = await self._db.returning(
            _answered_then_next_sql(self._now, read, written, due),
            (
                *mark,
                inbox_id,
                holder,
                *written_params,
                *claim,
                0.0,
                *chat,
                holder,
                generation,
                0.0,
                *chat,
                *read_params,
            ),
        )
        return _after_answer(rows[0], generation, settle_s, exchange)

    async def _answered_then_next_in_turn(
        self,
        mark: tuple[int, str, str, str, int, str | None],
        settle_s: float,
        history: int,
        exchange: ExchangeWrite | None,
    ) -> AfterAnswer:
        """``answered_then_next`` on SQLite: the steps in turn, in one transaction; ``mark``: ``answered``'s
        arguments."""
        inbox_id, channel, chat_id, holder, generation, send_error = mark
        async with self._db.transaction():
            once = (0.0, send_error, inbox_id, channel, chat_id, holder, generation, holder)
            wrote = bool(await self._db.returning(f"{_mark_once_sql(self._now)} RETURNING 1", once))
            if not wrote and not await self._db.read(_MARKED_BEFORE, (inbox_id, holder)):
                return AfterAnswer(False)
            due_now = await run_in_transaction(self._db, exchange) if exchange and wrote else False
            following = await self.next_message(channel, chat_id, holder, settle_s, history, again=not wrote)
            if following is not None:
                return AfterAnswer(True, following, due_now=due_now, wrote=wrote)
            released = await self.release(channel, chat_id, holder)
        return AfterAnswer(True, None, released, due_now, wrote)

    async def release(self, channel: str, chat_id: str, holder: str) -> bool:
        """Let ``holder``'s hold on the chat go if, and only if, no message of it is unanswered — one
        statement, after the chat's lock on PostgreSQL: a message stored meanwhile keeps the hold (its
        holder answers it), or finds it released and is held by whoever stored it."""
        rows = await self._db.returning(
            f"UPDATE chat_holds SET holder = '', lease_until = {self._now} WHERE channel = ? AND chat_id = ? "
            "AND holder = ? AND NOT EXISTS (SELECT 1 FROM inbox WHERE channel = ? AND chat_id = ? "
            "AND answered_at IS NULL) RETURNING 1",
            (0.0, channel, chat_id, holder, channel, chat_id),
            chat_lock=f"{channel}:{chat_id}",
        )
        return bool(rows)

    async def renew(
        self, holder: str, chats: Sequence[tuple[str, str]], lease_s: float
    ) -> list[tuple[str, str]]:
        """Extend ``holder``'s leases on ``chats`` (the ones it is working) by ``lease_s`` seconds from now;
        the chats it still holds (a chat missing was taken over: its worker must stop)."""
        renewed: list[tuple[str, str]] = []
        for start in range(0, len(chats), 200):
            part = chats[start : start + 200]
            which = " OR ".join(["(channel = ? AND chat_id = ?)"] * len(part))
            rows = await self._db.returning(
                f"UPDATE chat_holds SET lease_until = {self._now} WHERE holder = ? AND ({which}) "
                "RETURNING channel, chat_id",
                (lease_s, holder, *[value for chat in part for value in chat]),
            )
            renewed += [(str(r[0]), str(r[1])) for r in rows]
        return renewed

    async def take_waiting(
        self,
        channels: Sequence[str],
        holder: str,
        lease_s: float,
        *,
        own: bool = False,
        every: bool = False,
        limit: int = 100,
    ) -> list[tuple[str, str, str | None]]:
        """Hold for ``holder`` the chats of ``channels`` with an unanswered message that no live hold
        covers: never held, released, or held by a replica whose lease ran out (it died or stalled; or a
        worker of ``holder``'s own stopped and its hold was not renewed); ``own``: also ``holder``'s live
        holds (a restart under a fixed replica id); ``every``: whatever the lease (a store one process
        owns, at start). Each take raises the hold's generation — but the periodic sweep's take of
        ``holder``'s own hold whose lease ran out (its renewals lapsed: a stall, the database away) keeps
        it: nobody held the chat in between, and a worker of ``holder``'s still answering it must not
        find its claim fenced off by its own replica. Returns (channel, chat_id, previous
        holder or None). On PostgreSQL the expired holds are locked ``FOR UPDATE SKIP LOCKED``: two
        replicas sweeping at once take disjoint chats; a chat never held is inserted with
        ``ON CONFLICT DO NOTHING``, so of two racing replicas one gets it."""
        if not channels:
            return []
        now = self._now
        if every:
            free, params = "1 = 1", []
        elif own:
            free, params = f"(h.lease_until < {now} OR h.holder IN ('', ?))", [0.0, holder]
        else:
            free, params = f"(h.lease_until < {now} OR h.holder = '')", [0.0]
        expired = (
            f"SELECT h.channel, h.chat_id, h.holder FROM chat_holds h WHERE h.channel IN ({marks(channels)}) "
            f"AND {free} AND EXISTS ({_UNANSWERED}) ORDER BY h.lease_until LIMIT ?"
        )
        taken: list[tuple[str, str, str | None]] = []
        # A plain read first: the sweep runs every second on every replica, and finds nothing mostly.
        if await self._db.read(expired, (*channels, *params, limit)):
            skip = " FOR UPDATE OF h SKIP LOCKED" if self._db.kind == "postgresql" else ""
            async with self._db.transaction():
                rows = await self._db.read(expired + skip, (*channels, *params, limit))
                for row in rows:
                    await self._db.write(
                        f"UPDATE chat_holds SET holder = ?, lease_until = {now}, generation = generation + "
                        "CASE WHEN holder = ? AND ? = 0 THEN 0 ELSE 1 END WHERE channel = ? AND chat_id = ?",
                        (holder, lease_s, holder, int(own or every), row[0], row[1]),
                    )
                    taken.append((str(row[0]), str(row[1]), str(row[2]) or None))
        return taken + await self._take_never_held(channels, holder, lease_s, limit)

    async def _take_never_held(
        self, channels: Sequence[str], holder: str, lease_s: float, limit: int
    ) -> list[tuple[str, str, str | None]]:
        """Hold the chats with an unanswered message and no hold row at all (their replica died between
        storing a message and taking the hold); of two replicas racing, the first insert wins."""
        never = await self._db.read(
            f"SELECT DISTINCT i.channel, i.chat_id FROM inbox i WHERE i.answered_at IS NULL "
            f"AND i.channel IN ({marks(channels)}) AND NOT EXISTS (SELECT 1 FROM chat_holds h "
            f"WHERE h.channel = i.channel AND h.chat_id = i.chat_id) LIMIT ?",
            (*channels, limit),
        )
        taken: list[tuple[str, str, str | None]] = []
        for channel, chat_id in never:
            inserted = await self._db.insert(
                "INSERT INTO chat_holds (channel, chat_id, holder, lease_until, generation) "
                f"VALUES (?, ?, ?, {self._now}, 1) ON CONFLICT(channel, chat_id) DO NOTHING RETURNING 1",
                (str(channel), str(chat_id), holder, lease_s),
            )
            if inserted is not None:
                taken.append((str(channel), str(chat_id), None))
        return taken

    async def drop(self, holder: str) -> int:
        """Release every hold of ``holder`` (it stops: another replica's sweep takes what is left)."""
        cur = await self._db.write(
            f"UPDATE chat_holds SET holder = '', lease_until = {self._now} WHERE holder = ?", (0.0, holder)
        )
        return int(cur.rowcount)

    async def prune(self, keep_s: float) -> int:
        """Forget the holds released, or run out, more than ``keep_s`` seconds ago on chats with nothing
        left to answer. Kept that long (48 h from ``gateway/inbox.py``) so a generation never repeats
        for a replica that could still wake up holding an older one."""
        cur = await self._db.write(
            f"DELETE FROM chat_holds WHERE lease_until < {self._now} AND NOT EXISTS (SELECT 1 FROM inbox i "
            "WHERE i.channel = chat_holds.channel AND i.chat_id = chat_holds.chat_id "
            "AND i.answered_at IS NULL)",
            (-keep_s,),
        )
        return int(cur.rowcount)

    async def all(self) -> list[tuple[str, str, str, str]]:
        """(channel, chat_id, holder, lease_until) of every hold held (for inspection and tests)."""
        rows = await self._db.read(
            "SELECT channel, chat_id, holder, lease_until FROM chat_holds WHERE holder <> '' "
            "ORDER BY channel, chat_id"
        )
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]
