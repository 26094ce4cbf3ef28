"""The process loop: channels → (the durable inbox) → per-chat workers (in order, bounded) → channels.

Messages of one chat are answered strictly in order; different chats run concurrently up to
``max_concurrent`` at a time. A slow or failing chat holds only its own worker, never the others, and a
reply that a channel fails to send is logged and dropped without stopping the loop. With a ``deadline``,
a message not answered in time gets a short apology (and frees its slot), and a chat that waits longer
than that for a slot is told so while it keeps its place. A channel that can show work in progress
(``working``, e.g. Telegram's "typing") shows it from the moment a message is taken up until its reply has
been sent. ``cancel(chat_key)`` stops the reply being made for a chat (the terminal's Ctrl-C): that
message gets no reply, and the chat's next message is answered as usual. A channel that streams replies
shows the reply while it is made; its final send stays one step (``_send_after``), which finishes the
stream (gateway/streaming.py).

With a durable inbox the inbox is the queue, shared by every gateway on the database: a chat is worked by
the one replica that holds it, in the platform's order whoever took the messages in; its holds are kept
and the chats of dead replicas taken by gateway/hold_keeper.py (docs/scale-out.md, "The message path").
The answer's final send is one step, ``_send_final``: right before the channel sends, ``may_send`` checks
that this replica still holds the chat at the claim's generation (a read, or nothing while the claim is
fresh: the claim is the send intent); the answered-mark follows at once, conditional on the same
generation, with the message's exchange, kept back until then (docs/scale-out.md, "Two commits")."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TypeVar, cast

from channels.base import Channel, InboundMessage, OutboundMessage, ShowsWork, Undeliverable
from gateway.channel_starts import ChannelStarts
from gateway.chat_claims import HeldChats, LocalChats, Release
from gateway.hold_keeper import LostChats, keep_holds
from gateway.in_flight import answered_by_its_claimant
from gateway.inbox import Chat, Claimed, DurableInbox
from gateway.loop_observer import LoopObserver
from gateway.notices import BUSY_REPLY, DEADLINE_REPLY, FAILURE_REPLY, notice_for
from gateway.send_fence import fenced
from gateway.streaming import Feed, ReplyStreams
from memory.store.errors import cannot_succeed_on_retry

log = logging.getLogger("tierclaw.gateway")

Handler = Callable[[InboundMessage], Awaitable[str | None]]
T = TypeVar("T")
RETRY_CAP_S = 5.0  # the longest pause between tries of a database step the worker cannot skip
TAKEN_AT_KEPT = 10_000  # intake times kept for the observer (the oldest go first)


class ProcessLoop:
    """Routes messages from channels to the handler and replies back to the channel that owns the chat."""

    def __init__(
        self,
        handler: Handler,
        *,
        max_concurrent: int = 8,
        deadline: float | None = None,
        inbox: DurableInbox | None = None,
        deadline_hint: str = "",
        sweep_every: float = 1.0,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        if deadline is not None and deadline <= 0:
            raise ValueError("deadline must be positive")
        self._handler = handler
        self._deadline = deadline
        self._deadline_hint = deadline_hint  # what to check when the deadline passes (URL, model, settings)
        self._inbox = inbox
        self._limit = asyncio.Semaphore(max_concurrent)
        self.outbound: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        self._channels: dict[str, Channel] = {}
        self._chats: HeldChats | LocalChats = HeldChats(inbox) if inbox is not None else LocalChats()
        self.sweep_every = sweep_every  # seconds between sweeps for chats nobody live holds
        self._workers: dict[Chat, asyncio.Task[None]] = {}
        self._nudged: set[Chat] = set()  # chats a message arrived for while their worker ran
        self._tasks: list[asyncio.Task[None]] = []
        self._unfinished = 0  # messages being answered here plus replies not yet handed to a channel
        self._sent: dict[int, asyncio.Event] = {}  # id(reply) -> set once the channel has sent it
        self._send_errors: dict[int, str] = {}  # id(reply) -> why its channel could not send it
        self._fences: dict[int, Claimed] = {}  # id(reply) -> the claim it answers: fenced before the send
        self._fenced_out: set[int] = set()  # id(reply) of answers not sent: their chat changed hands
        self._lost = LostChats()  # chats taken over while a worker here was on them (said once)
        self._idle = asyncio.Event()
        self._idle.set()
        self._answering: dict[str, asyncio.Future[str | None]] = {}  # chat key -> the reply being made
        self._cancelled: set[str] = set()  # chat keys whose reply was cancelled by ``cancel``
        self.observer: LoopObserver | None = None  # set before ``start`` (gateway/ops_http.py)
        self._taken_at: dict[int, float] = {}  # inbox id (or id(message)) -> when it was taken in here
        self.on_takeover: Callable[[Chat, str], None] | None = None  # a dead replica's chat taken over
        self.streams = ReplyStreams(inbox)  # replies shown while they are made (gateway/streaming.py)
        self.starts = ChannelStarts()  # at start, the channels a leftover's worker waits for (app.py)

    @property
    def inbox(self) -> DurableInbox | None:
        """Where taken-in messages are stored (None: not stored, as in some tests)."""
        return self._inbox

    def add_channel(self, channel: Channel) -> None:
        """Register a channel as the destination of replies to its chats."""
        self._channels[channel.name] = channel
        self.streams.add(channel, self.cancel)

    async def deliver(self, message: InboundMessage) -> None:
        """The callback channels are started with: store (with an inbox) and answer one inbound message.
        Raises when the message could not be stored: the channel must not confirm it to the platform,
        which then delivers it again — or ``Undeliverable`` when no retry can store it (the channel then
        skips it). A redelivery of a stored message is dropped here: it is answered once. Once stored, the
        message is this replica's to answer if it can hold the chat; if another replica holds it, that
        one answers it (it finds it before it can let the chat go)."""
        if self._inbox is None:
            await self.resume(message)
            return
        # Stored, held and claimed in one step — also when a worker of the chat here is on it: its last
        # message may be answered and the chat let go while this statement waits for the chat's lock,
        # and then the claim made here is the worker's next (``HeldChats.offer``), not a hold and a
        # claim of their own (issue 38: two commits a message). Until the claim is handed over the
        # chat's worker claims nothing (``taking_in``): it would claim the message a second time.
        with self._chats.taking_in((message.channel, message.chat_id)):
            try:
                stored, held, claimed = await self._inbox.accept_hold_and_claim(message)
            except Exception as exc:
                if cannot_succeed_on_retry(exc):
                    raise Undeliverable(f"{type(exc).__name__}: {exc}") from exc
                raise
            if stored is None:
                log.info("[gateway] %s: message delivered again, answered once", message.chat_key)
                return
            await self.resume(stored, held=held, claimed=claimed)

    async def resume(
        self, message: InboundMessage, *, held: bool | None = None, claimed: Claimed | float | None = None
    ) -> None:
        """Answer a stored message (with an inbox: if this replica holds its chat; ``held``, ``claimed``: the
        intake took its hold, and claimed it too)."""
        self._idle.clear()
        taken_at = time.monotonic()
        if self.observer is not None:
            self.observer.received(message)
        chat = (message.channel, message.chat_id)
        try:
            mine = await self._chats.offer(message, working=chat in self._workers, held=held, claimed=claimed)
        except Exception as exc:  # stored: the sweep takes the chat once the database answers
            log.warning("[gateway] %s: could not hold the chat: %s", message.chat_key, type(exc).__name__)
            mine = False
        if mine:
            if self.observer is not None:
                self._taken_at[message.inbox_id or id(message)] = taken_at
                if len(self._taken_at) > TAKEN_AT_KEPT:  # a chat lost to another replica: never popped
                    del self._taken_at[next(iter(self._taken_at))]
            self._work(chat)
        self._check_idle()

    def start(self) -> None:
        """Start the sender task (with an inbox: also the keeper of this replica's chat holds)."""
        self._tasks = [asyncio.create_task(self._send_replies(), name="gateway-send")]
        if isinstance(self._chats, HeldChats):
            # both read at each round: tests change them after the start
            sweep, every = (lambda: self.take_waiting()), (lambda: self.sweep_every)
            keep = keep_holds(self._chats.inbox, self._workers, sweep, self._lost, every)
            self._tasks.append(asyncio.create_task(keep, name="gateway-holds"))

    async def take_waiting(self, *, at_start: bool = False, every: bool = False) -> int:
        """Work the chats of this loop's channels that have stored messages and no live hold (every
        ``sweep_every`` s); ``at_start``: also this replica id's own (a restart under a fixed
        ``gateway.replicaId``); ``every``: whatever their holds (SQLite: one gateway owns the file).
        How many chats were taken; a dead replica's counts as a takeover (``on_takeover``)."""
        if not isinstance(self._chats, HeldChats):
            return 0
        taken = await self._chats.inbox.take_waiting(list(self._channels), own=at_start, every=every)
        for chat, previous in taken:
            if previous is not None and previous != self._chats.inbox.replica and not every:
                log.warning("[gateway] %s:%s: replica %s's hold ran out; answering its chat", *chat, previous)
                if self.on_takeover is not None:
                    self.on_takeover(chat, previous)
            self._chats.forget(chat)
            self._work(chat)
        return len(taken)

    @property
    def pending(self) -> int:
        """Messages waiting here or being answered, plus replies not yet handed to their channel."""
        return self._unfinished + self._chats.queued

    def cancel(self, chat_key: str) -> bool:
        """Stop making the reply to the chat's current message (it gets none); False if none is being made.

        What the handler did before it was stopped stays done, and the user's words are kept (in one
        write, as the handler stops: gateway/assistant.py).
        """
        work = self._answering.get(chat_key)
        if work is None or work.done():
            return False
        self._cancelled.add(chat_key)
        work.cancel()
        return True

    async def drain(self) -> None:
        """Wait until every delivered message is answered and every reply handed to its channel."""
        await self._idle.wait()

    async def stop(self, *, hand_over: bool = True) -> None:
        """Cancel the sender, the holds' keeper and chat workers (call ``drain`` first to finish pending
        work); ``hand_over``: then drop this replica's chat holds, so that another replica takes what is
        left at its next sweep instead of after the lease (False: as if the process were killed)."""
        tasks = [*self._tasks, *self._workers.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self._workers.clear()
        self.streams.stop()
        if hand_over and isinstance(self._chats, HeldChats):
            try:
                await self._chats.inbox.drop_holds()
            except Exception as exc:  # their leases run out instead
                log.warning("[gateway] could not hand the chat holds over: %s", type(exc).__name__)

    def _work(self, chat: Chat) -> None:
        """Make sure a worker answers the chat (this replica holds it); a running one looks again."""
        self._idle.clear()
        if chat in self._workers:
            self._nudged.add(chat)
        else:
            self._workers[chat] = asyncio.create_task(
                self._chat_worker(chat), name=f"chat:{chat[0]}:{chat[1]}"
            )

    async def _chat_worker(self, chat: Chat) -> None:
        """Answer the held chat's messages in order; ends when the chat is let go (nothing left) or lost."""
        try:
            await self.starts.wait(chat[0])  # a leftover answered at start: once its channel can send
            while True:
                self._nudged.discard(chat)
                claimed = await self._retrying(self._chats.next, chat)
                if claimed is not None:
                    if not await self._answer_one(claimed):
                        return  # the chat changed hands: its new holder answers the rest
                    continue
                outcome = await self._retrying(self._chats.release, chat)
                if outcome is Release.LOST:
                    return
                # Released, but a message was offered meanwhile: hold the chat again and go on.
                if outcome is Release.RELEASED and (
                    chat not in self._nudged or not await self._retrying(self._chats.take, chat)
                ):
                    return
        finally:
            if self._workers.get(chat) is asyncio.current_task():
                del self._workers[chat]
                self._nudged.discard(chat)
                self._lost.forget(chat)
                task = asyncio.current_task()
                stopping = task is not None and task.cancelling()
                if self._chats.handed(chat) and not stopping:  # an intake claimed the chat's next message
                    self._work(chat)
            self._check_idle()

    async def _answer_one(self, claim: Claimed) -> bool:
        """Answer one claimed message: slot, handler, the final send, then marked answered (only marked:
        its stalled claimant answered it, gateway/in_flight.py). False when the chat changed hands."""
        message = claim.message
        inbox = self._inbox  # a takeover's claim: its claimant may have answered it, then stalled
        if (
            claim.in_flight_by
            and inbox is not None
            and await self._retrying(lambda _chat: answered_by_its_claimant(inbox, claim), claim.chat)
        ):
            return await self._mark_answered(claim)  # nothing sent here; the chat's next is claimed
        self._unfinished += 1
        try:
            async with self._working(message):
                await self._take_slot(message)
                try:
                    # Files a tool sends mid-answer and the streamed frames ask the fence too.
                    with fenced(lambda: self.may_send(claim)), self._chats.answering(claim):
                        feed = await self.streams.open(self._channels.get(message.channel), message)
                        with self.streams.feeding(feed):
                            reply = await self._answer(message)
                finally:
                    self._limit.release()
                if not reply and feed is not None:
                    await self.streams.cancel(feed)
                sent, send_error = await self._send_final(claim, reply, feed)
                if not sent:  # nor is its exchange written here
                    self._chats.not_sent(claim)
                lost = "its reply is not sent" if not sent else ""
                if not lost and not await self._mark_answered(claim, send_error):
                    lost = "it was answered, not marked"
                if lost:
                    self._lost.say(claim.chat, f"message {message.inbox_id}: {lost}")
                    self._taken_at.pop(message.inbox_id or id(message), None)
                    return False
                self._observe(message, reply, send_error, claim.received)
                return True
        finally:
            self._done()

    async def _send_final(
        self, claim: Claimed, reply: str | None, feed: Feed | None = None
    ) -> tuple[bool, str | None]:
        """The answer's final send: the sender calls ``may_send`` right before the channel sends it.
        (sent — False when the fence refused it; no reply is "sent" —, why the channel could not)."""
        if not reply:
            return True, None
        outbound, done = self._queue_reply(claim.message, reply, fence=claim)
        self.streams.attach(outbound, feed)
        if not (self._shows_work(claim.message) or self._inbox is not None):
            return True, None  # nothing marks it: the worker need not wait for the channel
        await done.wait()
        if id(outbound) in self._fenced_out:
            self._fenced_out.discard(id(outbound))
            return False, None
        return True, self._send_errors.pop(id(outbound), None)

    async def may_send(self, claim: Claimed) -> bool:
        """The fence, right before the channel sends a reply: True while this replica holds the claim's chat
        at its generation. Tried until the database answers; False: the chat changed hands, send nothing."""
        return await self._retrying(lambda _chat: self._chats.fence(claim), claim.chat)

    async def _retrying(self, step: Callable[[Chat], Awaitable[T]], chat: Chat) -> T:
        """A database step of the worker, tried until it succeeds: the database being away must not drop
        a chat this replica holds (if it stays away past the lease, another replica takes the chat and
        this one's next step finds it lost)."""
        pause = 0.5
        while True:
            try:
                return await step(chat)
            except Exception as exc:
                log.warning(
                    "[gateway] %s:%s: the chat's claim failed: %s; trying again", *chat, type(exc).__name__
                )
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_CAP_S)

    def _observe(
        self, message: InboundMessage, reply: str | None, send_error: str | None, received: datetime | None
    ) -> None:
        """Tell the observer; the seconds since this replica took the message in, or since it was stored
        (taken in by another replica)."""
        taken_at = self._taken_at.pop(message.inbox_id or id(message), None)
        if self.observer is None:
            return
        if taken_at is not None:
            self.observer.finished(message, reply, send_error, time.monotonic() - taken_at)
        elif received is not None:
            seconds = max(0.0, time.time() - received.timestamp())
            self.observer.finished(message, reply, send_error, seconds)

    async def _take_slot(self, message: InboundMessage) -> None:
        """Wait for one of the ``max_concurrent`` slots; past the deadline, say so, and keep waiting.

        Nobody waits without a word longer than the deadline, and nothing is dropped: the message is
        still answered when a slot frees.
        """
        if self._deadline is None:
            await self._limit.acquire()
            return
        try:
            async with asyncio.timeout(self._deadline):
                await self._limit.acquire()
                return
        except TimeoutError:
            log.warning(
                "[gateway] every chat slot busy for %.0f s; told %s to wait", self._deadline, message.chat_key
            )
            self._queue_reply(message, notice_for(message, BUSY_REPLY), track=False)  # nobody waits for it
        await self._limit.acquire()

    async def _mark_answered(self, claim: Claimed, send_error: str | None = None) -> bool:
        """The message's answer (a reply, a command's answer, an apology) has gone out: it is not answered
        again. Marked right after the send, with the message's exchange: a crash in between answers it
        twice rather than never (Telegram; Feishu drops the repeat by its key), docs/architecture.md. By
        the claim's generation, or a stalled claimant's (gateway/in_flight.py); False: the chat changed
        hands. Tried until the database answers, and not stopped by a renewal that finds the chat lost."""
        with self._lost.marking(claim.chat):
            return await self._retrying(lambda _chat: self._chats.answered(claim, send_error), claim.chat)

    def _queue_reply(
        self, message: InboundMessage, text: str, *, track: bool = True, fence: Claimed | None = None
    ) -> tuple[OutboundMessage, asyncio.Event]:
        """Hand a reply to the sender; with ``track`` the event is set once its channel has sent it (or
        failed to: then ``_send_errors`` says why). ``fence``: the message's answer (keyed by the
        message, so a platform that drops repeated keys posts it once), sent only if ``may_send``."""
        self._unfinished += 1  # the reply is pending until a channel has it
        key = f"answer:{message.inbox_id}" if fence is not None and message.inbox_id else ""
        outbound = OutboundMessage(message.channel, message.chat_id, text, message.message_id, key)
        sent = asyncio.Event()
        if track:
            self._sent[id(outbound)] = sent
        if fence is not None:
            self._fences[id(outbound)] = fence
        self.outbound.put_nowait(outbound)
        return outbound, sent

    def _shows_work(self, message: InboundMessage) -> bool:
        return self.streams.parts.has(self._channels.get(message.channel), ShowsWork)

    def _working(self, message: InboundMessage) -> contextlib.AbstractAsyncContextManager[None]:
        """The channel's work-in-progress sign for this message's chat, if it has one."""
        channel = self._channels.get(message.channel)
        if self.streams.parts.has(channel, ShowsWork):
            try:
                return cast(ShowsWork, channel).working(message)
            except Exception as exc:  # a broken sign must never cost the reply
                log.warning("[gateway] %s could not show work in progress: %s", message.channel, exc)
        return contextlib.nullcontext()

    async def _answer(self, message: InboundMessage) -> str | None:
        """The handler's reply; past the deadline a short apology, and the slot is free again; None when
        ``cancel`` stopped it."""
        work = asyncio.ensure_future(self._handler(message))
        self._answering[message.chat_key] = work
        try:
            async with asyncio.timeout(self._deadline):
                return await work
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if message.chat_key in self._cancelled and not (task is not None and task.cancelling()):
                log.info("[gateway] the reply to %s was cancelled", message.chat_key)
                return None
            raise
        except TimeoutError:
            log.error(
                "[gateway] no answer for %s within %.0f s%s",
                message.chat_key,
                self._deadline or 0,
                f": {self._deadline_hint}" if self._deadline_hint else "",
            )
            return notice_for(message, DEADLINE_REPLY)
        except Exception as exc:  # one line, not a traceback per message (DEBUG adds it)
            log.error(
                "[gateway] handling a message from %s failed: %s: %s",
                message.chat_key,
                type(exc).__name__,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            return notice_for(message, FAILURE_REPLY)
        finally:
            self._answering.pop(message.chat_key, None)
            self._cancelled.discard(message.chat_key)
            if not work.done():
                work.cancel()

    async def _send_replies(self) -> None:
        """Take replies off the outbound queue; each chat's sends are chained, chats send independently."""
        sending: dict[str, asyncio.Task[None]] = {}
        while True:
            reply = await self.outbound.get()
            key = f"{reply.channel}:{reply.chat_id}"
            task = asyncio.create_task(self._send_after(sending.get(key), reply), name=f"send:{key}")
            sending[key] = task
            task.add_done_callback(functools.partial(_forget_sent, sending, key))
            self._tasks = [t for t in self._tasks if not t.done()]
            self._tasks.append(task)

    async def _send_after(self, previous: asyncio.Task[None] | None, reply: OutboundMessage) -> None:
        if previous is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(previous)
        channel = self._channels.get(reply.channel)
        claim = self._fences.pop(id(reply), None)
        try:
            if channel is None:
                log.error("[gateway] no channel %r for a reply to %s", reply.channel, reply.chat_id)
            elif claim is not None and not await self.may_send(claim):
                self._fenced_out.add(id(reply))
                await self.streams.abandon(reply)  # its stream stops; the chat's new holder resumes it
            else:
                await self.streams.send(channel, reply)  # the final send (a streamed reply's last step)
        except Exception as exc:  # the channel retried what can be retried; recorded for tierclaw status
            log.error("[gateway] sending to %s:%s failed: %s", reply.channel, reply.chat_id, exc)
            if id(reply) in self._sent:
                self._send_errors[id(reply)] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            if (sent := self._sent.pop(id(reply), None)) is not None:
                sent.set()
            self._done()

    def _done(self) -> None:
        self._unfinished = max(self._unfinished - 1, 0)
        self._check_idle()

    def _check_idle(self) -> None:
        """Idle: no chat being worked here and no reply waiting for its channel."""
        if self._unfinished == 0 and not self._workers:
            self._idle.set()


def _forget_sent(sending: dict[str, asyncio.Task[None]], key: str, task: asyncio.Task[None]) -> None:
    """Done callback of a send: drop the chat's chain unless a newer send has already replaced it."""
    if sending.get(key) is task:
        del sending[key]
