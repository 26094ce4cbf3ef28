"""``ReminderDelivery``: due reminders sent once, on time, whatever restarts in between (README
"Reminders", docs/scale-out.md "Reminders").

Each process delivers the reminders of the channels it runs (a gateway: Telegram, Feishu; ``tierclaw
chat``: the terminal's). A round claims the reminders whose try time has come (``claim_due``: a lease in
the database, ``FOR UPDATE SKIP LOCKED`` and the server's clock on PostgreSQL), sends each through its
channel's ``send`` — the same path as a reply — and only after the platform accepted it marks it: a one-off
delivered, a repeat moved on to its next run, in the same statement, with the Tier 3 event of the day in the
same transaction. Right before the send the claim is given a full lease again, only while it is still this
gateway's at the generation it was claimed with (``extend``): a gateway that stalled past its lease and
wakes after another took the reminder over sends nothing and says so in one line (docs/scale-out.md,
"Fencing"). The claim is renewed the same way while its send goes on; another gateway takes over a dead
one's reminders once its lease runs out (so a reminder sent just before its gateway died may be sent
again: at least once, like replies). Between rounds the loop sleeps until the next try time it can see,
at most ``poll_every`` (other gateways' new reminders), and is woken at once by a reminder made here.

A failed send is tried again with backoff (``retry_base`` doubling to ``retry_cap``, ``max_attempts`` in
all); a refusal for good (``refusals.py``: bot blocked, chat gone) marks it failed with one log line. A
reminder found due longer ago than ``reminders.lateWithin`` (everything was down) is reported — status
``missed``, one log line, shown on the page and by ``/reminders`` — not sent; one due less long ago is sent
with "(late: due 09:00)".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from channels.base import Channel, OutboundMessage
from gateway.reminders import wording
from gateway.reminders.book import ReminderBook, row_repeat
from gateway.reminders.refusals import refused_for_good
from gateway.reminders.schedule import from_local_text, local_text, moment, next_run, shown, wall_clock
from memory.clock import from_db, to_db_fine, utcnow
from memory.engine import MemoryEngine
from memory.store.reminders import ReminderRow
from memory.text import tokenizer

log = logging.getLogger("tierclaw.gateway")

LATE_NOTE_AFTER = 60.0  # seconds after its due time a reminder says "(late: due …)"
STOP_WAIT = 10.0  # at a stop, how long the sends in flight may take to finish


@dataclass(slots=True)
class DeliverySettings:
    """How deliveries are paced; the defaults suit a person's gateway and the trials alike."""

    poll_every: float = 0.5  # the longest sleep between looks at the due reminders
    lease: float = 30.0  # a claim's lease, renewed every third of it while the send goes on
    batch: int = 50  # reminders claimed at once
    sends: int = 16  # sends in flight at once
    max_attempts: int = 8
    retry_base: float = 5.0
    retry_cap: float = 900.0


