"""``ReminderBook``: the one way reminders are made, listed and cancelled, and time zones set — by the
model's tools, the offline stand-in, the chat commands, ``tierclaw reminders`` and the memory page.

A request is checked whole before anything is stored (README "Reminders", issue 36 item 5): a time that
passed, a date that does not exist, a day of the month that could be two months, no time, no text, a
text over ``reminders.maxTextChars``, a time more than ``MAX_YEARS`` ahead, an unknown repeat rule, a
person who already has ``reminders.maxPerPerson`` waiting — each is a ``Refused`` with the reason's key
in ``wording.py``, and nothing is written. A reminder is one INSERT (the cap is checked in it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from gateway.reminders import wording
from gateway.reminders.parsing import language, parse_request, parse_when
from gateway.reminders.schedule import Repeat, first_run, local_text, moment, parse_repeat, shown
from gateway.reminders.when import Due, Problem
from gateway.reminders.zones import find_zone, zone_name
from memory.clock import to_db, to_db_fine, utcnow
from memory.store.protocol import MemoryStore
from memory.store.reminders import CANCELLED, PENDING, NewReminder, ReminderRow

log = logging.getLogger("tierclaw.gateway")

MAX_YEARS = 10


@dataclass(slots=True)
class ReminderSettings:
    """``reminders`` in the config."""

    max_per_person: int = 200
    max_text_chars: int = 1000
    late_within: float = 12 * 3600.0  # seconds: a reminder due longer ago than this is reported, not sent


@dataclass(frozen=True, slots=True)
class Created:
    """A stored reminder and what to tell the person ("I'll remind you Sat 28 Nov 09:00: …")."""

    id: int
    text: str
    local: datetime  # when it rings, the person's wall clock
    repeat: Repeat | None
    zone: str
    said: str  # the sentence to say


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing stored: ``reason`` is a key of the wording tables, ``said`` the sentence to say."""

    reason: str
    said: str


