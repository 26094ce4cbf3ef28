"""The SQL of reminders (``reminders``) and each person's time zone (``person_zones``): README "Reminders".

A reminder keeps the wall-clock time the person meant (``local_at`` in ``zone``) beside the moment it
falls due (``due_at``, UTC) and the moment its next send may be tried (``try_at``: ``due_at``, or later
after a failed send). Delivery is a lease like the other background work (``work_claims.py``): a gateway
claims due reminders of its channels (``claimed_by``, ``lease_until``), sends each, and then marks it —
delivered, moved on to its next run (a repeat, in the same statement), put back for a later try, or
failed — only while its claim still stands, so a reminder taken over by another gateway is marked once.

Whose clock. On PostgreSQL several gateways share the rows, so "now" is the server's
(``clock_timestamp()``) in every due and lease comparison, and the claim returns it; the ``now`` the
caller passes is then unused. On SQLite one machine runs everything and the caller's ``now`` is used.
Times are stored as ``memory.clock.to_db_fine`` text (UTC, microseconds), which sorts as time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.store.sql import Row, SqlDatabase, marks

PENDING, DELIVERED, FAILED, MISSED, CANCELLED = "pending", "delivered", "failed", "missed", "cancelled"
STATUSES = (PENDING, DELIVERED, FAILED, MISSED, CANCELLED)
# The server's clock on PostgreSQL, in the stored text form (to_db_fine).
_PG_TEXT = "to_char(({}) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"
_PG_NOW = _PG_TEXT.format("clock_timestamp()")
_PG_LATER = _PG_TEXT.format("clock_timestamp() + ? * interval '1 second'")

COLUMNS = (
    "id, owner, channel, chat_id, text, said, lang, zone, local_at, repeat, due_at, try_at, status, "
    "attempts, sent_count, claimed_by, lease_until, last_sent_at, last_error, created_at, updated_at"
)


@dataclass(slots=True, frozen=True)
class ReminderRow:
    """One reminder as stored (``COLUMNS``)."""

    id: int
    owner: str
    channel: str
    chat_id: str
    text: str
    said: str
    lang: str
    zone: str
    local_at: str  # "YYYY-MM-DD HH:MM" in ``zone``: the wall-clock time of the next (or last) run
    repeat: str  # "" one-off; "daily", "weekdays", "weekly:mon,thu", "monthly:5"
    due_at: str
    try_at: str
    status: str
    attempts: int
    sent_count: int
    claimed_by: str | None
    lease_until: str | None
    last_sent_at: str | None
    last_error: str | None
    created_at: str
    updated_at: str


@dataclass(slots=True, frozen=True)
class NewReminder:
    """What a new reminder holds (its id, status and bookkeeping start empty)."""

    owner: str
    channel: str
    chat_id: str
    text: str
    said: str
    lang: str
    zone: str
    local_at: str
    repeat: str
    due_at: str


def _row(r: Row) -> ReminderRow:
    owner, channel, chat_id, text, said, lang, zone, local_at, repeat, due_at, try_at, status = (
        str(v) for v in r[1:13]
    )
    return ReminderRow(
        id=int(r[0]),
        owner=owner,
        channel=channel,
        chat_id=chat_id,
        text=text,
        said=said,
        lang=lang,
        zone=zone,
        local_at=local_at,
        repeat=repeat,
        due_at=due_at,
        try_at=try_at,
        status=status,
        attempts=int(r[13]),
        sent_count=int(r[14]),
        claimed_by=r[15],
        lease_until=r[16],
        last_sent_at=r[17],
        last_error=r[18],
        created_at=str(r[19]),
        updated_at=str(r[20]),
    )


class ReminderRows:
    """``reminders`` and ``person_zones``; see the module docstring."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    def _now(self, now: str) -> tuple[str, tuple[str, ...]]:
        """The SQL for "now" and its parameters: the server's clock on PostgreSQL, else ``now``."""
        return (_PG_NOW, ()) if self._db.kind == "postgresql" else ("?", (now,))

    def _later(self, now_later: str, seconds: float) -> tuple[str, tuple[object, ...]]:
        """The SQL for "now + seconds" (a lease's end): the server's on PostgreSQL, else ``now_later``."""
        return (_PG_LATER, (seconds,)) if self._db.kind == "postgresql" else ("?", (now_later,))

    # ------------------------------------------------------------------ the person's side

    async def add(self, new: NewReminder, now: str, cap: int) -> int | None:
        """Store a pending reminder unless the owner already has ``cap`` pending ones; its id, or None
        when the cap is reached (nothing stored)."""
        return await self._db.insert(
            "INSERT INTO reminders (owner, channel, chat_id, text, said, lang, zone, local_at, repeat, "
            "due_at, try_at, created_at, updated_at) "
            "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
            "WHERE (SELECT COUNT(*) FROM reminders WHERE owner = ? AND status = 'pending') < ? RETURNING id",
            (
                new.owner, new.channel, new.chat_id, new.text, new.said, new.lang, new.zone, new.local_at,
                new.repeat, new.due_at, new.due_at, now, now, new.owner, cap,
            ),
        )  # fmt: skip

    async def restore(self, row: ReminderRow) -> int | None:
        """Put back an exported reminder under a new id (unclaimed); None when an identical one (same
        owner, chat, text and time) is already there, so importing twice adds nothing."""
        return await self._db.insert(
            "INSERT INTO reminders (owner, channel, chat_id, text, said, lang, zone, local_at, repeat, "
            "due_at, try_at, status, attempts, sent_count, last_sent_at, last_error, created_at, "
            "updated_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
            "(SELECT 1 FROM reminders WHERE owner = ? AND channel = ? AND chat_id = ? AND text = ? "
            "AND local_at = ?) RETURNING id",
            (
                row.owner, row.channel, row.chat_id, row.text, row.said, row.lang, row.zone, row.local_at,
                row.repeat, row.due_at, row.try_at, row.status, row.attempts, row.sent_count,
                row.last_sent_at, row.last_error, row.created_at, row.updated_at,
                row.owner, row.channel, row.chat_id, row.text, row.local_at,
            ),
        )  # fmt: skip

    async def get(self, owner: str, reminder_id: int) -> ReminderRow | None:
        """One of the owner's reminders (another owner's id is None, like one that does not exist)."""
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM reminders WHERE owner = ? AND id = ?", (owner, reminder_id)
        )
        return _row(rows[0]) if rows else None

    async def of_owner(
        self, owner: str, statuses: Sequence[str] = STATUSES, limit: int = 1000
    ) -> list[ReminderRow]:
        """The owner's reminders in these states, pending ones by due time, the rest newest first."""
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM reminders WHERE owner = ? AND status IN ({marks(statuses)}) "
            "ORDER BY CASE WHEN status = 'pending' THEN 0 ELSE 1 END, "
            "CASE WHEN status = 'pending' THEN due_at ELSE '' END, updated_at DESC, id DESC LIMIT ?",
            (owner, *statuses, limit),
        )
        return [_row(r) for r in rows]

    async def count(self, owner: str | None = None, status: str | None = None) -> int:
        """How many reminders (of an owner, in a state)."""
        where, params = [], []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if status is not None:
            where.append("status = ?")
            params.append(status)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return await self._db.scalar(f"SELECT COUNT(*) FROM reminders{clause}", params)

    async def counts_by_owner(self) -> dict[str, dict[str, int]]:
        """{owner: {status: count}} for every owner with reminders."""
        out: dict[str, dict[str, int]] = {}
        for owner, status, n in await self._db.read(
            "SELECT owner, status, COUNT(*) FROM reminders GROUP BY owner, status"
        ):
            out.setdefault(str(owner), {})[str(status)] = int(n)
        return out

    async def cancel(self, owner: str, reminder_id: int, now: str) -> bool:
        """Cancel one of the owner's pending reminders (kept, shown as cancelled); False when there is
        no such pending reminder."""
        cur = await self._db.write(
            "UPDATE reminders SET status = 'cancelled', claimed_by = NULL, lease_until = NULL, "
            "updated_at = ? WHERE owner = ? AND id = ? AND status = 'pending'",
            (now, owner, reminder_id),
        )
        return cur.rowcount > 0

    async def purge(self, owner: str, reminder_id: int) -> bool:
        """Delete one of the owner's reminders for good; False when there was none."""
        cur = await self._db.write("DELETE FROM reminders WHERE owner = ? AND id = ?", (owner, reminder_id))
        return cur.rowcount > 0

    async def latest_chat(self, owner: str) -> tuple[str, str] | None:
        """(channel, chat id) the owner last talked in (their newest kept turn or reminder), or None."""
        rows = await self._db.read(
            "SELECT channel, chat_id, created_at FROM conversation_turns WHERE owner = ? "
            "UNION ALL SELECT channel, chat_id, created_at FROM reminders WHERE owner = ? "
            "ORDER BY created_at DESC LIMIT 1",
            (owner, owner),
        )
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    # ------------------------------------------------------------------ delivery

    async def claim_due(
        self,
        replica: str,
        channels: Sequence[str],
        now: str,
        lease_until: str,
        lease_s: float,
        limit: int = 50,
    ) -> tuple[list[ReminderRow], str]:
        """Take up to ``limit`` pending reminders of ``channels`` whose try time has come and that no
        live claim holds, for ``replica``; (them, oldest try first; the database's now). On SQLite
        ``now`` and ``lease_until`` are used, on PostgreSQL the server's clock and ``lease_s``."""
        if not channels:
            return [], now
        clock, clock_args = self._now(now)
        until, until_args = self._later(lease_until, lease_s)
        due = (
            f"FROM reminders WHERE status = 'pending' AND try_at <= {clock} "
            f"AND channel IN ({marks(channels)}) AND (claimed_by IS NULL OR lease_until < {clock})"
        )
        due_args = (*clock_args, *channels, *clock_args)
        probe = await self._db.read(
            f"SELECT {clock} AS now, EXISTS (SELECT 1 {due})", (*clock_args, *due_args)
        )
        db_now = str(probe[0][0])
        if not probe[0][1]:
            return [], db_now  # the usual answer, without a transaction (SQLite's write lock) every poll
        skip = " FOR UPDATE SKIP LOCKED" if self._db.kind == "postgresql" else ""
        async with self._db.transaction():
            ids = [
                int(r[0])
                for r in await self._db.read(
                    f"SELECT id {due} ORDER BY try_at, id LIMIT ?{skip}", (*due_args, limit)
                )
            ]
            if not ids:
                return [], db_now
            rows = await self._db.read(
                f"UPDATE reminders SET claimed_by = ?, lease_until = {until} WHERE id IN ({marks(ids)}) "
                f"RETURNING {COLUMNS}",
                (replica, *until_args, *ids),
            )
        return sorted((_row(r) for r in rows), key=lambda r: (r.try_at, r.id)), db_now

    async def renew(self, replica: str, ids: Sequence[int], lease_until: str, lease_s: float) -> int:
        """Extend ``replica``'s claims on reminders it is still sending; how many it still held."""
        if not ids:
            return 0
        until, until_args = self._later(lease_until, lease_s)
        cur = await self._db.write(
            f"UPDATE reminders SET lease_until = {until} WHERE claimed_by = ? AND status = 'pending' "
            f"AND id IN ({marks(ids)})",
            (*until_args, replica, *ids),
        )
        return cur.rowcount

    async def sent(
        self, reminder_id: int, replica: str, sent_at: str, next_run: tuple[str, str] | None
    ) -> bool:
        """The platform accepted ``replica``'s send: a one-off is delivered; a repeat moves on to its
        next run (``next_run``: its local time and its UTC due time), in the same statement. False when
        the claim was lost meanwhile (another gateway took the reminder over: it marks it)."""
        if next_run is None:
            cur = await self._db.write(
                "UPDATE reminders SET status = 'delivered', claimed_by = NULL, lease_until = NULL, "
                "sent_count = sent_count + 1, last_sent_at = ?, last_error = NULL, updated_at = ? "
                "WHERE id = ? AND claimed_by = ? AND status = 'pending'",
                (sent_at, sent_at, reminder_id, replica),
            )
        else:
            local_at, due_at = next_run
            cur = await self._db.write(
                "UPDATE reminders SET local_at = ?, due_at = ?, try_at = ?, attempts = 0, claimed_by = NULL, "
                "lease_until = NULL, sent_count = sent_count + 1, last_sent_at = ?, last_error = NULL, "
                "updated_at = ? WHERE id = ? AND claimed_by = ? AND status = 'pending'",
                (local_at, due_at, due_at, sent_at, sent_at, reminder_id, replica),
            )
        return cur.rowcount > 0

    async def retry_later(
        self, reminder_id: int, replica: str, attempts: int, try_at: str, error: str, now: str
    ) -> bool:
        """A send failed and will be tried again at ``try_at``; the claim is let go. False when the claim
        was lost meanwhile."""
        cur = await self._db.write(
            "UPDATE reminders SET attempts = ?, try_at = ?, last_error = ?, claimed_by = NULL, "
            "lease_until = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND status = 'pending'",
            (attempts, try_at, error, now, reminder_id, replica),
        )
        return cur.rowcount > 0

    async def give_up(
        self,
        reminder_id: int,
        replica: str,
        status: str,
        error: str,
        now: str,
        next_run: tuple[str, str] | None = None,
    ) -> bool:
        """This run will not be sent: refused for good by the platform (``failed``) or due too long ago
        (``missed``). A one-off takes that state; a repeat records why and moves on to ``next_run``."""
        if next_run is None:
            cur = await self._db.write(
                "UPDATE reminders SET status = ?, last_error = ?, claimed_by = NULL, lease_until = NULL, "
                "updated_at = ? WHERE id = ? AND claimed_by = ? AND status = 'pending'",
                (status, error, now, reminder_id, replica),
            )
        else:
            local_at, due_at = next_run
            cur = await self._db.write(
                "UPDATE reminders SET local_at = ?, due_at = ?, try_at = ?, attempts = 0, last_error = ?, "
                "claimed_by = NULL, lease_until = NULL, updated_at = ? "
                "WHERE id = ? AND claimed_by = ? AND status = 'pending'",
                (local_at, due_at, due_at, error, now, reminder_id, replica),
            )
        return cur.rowcount > 0

    async def release(self, replica: str) -> int:
        """Let go of every claim ``replica`` holds (a stop): another gateway may send them at once."""
        cur = await self._db.write(
            "UPDATE reminders SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ? "
            "AND status = 'pending'",
            (replica,),
        )
        return cur.rowcount

    async def next_try(self, channels: Sequence[str], now: str) -> float | None:
        """Seconds from the database's now until the earliest pending try of ``channels`` (≤ 0 when one
        is due; a claimed one counts from its lease's end), or None when nothing is pending."""
        if not channels:
            return None
        clock, clock_args = self._now(now)
        # A reminder another gateway is sending counts from when its claim runs out, not from its try.
        rows = await self._db.read(
            f"SELECT MIN(CASE WHEN claimed_by IS NOT NULL AND lease_until >= {clock} THEN lease_until "
            f"ELSE try_at END), {clock} FROM reminders WHERE status = 'pending' "
            f"AND channel IN ({marks(channels)})",
            (*clock_args, *clock_args, *channels),
        )
        if not rows or rows[0][0] is None:
            return None
        return (
            datetime.fromisoformat(str(rows[0][0])) - datetime.fromisoformat(str(rows[0][1]))
        ).total_seconds()

    # ------------------------------------------------------------------ time zones

    async def zone(self, owner: str) -> str | None:
        """The owner's time zone, when they set or confirmed one."""
        rows = await self._db.read("SELECT zone FROM person_zones WHERE owner = ?", (owner,))
        return str(rows[0][0]) if rows else None

    async def set_zone(self, owner: str, zone: str, at: str) -> None:
        """Set (or replace) the owner's time zone."""
        await self._db.write(
            "INSERT INTO person_zones (owner, zone, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(owner) DO UPDATE SET zone = excluded.zone, updated_at = excluded.updated_at",
            (owner, zone, at),
        )

    async def move_pending(self, owner: str, moves: Sequence[tuple[int, str, str]], now: str) -> int:
        """Give pending reminders of the owner a new zone's local time: ``moves`` is (id, zone, due_at)
        — after ``/timezone``, the wall-clock time stays and the moment changes."""
        changed = 0
        for reminder_id, zone, due_at in moves:
            cur = await self._db.write(
                "UPDATE reminders SET zone = ?, due_at = ?, try_at = ?, updated_at = ? "
                "WHERE owner = ? AND id = ? AND status = 'pending'",
                (zone, due_at, due_at, now, owner, reminder_id),
            )
            changed += cur.rowcount
        return changed