class ReminderDelivery:
    """The delivery loop of one process; ``start`` it on the running loop, ``stop`` it before the
    channels stop."""

    def __init__(
        self,
        engine: MemoryEngine,
        book: ReminderBook,
        channels: Mapping[str, Channel],
        replica: str,
        settings: DeliverySettings | None = None,
    ) -> None:
        self.engine = engine
        self.book = book
        self.rows = engine.store.reminders
        self.channels = dict(channels)
        self.replica = replica
        self.settings = settings or DeliverySettings()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self.sent = 0  # sends the platforms accepted (tests and the trial read it)

    def start(self) -> None:
        """Start delivering; reminders made through the book wake the loop at once."""
        if self._task is None and self.channels:
            self.book.on_added = self.wake
            self._task = asyncio.create_task(self._run(), name="reminder-delivery")

    def wake(self) -> None:
        """Look at the due reminders now (a reminder was just made or moved)."""
        self._wake.set()

    async def stop(self, *, hand_over: bool = True) -> None:
        """Stop the loop, let the sends in flight finish (a send cut off after the platform took it would
        be sent again), and with ``hand_over`` let go of this process's claims so another gateway may send
        them at once (False: as if killed — nothing waits, their leases run out)."""
        if self._task is not None:
            self._task.cancel()
        if hand_over and self._sending:
            await asyncio.wait(set(self._sending), timeout=STOP_WAIT)
        tasks = [t for t in (self._task, *self._sending) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._task = None
        if hand_over:
            with contextlib.suppress(Exception):
                await self.rows.release(self.replica)

    # ------------------------------------------------------------------ the loop

    async def _run(self) -> None:
        # jieba's dictionary loads on the first event of the day written: here, off the event loop, so a
        # send is never held between the platform's "ok" and its mark (where a long stall would let the
        # claim run out and another gateway send it again).
        with contextlib.suppress(Exception):
            await asyncio.to_thread(tokenizer.warm_up)
        failing = False
        me = asyncio.current_task()
        while True:
            if me is not None and me.cancelling():
                # A cancel that a library swallowed (Python 3.11's asyncio.wait_for; the PostgreSQL
                # pool's wait raises it now, ``_pooled``, but not every library's): stop all the same,
                # or ``stop``, awaiting this, waits forever.
                raise asyncio.CancelledError
            try:
                await self._round()
                if failing:
                    log.warning("[gateway] reminders: the database answers again; delivering")
                failing = False
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one line per outage, not one per round
                if not failing:
                    log.warning("[gateway] reminders: cannot read the due reminders: %s", type(exc).__name__)
                failing = True
                await self._sleep(1.0)

    async def _round(self) -> None:
        free = self.settings.sends - len(self._sending)
        if free <= 0:
            await asyncio.wait(set(self._sending), return_when=asyncio.FIRST_COMPLETED)
            return
        now = utcnow()
        lease = self.settings.lease
        rows, db_now = await self.rows.claim_due(
            self.replica,
            sorted(self.channels),
            to_db_fine(now),
            to_db_fine(now + timedelta(seconds=lease)),
            lease,
            min(free, self.settings.batch),
        )
        for row in rows:
            task = asyncio.create_task(self._deliver(row, from_db(db_now)), name=f"reminder-{row.id}")
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        if rows:
            return
        wait = await self.rows.next_try(sorted(self.channels), to_db_fine(utcnow()))
        await self._sleep(
            self.settings.poll_every if wait is None else min(max(wait, 0.0), self.settings.poll_every)
        )

    async def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            # asyncio.timeout, not wait_for: 3.11's wait_for can turn a cancel that comes with its own
            # timeout into a TimeoutError, which this sleep would swallow
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await self._wake.wait()
        self._wake.clear()

    # ------------------------------------------------------------------ one reminder

    async def _deliver(self, row: ReminderRow, db_now: datetime) -> None:
        try:
            zone = ZoneInfo(row.zone)
        except (ValueError, KeyError):
            zone = self.book.default_zone
        rule = row_repeat(row)
        local = from_local_text(row.local_at)
        late = (db_now - from_db(row.due_at)).total_seconds()
        after_now = next_run(rule, local, zone, after=db_now) if rule else None
        if late > self.book.settings.late_within:
            await self._missed(row, late, after_now, zone)
            return
        now_local = wall_clock(db_now, zone)
        late_due = shown(local, zone) if late > LATE_NOTE_AFTER else None
        text = wording.delivered_text(row.text, row.lang, late_due, now_local)
        if not await self._retry(lambda: self._extend(row)):  # the fence, right before the send
            log.warning(
                "[gateway] reminder %d: taken over by another gateway while this one stalled past its "
                "lease; not sent here",
                row.id,
            )
            return
        me = asyncio.current_task()
        if me is not None and me.cancelling():  # stopping: a cancel swallowed under the fence (3.11)
            raise asyncio.CancelledError
        keeper = asyncio.create_task(self._keep_claim(row))
        try:
            channel = self.channels[row.channel]
            await channel.send(OutboundMessage(row.channel, row.chat_id, text))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._failed(row, exc, after_now, zone)
            return
        finally:
            keeper.cancel()
        following = next_run(rule, local, zone, after=utcnow()) if rule else None
        await self._mark_sent(row, following, zone, now_local)

    async def _extend(self, row: ReminderRow) -> bool:
        """A full lease for the claim, if it is still this gateway's at its generation."""
        lease = self.settings.lease
        until = to_db_fine(utcnow() + timedelta(seconds=lease))
        return await self.rows.extend(row.id, self.replica, row.generation, until, lease)

    async def _keep_claim(self, row: ReminderRow) -> None:
        while True:
            await asyncio.sleep(self.settings.lease / 3)
            with contextlib.suppress(Exception):  # a lost renewal shows when the send is marked
                await self._extend(row)

    async def _mark_sent(
        self, row: ReminderRow, following: datetime | None, zone: ZoneInfo, now_local: datetime
    ) -> None:
        """Delivered (or on to the next run) and the day's event, together; the event never costs the
        mark: without it the send is marked alone."""
        run = (local_text(following), to_db_fine(moment(following, zone))) if following else None
        sent_at = to_db_fine(utcnow())
        summary = wording.words(row.lang)["event"].format(text=row.text)
        try:
            async with self.engine.store.transaction():
                marked = await self.rows.sent(row.id, self.replica, row.generation, sent_at, run)
                if marked:
                    await self.engine.events.add(
                        row.owner,
                        summary,
                        event_date=now_local.date(),
                        channel=row.channel,
                        source_ref=f"reminder:{row.id}",
                    )
        except Exception as exc:
            log.warning(
                "[gateway] reminder %d: the event of the day was not written (%s)", row.id, type(exc).__name__
            )
            marked = await self._retry(
                lambda: self.rows.sent(row.id, self.replica, row.generation, sent_at, run)
            )
        if marked:
            self.sent += 1
            log.info("[gateway] reminder %d sent to %s:%s", row.id, row.channel, row.chat_id)
        else:
            log.warning("[gateway] reminder %d was taken over by another gateway while sending", row.id)

    async def _failed(
        self, row: ReminderRow, exc: Exception, after_now: datetime | None, zone: ZoneInfo
    ) -> None:
        now = utcnow()
        reason = refused_for_good(exc)
        attempts = row.attempts + 1
        error = f"{type(exc).__name__}: {exc}"[:300]
        if reason is not None or attempts >= self.settings.max_attempts:
            run = None
            if reason is None and after_now is not None:  # a repeat that keeps failing: on to the next run
                run = (local_text(after_now), to_db_fine(moment(after_now, zone)))
            why = reason or f"gave up after {attempts} tries: {error}"
            if await self.rows.give_up(
                row.id, self.replica, row.generation, "failed", why[:300], to_db_fine(now), run
            ):
                log.warning(
                    "[gateway] reminder %d for %s:%s could not be delivered: %s; marked failed",
                    row.id,
                    row.channel,
                    row.chat_id,
                    why,
                )
            return
        pause = min(self.settings.retry_base * 2 ** (attempts - 1), self.settings.retry_cap)
        try_at = to_db_fine(now + timedelta(seconds=pause))
        await self._retry(
            lambda: self.rows.retry_later(
                row.id, self.replica, row.generation, attempts, try_at, error, to_db_fine(now)
            )
        )
        log.info("[gateway] reminder %d: sending failed (%s); trying again in %.0f s", row.id, error, pause)

    async def _missed(
        self, row: ReminderRow, late: float, after_now: datetime | None, zone: ZoneInfo
    ) -> None:
        run = (local_text(after_now), to_db_fine(moment(after_now, zone))) if after_now else None
        why = f"due {row.local_at} {row.zone}, {late / 3600:.1f} h before it could be sent"
        if await self.rows.give_up(
            row.id, self.replica, row.generation, "missed", why, to_db_fine(utcnow()), run
        ):
            log.warning(
                "[gateway] reminder %d of %s was due %s %s, %.1f h ago (more than reminders.lateWithin): "
                "reported, not sent%s",
                row.id,
                row.owner,
                row.local_at,
                row.zone,
                late / 3600,
                f"; next run {local_text(after_now)}" if after_now else "",
            )

    async def _retry(self, step: Callable[[], Awaitable[bool]]) -> bool:
        """A marking step tried until the database takes it (within one lease)."""
        pause, waited = 0.2, 0.0
        while True:
            try:
                return bool(await step())
            except asyncio.CancelledError:
                raise
            except Exception:
                if waited >= self.settings.lease:
                    return False
                await asyncio.sleep(pause)
                waited += pause
                pause = min(pause * 2, 5.0)
