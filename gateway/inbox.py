"""The durable inbox: a message is stored in the database before the platform is told it arrived, and
marked answered when it has been (docs/architecture.md, "The path of one message").

A crash — even kill -9 — with a backlog loses nothing: the platform was only told about messages that
were stored, and at the next start the unanswered ones are answered first, each chat in order. A message
the platform delivers again after a crash (its update or event id already stored) is answered once.

With several gateways on one database (docs/scale-out.md, "The message path") the inbox is the queue:
whichever replica stored a message, the replica holding its chat (``hold``, leased for ``lease`` and
renewed while it works the chat) claims the chat's messages in the platform's order (``next_message``)
and drops the hold only when none is left (``release``); chats with waiting messages and no live hold
(their replica died) are taken over by any replica (``take_waiting``). A claim carries the hold's
generation: the reply is sent only after ``fence`` found it current (a read, or no statement at all
while the claim is fresh), and ``answered`` marks it only while it still is — a replica that stalled
past its lease and woke after a takeover sends nothing (docs/scale-out.md, "Fencing"). The claim is the
reply's send intent: a message claimed by a replica that died unmarked may have been answered, and is
counted in flight (``in_flight``); the exchange is written with the answered-mark (``answered_then_next``:
two commits a message, docs/scale-out.md "Two commits").
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from channels.base import InboundMessage
from channels.encodable import encodable_fields
from channels.media import MediaRef
from memory.clock import from_db
from memory.sessions import PrimedHistory
from memory.store.claim_rows import Arrival, ClaimedRow, parse_history
from memory.store.exchange import ExchangeWrite
from memory.store.protocol import MemoryStore

# Answered messages are kept this long, so that a platform's redelivery of them is still recognised
# (Feishu redelivers for hours; Telegram only what was never confirmed).
KEEP_ANSWERED = timedelta(hours=48)
# How long a replica's hold on a chat lasts without renewal: it renews every third of it, so only a
# replica that stopped (killed, frozen, cut off from the database) loses its chats to another.
INBOX_LEASE = timedelta(seconds=30)
# The reorder window grows to cover the delay seen at intake (``ReorderWindow``): to this many times the
# most seen, at most REORDER_WINDOW_MOST seconds, halving back towards ``gateway.reorderWindow`` every
# REORDER_HALF_LIFE seconds — the defaults of ``gateway.reorderGrowth``, ``reorderWindowMost`` and
# ``reorderHalfLife`` (gateway/config/schema.py; a test holds the two equal). 2: in bench.replicas's
# race runs a late message came up to 1.6 times as late as the intake statements took then (1.5 left one
# run with 6 answered out of order).
REORDER_MARGIN = 2.0
REORDER_WINDOW_MOST = 3.0
REORDER_HALF_LIFE = 60.0
Chat = tuple[str, str]  # (channel, chat_id): what a hold is on
REPAIRED_CHATS_KEPT = 10_000  # chats remembered as already told about a repaired message
log = logging.getLogger("tierclaw.gateway")
_FIELDS = dataclasses.fields(InboundMessage)


class ReorderWindow:
    """How long a chat's next message waits for an earlier one still on its way: ``least``
    (``gateway.reorderWindow``) while deliveries arrive in order, grown while they do not.

    A fixed window is a bet on the delivery path's delay; on a loaded system that delay grows, and an
    earlier message stored more than the window after a later one is answered after it. So the window
    follows what is seen (``observe``, by ``DurableInbox`` after each intake): how long the intake's
    statement took (a message can be that long on its way inside an intake, where no claim sees it —
    seen at once, from the first message of a burst) and, when it stored a message after a later one of
    its chat (the platform's order), how late that came (the store's clock: ``claim_rows.Arrival``). The
    window is ``margin`` times the most seen, at most ``most`` seconds (a message waits no longer than
    that whatever is seen: an earlier message later still is answered after its successor), and the
    growth halves every ``half_life`` seconds, so a system that quietens waits ``least`` again — an idle
    one never waits more (its intakes take milliseconds). ``least`` 0 turns the window off, growth
    included. Per replica, in memory: each sees the intakes it makes (behind a load balancer, its share).

    ``follows_intakes`` False: the intakes' own time is not followed, only lateness seen — where one
    gateway owns the store (SQLite) its intakes and claims run one after another on the store's one
    thread, so a claim never misses an intake still on its way; there that growth would only delay every
    reply (``gateway/app.py`` ``inbox_of`` turns it on for a shared database)."""

    def __init__(
        self,
        least: float,
        *,
        most: float = REORDER_WINDOW_MOST,
        margin: float = REORDER_MARGIN,
        half_life: float = REORDER_HALF_LIFE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.least = least
        self.most = most
        self.margin = margin
        self.half_life = half_life
        self.clock = clock
        self._grown = 0.0  # the window the last growth set, above ``least``
        self._at = 0.0  # when (``clock``)
        self._pending: dict[int, float] = {}  # intakes on their way: token -> when sent (oldest first)
        self._tokens = 0
        self.follows_intakes = True  # whether an intake's own time grows the window (see the docstring)

    def seconds(self) -> float:
        """The window now: the growth seen, decayed, and ``margin`` times how long the oldest intake still
        on its way has been (a burst's first messages: nothing has come back to be seen yet)."""
        if self.least <= 0:
            return 0.0
        now = self.clock()
        window = self.least
        if self._grown > self.least:
            window += (self._grown - self.least) * 0.5 ** ((now - self._at) / self.half_life)
        if self._pending:
            waiting = now - next(iter(self._pending.values()))
            window = max(window, min(waiting * self.margin, max(self.most, self.least)))
        return window

    def began(self) -> int:
        """An intake's statement was sent: while it is on its way the window covers how long it has been
        (``seconds``); a token for ``ended`` (0: intakes are not followed)."""
        if not self.follows_intakes:
            return 0
        self._tokens += 1
        self._pending[self._tokens] = self.clock()
        return self._tokens

    def ended(self, token: int) -> float:
        """The intake ``began`` gave ``token`` is back: how long it took, which the window grows to cover
        (``observe``)."""
        sent = self._pending.pop(token, None)
        if sent is None:  # not followed (``began`` gave 0)
            return 0.0
        took = self.clock() - sent
        self.observe(took)
        return took

    def observe(self, seconds: float) -> bool:
        """A message was on its way ``seconds`` (stored that long after a later one of its chat, or its
        intake took that long); whether the window grew for it."""
        wanted = min(seconds * self.margin, max(self.most, self.least))
        if self.least <= 0 or wanted <= self.seconds():
            return False
        self._grown, self._at = wanted, self.clock()
        return True


@dataclass(frozen=True, slots=True)
class Claimed:
    """A message claimed for answering: under which generation of its chat's hold, and whether another
    send of its reply may have gone out already."""

    message: InboundMessage
    received: datetime | None = None  # when it was stored (the store's clock), if known
    generation: int = 0  # of the chat's hold when claimed (0: no hold, a loop without an inbox)
    in_flight_by: str | None = None  # a replica claimed it before and never marked it: its reply may be out
    history: PrimedHistory | None = None  # the chat's last messages, read with the claim
    # until when (``DurableInbox.monotonic``) the send's fence needs no statement: the claim saw enough of
    # the hold's lease left (None: the fence asks the store)
    fresh_until: float | None = None

    @property
    def chat(self) -> Chat:
        return (self.message.channel, self.message.chat_id)


class DurableInbox:
    """Accepted messages until they are answered, kept by the memory store (``memory/store/inbox.py``,
    ``memory/store/chat_holds.py``). ``reorder_window``: how long a chat's newest message waits at least
    for an earlier one still on its way (``gateway.reorderWindow``; ``reorder``: the window, grown while
    deliveries arrive late); ``in_order``: the channels that deliver one message at a time in the
    platform's order (``channels.base.DeliversInOrder``), whose chats never wait."""

    def __init__(
        self,
        store: MemoryStore,
        replica: str = "local",
        lease: timedelta = INBOX_LEASE,
        reorder_window: float = 0.0,
    ) -> None:
        self._rows = store.inbox
        self._holds = store.chat_holds
        self._exchange = store.exchange
        self.replica = replica  # gateway.replicaId (gateway/replica.py)
        self.lease = lease
        self.in_order: set[str] = set()  # channels whose messages arrive in order: no reorder window
        self.monotonic: Callable[[], float] = time.monotonic  # how long a fence took (a stall): ``fence``
        self.reorder = ReorderWindow(reorder_window)  # its own clock: tests script ``monotonic``
        self._repaired: dict[str, None] = {}  # chats whose repaired text was logged (newest last)
        self.history = 0  # messages of the chat's history read with each claim (``agent.historyMessages``)
        # Seconds a takeover waits for a stalled claimant's mark before answering its message again
        # (gateway/in_flight.py): the lease on a shared database (gateway/app.py), 0 when one gateway
        # owns the store.
        self.in_flight_wait = 0.0
        # Channels whose platform drops a repeated reply (channels/base.py ``DropsRepeatedReplies``):
        # their messages are answered again without that wait.
        self.repeats_dropped: set[str] = set()

    @property
    def reorder_window(self) -> float:
        """``gateway.reorderWindow``: the least the reorder window is (``reorder``)."""
        return self.reorder.least

    @reorder_window.setter
    def reorder_window(self, seconds: float) -> None:
        self.reorder.least = seconds

    @property
    def _lease_s(self) -> float:
        return self.lease.total_seconds()

    async def accept(self, message: InboundMessage) -> InboundMessage | None:
        """Store ``message``; the stored copy (with its ``inbox_id``), or None for a redelivery.

        Text no store keeps (a lone surrogate, a NUL) is stored, and answered, with U+FFFD in its place
        (``channels/encodable.py``): refused as it is, it would be refused at every redelivery. That is
        logged once per chat (at INFO: nothing is wrong that the operator could fix)."""
        message, row = self._row(message)
        with self._intake(message) as arrival:
            inbox_id = await self._rows.add(*row, arrival=arrival)
        return None if inbox_id is None else dataclasses.replace(message, inbox_id=inbox_id)

    async def accept_and_hold(
        self, message: InboundMessage, *, hold: bool = True
    ) -> tuple[InboundMessage | None, bool | None]:
        """``accept``, then — a new message — ``hold`` its chat, in one step (one statement on
        PostgreSQL; issue 38, item 5): (the stored copy or None for a redelivery, whether this replica
        holds the chat). ``hold`` False: ``accept`` alone (the chat's hold is not asked: None)."""
        if not hold:
            return await self.accept(message), None
        message, row = self._row(message)
        with self._intake(message) as arrival:
            inbox_id, generation = await self._rows.add_and_hold(
                *row, self.replica, self._lease_s, arrival=arrival
            )
        if inbox_id is None:
            return None, False
        return dataclasses.replace(message, inbox_id=inbox_id), generation is not None

    async def accept_hold_and_claim(
        self, message: InboundMessage, *, hold: bool = True
    ) -> tuple[InboundMessage | None, bool | None, Claimed | float | None]:
        """``accept_and_hold``, and — the hold taken and nothing else of the chat waiting — ``message``
        claimed too, in the same step (one statement on PostgreSQL; issue 38, item 5), or, when it has a
        reorder window to wait out, the seconds until it may be claimed: (the stored copy or None for a
        redelivery, whether this replica holds the chat, the claim, the wait or None — then the chat's
        worker claims as usual). ``hold`` False: ``accept`` alone (a worker here holds the chat:
        (stored, None, None))."""
        if not hold:
            return await self.accept(message), None, None
        message, row = self._row(message)
        settle = self._window(message.channel)
        asked = self.monotonic()
        with self._intake(message) as arrival:
            inbox_id, generation, claimed = await self._rows.add_hold_and_claim(
                *row, self.replica, self._lease_s, self.history, settle, arrival=arrival
            )
        if inbox_id is None:
            return None, False, None
        stored = dataclasses.replace(message, inbox_id=inbox_id)
        if claimed is None or isinstance(claimed, float):
            return stored, generation is not None, claimed
        return stored, True, self._claimed(claimed, asked, stored)

    @contextlib.contextmanager
    def _intake(self, message: InboundMessage) -> Iterator[Arrival]:
        """Around an intake's statement: the reorder window follows it while it is on its way
        (``ReorderWindow.began``, ``ended``), and once it is back, what it saw of the message's arrival
        (the ``Arrival`` yielded, filled by the statement) grows the window (``_arrived``)."""
        arrival, token = Arrival(), self.reorder.began()
        try:
            yield arrival
        finally:
            took = self.reorder.ended(token)
        self._arrived(message, arrival, took)

    def _window(self, channel: str) -> float:
        """How long a message of ``channel`` waits for an earlier one still on its way (the reorder window,
        as grown now; none for a channel that delivers in order)."""
        return 0.0 if channel in self.in_order else self.reorder.seconds()

    def _arrived(self, message: InboundMessage, arrival: Arrival, took: float) -> None:
        """After the intake of ``message`` (its statement took ``took`` s, which the window covers already:
        ``ReorderWindow.ended``): when it was stored after a later one of its chat, the window grows to
        cover how late it came. Said at INFO when that grew the window or came later than the window was —
        an earlier message that may have been answered after a later one —, at DEBUG otherwise, with the
        statement's time (the rest of the lateness was spent before it: the balancer, the HTTP server,
        the event loop)."""
        late = arrival.late_by_s
        if late is None or not message.sequence or message.channel in self.in_order:
            return
        window = self.reorder.seconds()
        grew = self.reorder.observe(late)
        took_said = f" (its intake statement took {took:.3f} s)" if self.reorder.follows_intakes else ""
        log.log(
            logging.INFO if grew or late > window else logging.DEBUG,
            "[gateway] %s: a message stored %.3f s after a later one of its chat%s; reorder window %.3f s, "
            "was %.3f s",
            message.chat_key,
            late,
            took_said,
            self.reorder.seconds(),
            window,
        )

    def _row(self, message: InboundMessage) -> tuple[InboundMessage, tuple[str, str, str, str, int, str]]:
        """The message as it is stored (text no store keeps repaired) and its inbox row's values."""
        repaired = encodable_fields(message)
        if repaired is not message:
            self._said_repaired(message.chat_key)
        message = repaired
        # The fields one level deep (``dataclasses.asdict`` deep-copies every value, at every intake); the
        # media references in a column of their own: what waits to be downloaded is visible.
        fields = {f.name: getattr(message, f.name) for f in _FIELDS if f.name != "media"}
        body = json.dumps(fields, ensure_ascii=False)
        media = [dataclasses.asdict(ref) for ref in message.media]
        media_json = json.dumps(media, ensure_ascii=False) if media else ""
        row = (message.channel, message.chat_id, message.delivery_id, body, message.sequence, media_json)
        return message, row

    def _said_repaired(self, chat_key: str) -> None:
        if chat_key in self._repaired:
            return
        if len(self._repaired) >= REPAIRED_CHATS_KEPT:
            self._repaired.pop(next(iter(self._repaired)))
        self._repaired[chat_key] = None
        log.info(
            "[gateway] a message in %s held characters no store keeps (a NUL or a lone surrogate); stored "
            "and answered with U+FFFD in their place (said once per chat)",
            chat_key,
        )

    async def unanswered(self) -> list[InboundMessage]:
        """Every stored message not answered yet, oldest first."""
        return [_message(inbox_id, body, media) for inbox_id, body, media in await self._rows.pending()]

    async def hold(self, chat: Chat, *, force: bool = False) -> bool:
        """Hold the chat for this replica (nobody held it, its holder's lease ran out, or it is this
        replica's already); False while another live replica holds it. ``force``: whatever the lease."""
        return await self._holds.take(*chat, self.replica, self._lease_s, force=force) is not None

    async def next_message(self, chat: Chat) -> Claimed | float | None:
        """Claim the held chat's next unanswered message in the platform's order; None when there is none
        left or this replica no longer holds the chat; or the seconds to wait before asking again (the
        next message is younger than the reorder window)."""
        asked = self.monotonic()
        claimed = await self._holds.next_message(*chat, self.replica, self._window(chat[0]), self.history)
        if claimed is None or isinstance(claimed, float):
            return claimed
        return self._claimed(claimed, asked)

    def _claimed(self, row: ClaimedRow, asked: float, message: InboundMessage | None = None) -> Claimed:
        """The claim of ``row``, whose statement was sent at ``asked`` (``monotonic``); ``message``: the
        row's message as the intake had it (not parsed again). Fresh (the fence needs no statement) while
        less time has passed since ``asked`` than the lease it saw left, less a third of a lease: the
        lease ends no sooner than that after ``asked``, and no other replica can take the chat (nor raise
        its generation) before it ends."""
        message = message or _message(row.id, row.message, row.media)
        history = None
        if row.session is not None:
            newest_first = parse_history(row.history, row.written)
            history = PrimedHistory(message.chat_key, row.session, self.history, newest_first)
        fresh = None if row.lease_left_s is None else asked + row.lease_left_s - self._lease_s / 3
        received = from_db(row.received_at)
        return Claimed(message, received, row.generation, row.sent_by, history, fresh)

    async def fence(self, claim: Claimed) -> bool:
        """Right before the reply to ``claim`` is sent: True while this replica still holds the chat at
        the claim's generation, with a third of a lease left at least — a hold whose renewal is due is
        extended first, so no takeover can come while the send goes out unless the process stalls again.
        False: the chat changed hands; send nothing. A read, and none while the claim is fresh
        (``Claimed.fresh_until``): the claim itself is the send intent, nothing is recorded here.

        A process stopped while the fence's statement was on its way (SIGSTOP, a long pause) may read
        "yes" long after the database said it: the answer counts only if it came back within that third
        of a lease (``monotonic``), else nothing is sent and the chat's next holder answers the message
        (it was claimed here, so it is counted in flight, not lost)."""
        if not claim.message.inbox_id:
            return True
        margin = self._lease_s / 3
        if claim.fresh_until is not None and self.monotonic() < claim.fresh_until:
            return True
        args = (claim.message.inbox_id, *claim.chat, self.replica, claim.generation)
        asked = self.monotonic()
        if not await self._holds.fence(*args, margin):
            if not await self._holds.extend(*claim.chat, self.replica, claim.generation, self._lease_s):
                return False
            asked = self.monotonic()
            if not await self._holds.fence(*args, margin):
                return False
        waited = self.monotonic() - asked
        if waited < margin:
            return True
        log.warning(
            "[gateway] %s: the fence for message %s answered after %.1f s (this process stalled); its "
            "reply is not sent here, the chat's next holder answers it",
            claim.message.chat_key,
            claim.message.inbox_id,
            waited,
        )
        return False

    async def answered(self, claim: Claimed, send_error: str | None = None) -> bool:
        """Mark the claimed message answered while this replica still holds its chat at the claim's
        generation; False when the chat changed hands (its new holder answers the message).
        ``send_error`` says why its reply could not be sent (``tierclaw status`` counts them)."""
        if not claim.message.inbox_id:
            return True
        return await self._holds.answered(
            claim.message.inbox_id, *claim.chat, self.replica, claim.generation, send_error
        )

    async def answered_then_next(
        self, claim: Claimed, send_error: str | None = None, exchange: ExchangeWrite | None = None
    ) -> tuple[bool, Claimed | float | None, bool, bool]:
        """``answered`` with ``exchange`` written (the message's, kept back until its reply went out),
        then ``next_message``, then — nothing left — ``release``, in one step (one statement on
        PostgreSQL): (marked, the next claim or the seconds to wait or None, released, extraction due
        now). Not marked: the chat changed hands, nothing was done. Tried again after a lost connection
        whose commit went through, it writes nothing twice and reports what the first did
        (``ChatHoldRows.answered_then_next``)."""
        if not claim.message.inbox_id:
            due_now = await self._exchange.run(exchange) if exchange is not None else False
            return True, None, False, due_now
        window = self._window(claim.chat[0])
        mark = (claim.message.inbox_id, *claim.chat, self.replica, claim.generation, send_error)
        asked = self.monotonic()
        after = await self._holds.answered_then_next(*mark, window, self.history, exchange)
        following = after.next
        if following is None or isinstance(following, float):
            return after.marked, following, after.released, after.due_now
        return after.marked, self._claimed(following, asked), after.released, after.due_now

    async def is_answered(self, inbox_id: int) -> bool:
        """Whether the message is marked answered, by any replica (``gateway/in_flight.py``)."""
        return await self._rows.is_answered(inbox_id)

    async def release(self, chat: Chat) -> bool:
        """Drop this replica's hold on the chat, only if nothing of it is left unanswered."""
        return await self._holds.release(*chat, self.replica)

    async def holder(self, chat: Chat) -> str | None:
        """Which replica holds the chat (None: nobody)."""
        return await self._holds.holder(*chat)

    async def holds(self, chat: Chat) -> bool:
        """Whether this replica holds the chat."""
        return await self.holder(chat) == self.replica

    async def renew(self, chats: Sequence[Chat]) -> list[Chat]:
        """Extend this replica's holds on ``chats`` (the ones it is working); the chats it still holds —
        one missing was taken over by another replica (this one stalled past its lease)."""
        return await self._holds.renew(self.replica, list(chats), self._lease_s)

    async def take_waiting(
        self, channels: Sequence[str], *, own: bool = False, every: bool = False
    ) -> list[tuple[Chat, str | None]]:
        """Hold the chats of ``channels`` that have unanswered messages and no live hold (their replica
        died, or none ever held them), each with its previous holder (None: nobody). ``own``: also this
        replica id's live holds (a restart under the same id); ``every``: whatever their lease (SQLite at
        start: one gateway owns the file, so nobody else can be answering)."""
        taken = await self._holds.take_waiting(channels, self.replica, self._lease_s, own=own, every=every)
        return [((channel, chat_id), previous) for channel, chat_id, previous in taken]

    async def drop_holds(self) -> int:
        """Drop every hold of this replica (it stops: what is left goes to another replica's sweep), and
        its claims of messages it did not mark: stopping on purpose, it marks none of them later, so the
        next holder answers them without waiting for a stalled claimant (``gateway/in_flight.py``)."""
        await self._rows.forget_claims(self.replica)
        return await self._holds.drop(self.replica)

    async def remember_reply(self, message: InboundMessage, handle: str) -> None:
        """Keep where the streamed reply to ``message`` is being written (gateway/streaming.py)."""
        if message.inbox_id:
            await self._rows.set_reply_handle(message.inbox_id, handle)

    async def reply_handle(self, message: InboundMessage) -> str:
        """What ``remember_reply`` kept for ``message`` ("" when nothing)."""
        return await self._rows.reply_handle(message.inbox_id) if message.inbox_id else ""

    async def unsent_recently(self) -> int:
        """Replies that could not be sent in the last ``KEEP_ANSWERED``."""
        return await self._rows.unsent(KEEP_ANSWERED.total_seconds())

    async def in_flight(self, replica: str | None = None) -> int:
        """Messages ``replica`` (default: this one) claimed and never marked answered (its replies may
        have gone out: the claim is the send intent)."""
        return await self._rows.in_flight(replica or self.replica)

    async def prune(self) -> int:
        """Forget messages answered more than ``KEEP_ANSWERED`` ago, and holds let go that long ago."""
        keep = KEEP_ANSWERED.total_seconds()
        await self._holds.prune(keep)
        return await self._rows.prune(keep)


def _message(inbox_id: int, body: str, media: str = "") -> InboundMessage:
    fields = json.loads(body)
    fields["inbox_id"] = inbox_id
    fields.pop("media", None)
    refs = tuple(MediaRef(**ref) for ref in json.loads(media)) if media else ()
    return InboundMessage(**fields, media=refs)