class ReminderRowsAPI(Protocol):
    """What ``MemoryStore.reminders`` offers (``memory/store/protocol.py``): ``ReminderRows`` below."""

    async def add(self, new: NewReminder, now: str, cap: int) -> int | None: ...
    async def restore(self, row: ReminderRow) -> int | None: ...
    async def get(self, owner: str, reminder_id: int) -> ReminderRow | None: ...
    async def of_owner(
        self, owner: str, statuses: Sequence[str] = ..., limit: int = 1000
    ) -> list[ReminderRow]: ...
    async def count(self, owner: str | None = None, status: str | None = None) -> int: ...
    async def counts_by_owner(self) -> dict[str, dict[str, int]]: ...
    async def cancel(self, owner: str, reminder_id: int, now: str) -> bool: ...
    async def purge(self, owner: str, reminder_id: int) -> bool: ...
    async def latest_chat(self, owner: str) -> tuple[str, str] | None: ...
    async def claim_due(
        self,
        replica: str,
        channels: Sequence[str],
        now: str,
        lease_until: str,
        lease_s: float,
        limit: int = 50,
    ) -> tuple[list[ReminderRow], str]: ...
    async def renew(self, replica: str, ids: Sequence[int], lease_until: str, lease_s: float) -> int: ...
    async def sent(
        self, reminder_id: int, replica: str, sent_at: str, next_run: tuple[str, str] | None
    ) -> bool: ...
    async def retry_later(
        self, reminder_id: int, replica: str, attempts: int, try_at: str, error: str, now: str
    ) -> bool: ...
    async def give_up(
        self,
        reminder_id: int,
        replica: str,
        status: str,
        error: str,
        now: str,
        next_run: tuple[str, str] | None = None,
    ) -> bool: ...
    async def release(self, replica: str) -> int: ...
    async def next_try(self, channels: Sequence[str], now: str) -> float | None: ...
    async def zone(self, owner: str) -> str | None: ...
    async def set_zone(self, owner: str, zone: str, at: str) -> None: ...
    async def move_pending(self, owner: str, moves: Sequence[tuple[int, str, str]], now: str) -> int: ...
