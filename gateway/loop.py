"""The process loop: inbound queue → per-chat workers (in order, bounded) → outbound queue → channels.

Messages of one chat are answered strictly in order; different chats run concurrently up to
``max_concurrent`` at a time. A slow or failing chat holds only its own worker, never the others, and a
reply that a channel fails to send is logged and dropped without stopping the loop. With a ``deadline``,
a message not answered in time gets a short apology (and frees its slot), and a chat that waits longer
than that for a slot is told so while it keeps its place. A channel that can
show work in progress (``working``, e.g. Telegram's "typing") shows it from the moment a message is taken
up until its reply has been sent. ``cancel(chat_key)`` stops the reply being made for a chat (the
terminal's Ctrl-C): that message gets no reply, and the chat's next message is answered as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from channels.base import Channel, InboundMessage, OutboundMessage, ShowsWork, Undeliverable
from gateway.inbox import DurableInbox
from memory.store.errors import cannot_succeed_on_retry
from memory.text.wording import is_chinese

log = logging.getLogger("tierclaw.gateway")

Handler = Callable[[InboundMessage], Awaitable[str | None]]

FAILURE_REPLY = "Sorry — something went wrong while handling that message."
DEADLINE_REPLY = "Sorry — I could not get an answer in time. Please try again in a moment."
BUSY_REPLY = "I'm busy with other conversations right now; I'll answer this as soon as I can."
# The same notices for a message written in Chinese (the person's language: gateway/README.md).
NOTICES_ZH = {
    FAILURE_REPLY: "抱歉，处理这条消息时出了点问题。",
    DEADLINE_REPLY: "抱歉，我没能及时给出回答，请稍后再试。",
    BUSY_REPLY: "我正忙着回复其他对话，会尽快回答这条消息。",
}


def notice_for(message: InboundMessage, notice: str) -> str:
    """One of the notices above in the language of the message it answers."""
    return NOTICES_ZH.get(notice, notice) if is_chinese(message.text) else notice


class LoopObserver(Protocol):
    """Told what the loop does, for the metrics (gateway/metrics.py); must not raise or block."""

    def received(self, message: InboundMessage) -> None:
        """A message was taken in (stored first, with an inbox) or resumed at start."""

    def finished(
        self, message: InboundMessage, reply: str | None, send_error: str | None, seconds: float
    ) -> None:
        """Its answer went out (``reply`` None: nothing to send); ``seconds`` since it was taken in."""


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
        self.inbound: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self.outbound: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        self._channels: dict[str, Channel] = {}
        self._chats: dict[str, asyncio.Queue[InboundMessage]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._unfinished = 0
        self._sent: dict[int, asyncio.Event] = {}  # id(reply) -> set once the channel has sent it
        self._send_errors: dict[int, str] = {}  # id(reply) -> why its channel could not send it
        self._idle = asyncio.Event()
        self._idle.set()
        self._answering: dict[str, asyncio.Future[str | None]] = {}  # chat key -> the reply being made
        self._cancelled: set[str] = set()  # chat keys whose reply was cancelled by ``cancel``
        self.observer: LoopObserver | None = None  # set before ``start`` (gateway/ops_http.py)
        self._taken_at: dict[int, float] = {}  # id(message) -> when it was taken in (for the observer)

    @property
    def inbox(self) -> DurableInbox | None:
        """Where taken-in messages are stored (None: not stored, as in some tests)."""
        return self._inbox

    def add_channel(self, channel: Channel) -> None:
        """Register a channel as the destination of replies to its chats."""
        self._channels[channel.name] = channel

    async def deliver(self, message: InboundMessage) -> None:
        """The callback channels are started with: store (with an inbox) and queue one inbound message.

        Raises when the message could not be stored: the channel must not confirm it to the platform,
        which then delivers it again — or ``Undeliverable`` when no retry can store it (the channel then
        skips it). A redelivery of a stored message is dropped here: it is answered once.
        """
        if self._inbox is not None:
            try:
                stored = await self._inbox.accept(message)
            except Exception as exc:
                if cannot_succeed_on_retry(exc):
                    raise Undeliverable(f"{type(exc).__name__}: {exc}") from exc
                raise
            if stored is None:
                log.info("[gateway] %s: message delivered again, answered once", message.chat_key)
                return
            message = stored
        await self.resume(message)

    async def resume(self, message: InboundMessage) -> None:
        """Queue a message that is already stored (the unanswered ones, at start)."""
        self._unfinished += 1
        self._idle.clear()
        if self.observer is not None:
            self._taken_at[id(message)] = time.monotonic()
            self.observer.received(message)
        await self.inbound.put(message)

    def start(self) -> None:
        """Start the dispatcher and the sender tasks."""
        self._tasks = [
            asyncio.create_task(self._dispatch(), name="gateway-dispatch"),
            asyncio.create_task(self._send_replies(), name="gateway-send"),
        ]

    @property
    def pending(self) -> int:
        """Messages taken in but not yet answered, plus replies not yet handed to their channel."""
        return self._unfinished

    def cancel(self, chat_key: str) -> bool:
        """Stop making the reply to the chat's current message (it gets none); False if none is being made.

        What the handler did before it was stopped stays done (the user's words are recorded before the
        model is asked: gateway/assistant.py).
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

    async def stop(self) -> None:
        """Cancel the dispatcher, sender and chat workers (call ``drain`` first to finish pending work)."""
        tasks = [*self._tasks, *self._workers.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self._workers.clear()

    async def _dispatch(self) -> None:
        while True:
            message = await self.inbound.get()
            queue = self._chats.get(message.chat_key)
            if queue is None:
                queue = self._chats[message.chat_key] = asyncio.Queue()
            queue.put_nowait(message)
            if message.chat_key not in self._workers:
                self._workers[message.chat_key] = asyncio.create_task(
                    self._chat_worker(message.chat_key, queue), name=f"chat:{message.chat_key}"
                )

    async def _chat_worker(self, chat_key: str, queue: asyncio.Queue[InboundMessage]) -> None:
        """Answer one chat's messages in order; ends when the chat has nothing more queued."""
        try:
            while not queue.empty():
                message = queue.get_nowait()
                async with self._working(message):
                    await self._take_slot(message)
                    try:
                        reply = await self._answer(message)
                    finally:
                        self._limit.release()
                    send_error = None
                    if reply:
                        outbound, sent = self._queue_reply(message, reply)
                        if self._shows_work(message) or self._inbox is not None:
                            await sent.wait()
                            send_error = self._send_errors.pop(id(outbound), None)
                    await self._mark_answered(message, send_error)
                    self._observe(message, reply, send_error)
                self._done()
        finally:
            self._workers.pop(chat_key, None)
            if queue.empty():
                self._chats.pop(chat_key, None)
            else:  # a message arrived while this worker was finishing: hand the queue to a new worker
                self._workers[chat_key] = asyncio.create_task(
                    self._chat_worker(chat_key, queue), name=f"chat:{chat_key}"
                )

    def _observe(self, message: InboundMessage, reply: str | None, send_error: str | None) -> None:
        taken_at = self._taken_at.pop(id(message), None)
        if self.observer is not None and taken_at is not None:
            self.observer.finished(message, reply, send_error, time.monotonic() - taken_at)

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
            self._queue_reply(
                message, notice_for(message, BUSY_REPLY), track=False
            )  # a notice: nobody waits for its send
        await self._limit.acquire()

    async def _mark_answered(self, message: InboundMessage, send_error: str | None = None) -> None:
        """The message's answer (a reply, a command's answer, an apology) has gone out: it is not answered
        again after a restart. Marked after the send, not when the reply is made: a crash in between
        answers it twice rather than never (docs/architecture.md, "The path of one message")."""
        if self._inbox is None or not message.inbox_id:
            return
        try:
            await self._inbox.answered(message, send_error)
        except Exception as exc:  # it is answered again after a restart: better than never
            log.error("[gateway] could not mark a message of %s answered: %s", message.chat_key, exc)

    def _queue_reply(
        self, message: InboundMessage, text: str, *, track: bool = True
    ) -> tuple[OutboundMessage, asyncio.Event]:
        """Hand a reply to the sender; with ``track`` the event is set once its channel has sent it (or
        failed to: then ``_send_errors`` says why)."""
        self._unfinished += 1  # the reply is pending until a channel has it
        outbound = OutboundMessage(message.channel, message.chat_id, text, reply_to=message.message_id)
        sent = asyncio.Event()
        if track:
            self._sent[id(outbound)] = sent
        self.outbound.put_nowait(outbound)
        return outbound, sent

    def _shows_work(self, message: InboundMessage) -> bool:
        return isinstance(self._channels.get(message.channel), ShowsWork)

    def _working(self, message: InboundMessage) -> contextlib.AbstractAsyncContextManager[None]:
        """The channel's work-in-progress sign for this message's chat, if it has one."""
        channel = self._channels.get(message.channel)
        if isinstance(channel, ShowsWork):
            try:
                return channel.working(message)
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
        try:
            if channel is None:
                log.error("[gateway] no channel %r for a reply to %s", reply.channel, reply.chat_id)
            else:
                await channel.send(reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the channel retried what can be retried; recorded for tierclaw status
            log.error("[gateway] sending to %s:%s failed: %s", reply.channel, reply.chat_id, exc)
            if id(reply) in self._sent:
                self._send_errors[id(reply)] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            sent = self._sent.pop(id(reply), None)
            if sent is not None:
                sent.set()
            self._done()

    def _done(self) -> None:
        self._unfinished -= 1
        if self._unfinished <= 0:
            self._unfinished = 0
            self._idle.set()


def _forget_sent(sending: dict[str, asyncio.Task[None]], key: str, task: asyncio.Task[None]) -> None:
    """Done callback of a send: drop the chat's chain unless a newer send has already replaced it."""
    if sending.get(key) is task:
        del sending[key]
