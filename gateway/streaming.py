"""Streamed replies: the words shown while the model writes them (docs/architecture.md, "Streamed replies").

The process loop asks ``ReplyStreams.open`` for a stream before it makes a reply: a channel that
``StreamsReplies`` (channels/base.py) opens one unless it wants the reply whole (a piped terminal, Feishu
without CardKit). While the handler runs, ``feeding`` makes ``reply_sink()`` return the stream's ``Feed``
for the handler's task (a context variable: the assistant puts it in ``ChatRequest.on_text`` and the model,
asked with ``stream=True``, calls it with the text so far after each delta). The feed never blocks the
model: it keeps the newest text and a task of its own hands it to the channel no faster than the
channel's pace (``next_update_in``), one update at a time, dropping the frames in between. The model's
stream is read no more often than that pace either (``Feed.wanted_in``; gateway/model_turn.py says why).
Once the model's answer is whole, no frame goes before the final text unless that is late (``Feed.ended``).

The final send stays one step of the loop (``ProcessLoop._send_after``): ``send`` finishes the stream with
the whole reply — rendered and split as a plain send would be — or sends it plainly when it was not
streamed. A reply stopped by the person (Ctrl-C, Telegram's stop button) cancels the stream. Only that
final text is the reply: history, the extraction buffer and the inbox's "answered" mark see nothing of
the frames before it.

Nothing lost, nothing twice: a stream that starts writing a platform message which outlives this process
(a Telegram group message it edits, a Feishu card) has its handle kept on the message's inbox row
(``DurableInbox.remember_reply``) before it goes on; the row stays unanswered until the final text is
sent. After a crash the restarted gateway answers the row again and opens its stream with that handle
(``resume``), so the half-written message is completed or replaced, never followed by a second one — even
with ``agent.stream`` off by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, cast

from channels.base import (
    Channel,
    InboundMessage,
    OutboundMessage,
    ReplyStream,
    StreamsReplies,
)
from gateway.channel_parts import ChannelParts
from gateway.inbox import DurableInbox
from gateway.model_turn import TextSink
from gateway.send_fence import may_send

log = logging.getLogger("tierclaw.gateway")

UPDATE_IN_FLIGHT_WAIT_S = 60.0  # at the final send, an update still on its way is waited for this long
# Once the model's answer is whole (``Feed.ended``) a frame waits this long for the final text before it
# goes anyway (a final send held up, say by the database, still shows the newest words): one frame of the
# channels' default pace.
ENDED_HOLD_S = 1.5
# A frame due goes with the first text pushed from then on — the model's stream is read when it is due
# (gateway/model_turn.py), so that read's words are in it — or this long after it became due if none comes.
PUSH_LAG_S = 0.25

_SINK: ContextVar[Feed | None] = ContextVar("tierclaw_reply_sink", default=None)


def reply_sink(lead: str = "") -> TextSink | None:
    """Where the reply being made in this task hands its text so far (None: it is not streamed); with
    ``lead``, what the model writes is shown after it (the reply will open with it: a voice note's "I
    heard …" line), so each frame stays the start of the final text.

    Asked for right before the model is (gateway/assistant.py): the feed asks the fence now, while the
    model thinks, so that its first words need not wait for the database (``Feed.expect``)."""
    feed = _SINK.get()
    if feed is not None:
        feed.expect()
    if feed is None or not lead:
        return feed
    return _After(feed, lead)


class _After:
    """A sink showing the model's text after a fixed opening (see ``reply_sink``)."""

    def __init__(self, feed: Feed, lead: str) -> None:
        self._feed = feed
        self._lead = lead

    def __call__(self, text: str) -> None:
        self._feed.push(self._lead + text)

    def wanted_in(self) -> float:
        return self._feed.wanted_in()

    def ended(self) -> None:
        self._feed.ended()


class Feed:
    """The newest text of one reply, handed to its stream by a task of its own (see the module doc).

    ``push`` (or calling the feed: a ``model_turn.TextSink``) never waits: the model goes on at its pace
    while the channel takes what it can. ``updates`` counts the frames the channel took.
    """

    def __init__(
        self,
        stream: ReplyStream,
        chat_key: str,
        *,
        live: bool = True,
        fence_fresh_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.chat_key = chat_key
        self.live = live  # False: a resumed stream with agent.stream off (only the final text goes)
        self.fence_fresh_s = fence_fresh_s  # how long the fence's "yes" holds for the next frames
        self._clock = clock  # the monotonic clock the fence's margin is kept on (DurableInbox.monotonic)
        self._fresh_until = float("-inf")  # frames before this need not ask the fence again
        self._ahead: asyncio.Task[bool] | None = None  # the fence asked before the first words (expect)
        self.updates = 0
        self._latest = ""
        self._fresh = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._updating = False
        self._closed = False
        self._failed = False
        self._ended_at: float | None = None  # when the model's answer became whole (``ended``)
        self._nudge = asyncio.Event()  # text pushed while the task waits for its frame to be due
        self._pacing = False  # the task waits for its next frame (``_pace``)

    def push(self, text: str) -> None:
        """The reply so far (called by the model after each delta)."""
        if self._closed or text == self._latest or not text or text.isspace():
            return
        self._latest = text
        self._ended_at = None
        self._fresh.set()
        if self._pacing and self.stream.next_update_in() <= 0:
            self._nudge.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"stream:{self.chat_key}")

    __call__ = push

    def expect(self) -> None:
        """Text is coming (the model is being asked): ask the fence now, so the first frame can go on its
        "yes" (``_still_ours``) rather than wait for a database statement behind every other chat's writes
        (bench/README.md, "Streaming"). Only where a "yes" holds for a while (``fence_fresh_s``)."""
        if self._ahead is None and not self._closed and self.fence_fresh_s > 0 and self._latest == "":
            self._ahead = asyncio.get_running_loop().create_task(self._ask(), name=f"fence:{self.chat_key}")

    def wanted_in(self) -> float:
        """Seconds until the channel could show newer text (the model's stream is read again then)."""
        return 0.0 if self._closed else self.stream.next_update_in()

    def ended(self) -> None:
        """The model's answer is whole (gateway/model_turn.py): its final text is sent next (``settle``
        then ``finish``). A frame due now would show the same words a moment before the final message
        does — an HTTP call for nothing, about one a reply, since the stream is read when a frame is due —
        so frames wait up to ``ENDED_HOLD_S`` for it. New text (another answer) lifts the wait."""
        self._ended_at = time.monotonic()

    def _due_in(self) -> float:
        """Seconds until the next frame may go: the channel's pace, and the wait after ``ended``."""
        due = self.stream.next_update_in()
        if self._ended_at is not None:
            due = max(due, self._ended_at + ENDED_HOLD_S - time.monotonic())
        return due

    async def _pace(self) -> None:
        """Until the next frame may go: when it is due and newer text was pushed (``PUSH_LAG_S``), or
        ``ENDED_HOLD_S`` after the answer became whole. Not merely when it is due: the read of the model's
        stream that wakes then would race this task, and a frame that won showed the words of the read
        before, a frame's time old, and went just before the final text when that read found [DONE]."""
        while (delay := self._due_in()) > 0:
            self._nudge.clear()
            self._pacing = True
            try:
                async with asyncio.timeout(delay + (PUSH_LAG_S if self._ended_at is None else 0.0)):
                    await self._nudge.wait()
            except TimeoutError:
                return
            finally:
                self._pacing = False

    async def _run(self) -> None:
        """Hand the newest text over whenever the channel's pace allows, until ``settle``."""
        while not self._closed:
            await self._fresh.wait()
            await self._pace()
            self._fresh.clear()
            if not await self._still_ours():
                return
            self._updating = True
            try:
                await self.stream.update(self._latest)
                self.updates += 1
            except Exception as exc:  # a frame lost: the final text still comes (once per reply in the log)
                if not self._failed:
                    log.warning("[gateway] %s: showing the reply so far failed: %s", self.chat_key, exc)
                self._failed = True
            finally:
                self._updating = False

    async def _still_ours(self) -> bool:
        """The fence of the message being answered (gateway/send_fence.py; the feed's task was started
        inside it), before each frame: a replica whose chat was taken over while it stalled shows
        nothing more and leaves the half-written message to the chat's new holder (docs/scale-out.md,
        "Fencing").

        A "yes" holds for ``fence_fresh_s`` after it was asked (a third of the lease: the fence's own
        margin, ``DurableInbox.fence``): the fence found the hold current with at least that much of its
        lease left, so no other replica can take the chat before then, stall or not — a replica that
        wakes later asks again. The frames of a reply then cost one fence statement, not one each (a
        write every frame of fifty replies queued before the next messages' intake: bench/README.md,
        "Streaming")."""
        if self._clock() < self._fresh_until:
            return True
        ahead, self._ahead = self._ahead, None
        allowed = await ahead if ahead is not None else await self._ask()
        if allowed and ahead is not None and self._clock() >= self._fresh_until:
            allowed = await self._ask()  # the early "yes" is stale by now
        if allowed:
            return True
        log.warning("[gateway] %s: the streamed reply stops: the chat was taken over", self.chat_key)
        self._closed = True
        return False

    async def _ask(self) -> bool:
        """The fence; its "yes" holds for ``fence_fresh_s`` from when it was asked."""
        asked = self._clock()
        if not await may_send():
            return False
        self._fresh_until = asked + self.fence_fresh_s
        return True

    async def settle(self) -> None:
        """Stop handing text over; an update already on its way ends first, so it cannot land after the
        final text."""
        self._closed = True
        self._forget_ahead()
        task, self._task = self._task, None
        if task is None or task.done():
            return
        if not self._updating:
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=UPDATE_IN_FLIGHT_WAIT_S)
        if not done:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task

    def drop(self) -> None:
        """Stop at once without waiting (the loop stops: the reply is answered again after the restart)."""
        self._closed = True
        self._forget_ahead()
        if self._task is not None:
            self._task.cancel()

    def _forget_ahead(self) -> None:
        """An early fence nobody waits for is stopped (its statement, if sent, is harmless)."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        if not ahead.done():
            ahead.cancel()
        elif not ahead.cancelled():
            ahead.exception()  # retrieved: a fence that failed with nothing left to show is no news


class ReplyStreams:
    """The loop's streamed replies: which are streamed, where their text goes, how they end."""

    def __init__(self, inbox: DurableInbox | None) -> None:
        self._inbox = inbox
        self.enabled = True  # agent.stream (set by gateway/app.py)
        self._finals: dict[int, Feed] = {}  # id(reply) -> the feed its final send finishes
        self._open: set[Feed] = set()
        self.parts = ChannelParts()  # the channels' optional parts, asked once (the loop's too)

    def add(self, channel: Channel, cancel: Callable[[str], object]) -> None:
        """A channel of the loop: the person's "stop" on its platform cancels the reply being made."""
        if isinstance(channel, StreamsReplies) and channel.on_stopped is None:
            channel.on_stopped = cancel

    async def open(self, channel: Channel | None, message: InboundMessage) -> Feed | None:
        """The feed of the reply to ``message``, or None when it goes out whole (see the module doc)."""
        if not self.parts.has(channel, StreamsReplies):
            return None
        streams = cast(StreamsReplies, channel)
        resume = await self._handle(message)
        if not self.enabled and not resume:
            return None
        try:
            stream = streams.open_stream(
                message, resume=resume, remember=functools.partial(self._remember, message)
            )
        except Exception as exc:  # the reply goes out whole
            log.warning("[gateway] %s could not stream a reply: %s", message.channel, exc)
            return None
        if stream is None:
            return None
        feed = Feed(stream, message.chat_key, live=self.enabled, **self._fence_trust())
        self._open.add(feed)
        return feed

    @contextlib.contextmanager
    def feeding(self, feed: Feed | None) -> Iterator[None]:
        """While open, tasks created here (the handler's) find ``feed`` as their ``reply_sink``."""
        token = _SINK.set(feed if feed is not None and feed.live else None)
        try:
            yield
        finally:
            _SINK.reset(token)

    def attach(self, reply: OutboundMessage, feed: Feed | None) -> None:
        """``reply`` is the final text of ``feed``'s stream: its send finishes the stream."""
        if feed is not None:
            self._finals[id(reply)] = feed

    async def send(self, channel: Channel, reply: OutboundMessage) -> None:
        """The final send of a reply: finish its stream with the whole text, or ``channel.send`` it."""
        feed = self._finals.pop(id(reply), None)
        if feed is None:
            await channel.send(reply)
            return
        self._open.discard(feed)
        await feed.settle()
        await feed.stream.finish(reply.text)

    async def abandon(self, reply: OutboundMessage) -> None:
        """``reply``'s send was refused by the fence: its stream shows nothing more and is left as it is
        (the chat's new holder finishes or replaces the message from the handle on the inbox row)."""
        feed = self._finals.pop(id(reply), None)
        if feed is not None:
            self._open.discard(feed)
            await feed.settle()

    async def cancel(self, feed: Feed) -> None:
        """The reply was stopped (or there is none): what the stream showed goes."""
        self._open.discard(feed)
        await feed.settle()
        try:
            await feed.stream.cancel()
        except Exception as exc:
            log.warning("[gateway] %s: clearing a stopped reply failed: %s", feed.chat_key, exc)

    def stop(self) -> None:
        """The loop stops: no more frames (unfinished replies are answered again after the restart)."""
        for feed in self._open:
            feed.drop()
        self._open.clear()
        self._finals.clear()

    def _fence_trust(self) -> dict[str, Any]:
        """How long a frame may go on the fence's last "yes" (``Feed._still_ours``), on the inbox's clock."""
        inbox = self._inbox
        if inbox is None:
            return {}
        return {"fence_fresh_s": inbox.lease.total_seconds() / 3, "clock": lambda: inbox.monotonic()}

    async def _handle(self, message: InboundMessage) -> str:
        """The handle a stream of this message kept before a restart ("" when none, or no inbox)."""
        if self._inbox is None or not message.inbox_id:
            return ""
        try:
            return await self._inbox.reply_handle(message)
        except Exception as exc:  # a second message may follow the half-written one; the reply still goes
            log.warning("[gateway] %s: could not read a reply's handle: %s", message.chat_key, exc)
            return ""

    async def _remember(self, message: InboundMessage, handle: str) -> None:
        if self._inbox is None or not message.inbox_id:
            return
        try:
            await self._inbox.remember_reply(message, handle)
        except Exception as exc:  # after a crash now, the reply may be written twice
            log.warning("[gateway] %s: could not keep a reply's handle: %s", message.chat_key, exc)