class ReminderBook:
    """Reminders and time zones of everyone, on the store's ``reminders`` part."""

    def __init__(
        self,
        store: MemoryStore,
        settings: ReminderSettings | None = None,
        default_zone: tzinfo | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.rows = store.reminders
        self.settings = settings or ReminderSettings()
        self.default_zone = ZoneInfo(zone_name(default_zone)) if default_zone is not None else ZoneInfo("UTC")
        self.clock = clock  # now, UTC (tests pass a fixed one)
        self.on_added: Callable[[], None] | None = None  # wakes this process's delivery (delivery.py)

    # ------------------------------------------------------------------ time zones

    async def zone(self, owner: str) -> tuple[ZoneInfo, bool]:
        """The owner's zone and whether they set it (False: the default)."""
        name = await self.rows.zone(owner)
        if name:
            try:
                return ZoneInfo(name), True
            except (ValueError, KeyError):  # a zone this machine's tzdata lacks: the default, said so
                log.warning("[gateway] unknown stored time zone %r for %s; using the default", name, owner)
        return self.default_zone, False

    async def set_zone(self, owner: str, name: str) -> ZoneInfo | None:
        """Set the owner's zone from what they wrote (``zones.find_zone``); None when it names none.
        Their waiting reminders keep their wall-clock time in the new zone."""
        zone = find_zone(name)
        if zone is None:
            return None
        now = self.clock()
        moves = []
        for row in await self.rows.of_owner(owner, (PENDING,)):
            local = datetime.strptime(row.local_at, "%Y-%m-%d %H:%M")
            due = moment(local, zone)
            if due > now:
                moves.append((row.id, zone_name(zone), to_db_fine(due)))
        await self.rows.set_zone(owner, zone_name(zone), to_db(now))
        await self.rows.move_pending(owner, moves, to_db_fine(now))
        if moves and self.on_added is not None:
            self.on_added()
        return zone

    async def now_local(self, owner: str) -> tuple[datetime, ZoneInfo, bool]:
        """The owner's wall clock now, their zone, and whether they set it."""
        zone, confirmed = await self.zone(owner)
        return self.clock().astimezone(zone).replace(tzinfo=None), zone, confirmed

    # ------------------------------------------------------------------ making one

    async def create(
        self,
        owner: str,
        channel: str,
        chat_id: str,
        *,
        said: str = "",
        text: str = "",
        when: str = "",
        repeat: str = "",
    ) -> Created | Refused:
        """A reminder from the person's whole sentence (``said``) or from its parts (``text`` + ``when``
        [+ ``repeat``], the model's tool); everything checked before the one INSERT."""
        lang = language(said or text or when)
        w = wording.words(lang)
        now_local, zone, confirmed = await self.now_local(owner)
        read = _read(said, text, when, repeat, now_local, zone)
        if read is None:
            return Refused("bad_repeat", w["bad_repeat"])
        due, text = read
        refused = self._check(due, text, lang, now_local)
        if refused is not None:
            return refused
        assert isinstance(due, Due)
        new = NewReminder(
            owner=owner,
            channel=channel,
            chat_id=chat_id,
            text=text,
            said=(said or f"{when} {text}").strip()[: self.settings.max_text_chars * 2],
            lang=lang,
            zone=zone_name(zone),
            local_at=local_text(due.local),
            repeat=str(due.repeat) if due.repeat else "",
            due_at=to_db_fine(moment(due.local, zone)),
        )
        try:
            reminder_id = await self.rows.add(new, to_db_fine(self.clock()), self.settings.max_per_person)
        except Exception as exc:
            log.error("[gateway] storing a reminder for %s failed: %s", owner, type(exc).__name__)
            return Refused("unavailable", w["unavailable"])
        if reminder_id is None:
            return Refused("too_many", w["too_many"].format(limit=self.settings.max_per_person))
        if self.on_added is not None:
            self.on_added()
        sentence = w["scheduled"].format(
            when=wording.when_text(due.shown, due.repeat, lang, now_local), text=text
        )
        if not confirmed:
            sentence += w["zone_note"].format(zone=zone_name(zone))
        log.info("[gateway] reminder %d for %s at %s %s", reminder_id, owner, new.local_at, new.zone)
        return Created(reminder_id, text, due.shown, due.repeat, zone_name(zone), sentence)

    def _check(self, due: Due | Problem, text: str, lang: str, now_local: datetime) -> Refused | None:
        w = wording.words(lang)
        limit = self.settings.max_text_chars
        if len(text) > limit:
            return Refused("too_long", w["too_long"].format(chars=len(text), limit=limit))
        if isinstance(due, Problem):
            if due.kind == "ambiguous":
                if due.hint is None:
                    return Refused("ambiguous", w["ambiguous_plain"])
                hint = (
                    f"{due.hint.month}月{due.hint.day}日" if lang == "zh" else f"{due.hint.day} {due.hint:%B}"
                )
                return Refused("ambiguous", w["ambiguous"].format(hint=hint))
            return Refused(due.kind, w[due.kind])
        if not text:
            return Refused("no_text", w["no_text"])
        if due.local - now_local > timedelta(days=365 * MAX_YEARS):
            return Refused("too_far", w["too_far"].format(years=MAX_YEARS))
        return None

    # ------------------------------------------------------------------ reading and cancelling

    async def waiting(self, owner: str) -> list[ReminderRow]:
        """The owner's pending reminders, soonest first."""
        return await self.rows.of_owner(owner, (PENDING,))

    async def not_delivered(self, owner: str, limit: int = 20) -> list[ReminderRow]:
        """The owner's reminders that failed or were missed, newest first."""
        return await self.rows.of_owner(owner, ("failed", "missed"), limit=limit)

    async def cancel(self, owner: str, reminder_id: int) -> ReminderRow | None:
        """Cancel one of the owner's waiting reminders; the row as it was, or None when there is none."""
        row = await self.rows.get(owner, reminder_id)
        if row is None or row.status != PENDING:
            return None
        if not await self.rows.cancel(owner, reminder_id, to_db_fine(self.clock())):
            return None
        log.info("[gateway] reminder %d of %s cancelled", reminder_id, owner)
        return row

    async def forget(self, owner: str, reminder_id: int) -> bool:
        """Delete one of the owner's reminders for good."""
        return await self.rows.purge(owner, reminder_id)


def _read(
    said: str, text: str, when: str, repeat: str, now_local: datetime, zone: ZoneInfo
) -> tuple[Due | Problem, str] | None:
    """The first run and the text of a request, from the whole sentence or its parts; None when
    ``repeat`` is not a rule."""
    if said:
        request = parse_request(said, now_local, zone)
        due: Due | Problem = request.due
        text = text or request.text
    else:
        due = parse_when(when, now_local, zone) if when.strip() else Problem("no_time")
    if repeat.strip() and isinstance(due, Due):
        try:
            rule = parse_repeat(repeat)
        except ValueError:
            return None
        if rule is not None:
            due = _repeated(due, rule, now_local, zone)
    return due, " ".join(text.split())


def _repeated(due: Due, rule: Repeat, now_local: datetime, zone: ZoneInfo) -> Due:
    """A one-off's clock time made into a repeat's first run (the model's ``repeat`` argument)."""
    local = first_run(rule, due.local.time(), now_local, zone)
    return Due(local, shown(local, zone), rule)


def local_of(row: ReminderRow) -> datetime:
    """A stored reminder's next run as its zone's wall clock shows it."""
    zone = ZoneInfo(row.zone)
    return shown(datetime.strptime(row.local_at, "%Y-%m-%d %H:%M"), zone)


def row_repeat(row: ReminderRow) -> Repeat | None:
    """A stored reminder's repeat rule (None for a one-off or a rule this version does not know)."""
    try:
        return parse_repeat(row.repeat)
    except ValueError:
        return None


__all__ = ["CANCELLED", "Created", "Refused", "ReminderBook", "ReminderSettings", "local_of", "row_repeat"]
