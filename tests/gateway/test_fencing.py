"""Fencing, the send intent and one clock, with two process loops on one database as two replicas
(gateway/loop.py, gateway/hold_keeper.py, docs/scale-out.md "Fencing" and "One clock"): a replica that
stalls past its lease and wakes after another took its chat over sends nothing and says so in one line;
a message claimed (the claim is the send intent) but never marked is answered again under the same key
(Feishu posts it once) and counted as in flight; the send's fence asks the store only when the claim is
no longer fresh; a replica whose clock runs far off takes no live chat; and a chat's
messages are claimed in the platform's order, not the order they were stored in. Each replica has its own
store on the same database: PostgreSQL, and SQLite for the same code path in one process (``memory_db``)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from channels.base import InboundMessage, OutboundMessage, StreamsReplies
from gateway.inbox import Chat, DurableInbox
from gateway.loop import ProcessLoop
from gateway.send_fence import may_send
from gateway.streaming import reply_sink
from memory import clock
from memory.store.open import open_store
from memory.store.protocol import MemoryStore

Handler = Callable[[InboundMessage], Awaitable[str | None]]
LOST_LINE = "taken over by another replica while this one stalled past its lease"


class Recorder:
    """The "test" channel of one replica; every replica appends to one shared list, in send order.
    ``hang``: sends never finish (the replica is killed in the middle of one)."""

    name = "test"

    def __init__(self, replica: str, sent: list[tuple[str, OutboundMessage]]) -> None:
        self.replica = replica
        self.sent = sent
        self.hang = False
        self.started = asyncio.Event()

    async def start(self, deliver) -> None:  # pragma: no cover - not used
        pass

    async def send(self, message: OutboundMessage) -> None:
        self.started.set()
        if self.hang:
            await asyncio.Event().wait()
        self.sent.append((self.replica, message))

    async def stop(self) -> None:
        pass


class Replica:
    def __init__(self, store: MemoryStore, name: str, handler: Handler, sent: list) -> None:
        self.store = store
        self.inbox = DurableInbox(store, name)
        self.loop = ProcessLoop(handler, inbox=self.inbox, sweep_every=0.05)
        self.channel = Recorder(name, sent)
        self.loop.add_channel(self.channel)


Open = Callable[[str, Handler], Awaitable[Replica]]


@pytest.fixture
async def replicas(memory_db: str) -> AsyncIterator[tuple[Open, list[tuple[str, OutboundMessage]]]]:
    sent: list[tuple[str, OutboundMessage]] = []
    opened: list[Replica] = []

    async def open_one(name: str, handler: Handler) -> Replica:
        replica = Replica(await open_store(memory_db, warm_text=False), name, handler, sent)
        replica.loop.start()
        opened.append(replica)
        return replica

    try:
        yield open_one, sent
    finally:
        for replica in opened:
            await asyncio.wait_for(replica.loop.stop(hand_over=False), 60)
            await replica.store.close()


def _msg(chat: str, text: str, sequence: int = 0) -> InboundMessage:
    return InboundMessage("test", chat, chat, text, message_id=text, delivery_id=text, sequence=sequence)


async def _until(condition: Callable[[], bool], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def _counted_sweeps(loop: ProcessLoop) -> list[int]:
    """The chats each sweep of ``loop`` took, one entry per sweep, from now on."""
    sweeps: list[int] = []
    sweep = loop.take_waiting

    async def counted(**kwargs: bool) -> int:
        taken = await sweep(**kwargs)
        sweeps.append(taken)
        return taken

    loop.take_waiting = counted  # type: ignore[method-assign]
    return sweeps


async def _lease_runs_out(replica: Replica, chat: Chat) -> None:
    """The replica stops renewing: its hold's lease ends now (the database's clock), nobody took it yet —
    as after a stall as long as the lease, which the replica's monotonic clock sees too (its claims are
    no longer fresh: ``Claimed.fresh_until``)."""
    assert await replica.store.chat_holds.take(*chat, replica.inbox.replica, -1.0) is not None
    stalled = replica.inbox.lease.total_seconds()
    replica.inbox.monotonic = lambda: time.monotonic() + stalled


def _stall_renewals(replica: Replica, wake: asyncio.Event) -> None:
    """The whole process is stopped until ``wake``: its hold keeper too, which (its lease cut to 0.3 s)
    goes to renew at once and stalls there."""
    renew = replica.inbox.renew

    async def stalled_renew(chats):
        await wake.wait()
        return await renew(chats)

    replica.inbox.renew = stalled_renew  # type: ignore[method-assign]
    replica.inbox.lease = timedelta(seconds=0.3)


async def _stalled_after_its_send(open_replica: Open, sent: list) -> tuple[Replica, Replica, asyncio.Event]:
    """Replica a answers "one" of chat c1, then stalls between the send and its answered-mark (and in its
    renewals) until ``wake``; its lease has run out. Replica b, opened now, answers with the same handler."""
    wake = asyncio.Event()

    async def answers(message: InboundMessage) -> str:
        return f"{message.text}?"

    a = await open_replica("a", answers)
    _stall_renewals(a, wake)
    mark = a.inbox.answered_then_next

    async def stalled_mark(*args: Any, **kwargs: Any):  # ...right after its reply went out
        await wake.wait()
        return await mark(*args, **kwargs)

    a.inbox.answered_then_next = stalled_mark  # type: ignore[method-assign]
    await a.loop.deliver(_msg("c1", "one", 1))
    await _until(lambda: len(sent) == 1)  # "one?" went out from a; its mark waits for the wake
    await _lease_runs_out(a, ("test", "c1"))
    return a, await open_replica("b", answers), wake


async def test_a_replica_that_stalls_past_its_lease_sends_nothing_when_it_wakes(
    replicas, caplog: pytest.LogCaptureFixture
) -> None:
    open_replica, sent = replicas
    wake = asyncio.Event()

    async def stalls(message: InboundMessage) -> str:
        await wake.wait()  # the model's answer comes after the stall
        return f"a:{message.text}"

    async def answers(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", stalls)
    _stall_renewals(a, wake)
    await a.loop.deliver(_msg("c1", "one", 1))
    await _until(lambda: ("test", "c1") in a.loop._workers)
    await _lease_runs_out(a, ("test", "c1"))

    b = await open_replica("b", answers)
    await b.loop.deliver(_msg("c1", "two", 2))  # stored by b; b's sweep takes the chat a no longer holds
    await _until(lambda: len(sent) == 2)
    assert [(r, m.text) for r, m in sent] == [("b", "b:one"), ("b", "b:two")]

    with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
        wake.set()  # a wakes: its renewal finds the chat gone, its reply's fence refuses it
        await asyncio.wait_for(a.loop.drain(), 30)
    assert [(r, m.text) for r, m in sent] == [("b", "b:one"), ("b", "b:two")]  # nothing from a
    lines = [r.getMessage() for r in caplog.records if LOST_LINE in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("[gateway] test:c1:")
    assert await b.inbox.unanswered() == []


async def test_a_fence_that_answers_after_the_process_stalled_sends_nothing_and_the_chat_is_answered_once(
    replicas, caplog: pytest.LogCaptureFixture
) -> None:
    # SIGSTOP while the fence's statement is on its way: the database said yes, the process reads it a
    # lease later (another replica may hold the chat by then). The monotonic clock jumps between asking and
    # the answer: a stall, not a slow database.
    open_replica, sent = replicas

    async def answers(message: InboundMessage) -> str:
        return f"a:{message.text}"

    a = await open_replica("a", answers)
    # claimed at 0 (fresh until 20 s), the fence asked at 50 s, its answer read at 150 s; then the clock
    # stands still
    ticks = iter([0.0, 50.0, 50.0])
    a.inbox.monotonic = lambda: next(ticks, 150.0)
    with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
        await a.loop.deliver(_msg("c1", "one", 1))
        await _until(lambda: "answered after 100.0 s" in caplog.text)
        await _until(lambda: ("test", "c1") not in a.loop._workers)
    assert sent == [] and await a.inbox.in_flight("a") == 1  # not sent; its claim is on record
    await _lease_runs_out(a, ("test", "c1"))  # nobody renewed the hold: its sweep takes the chat again
    await _until(lambda: len(sent) == 1)
    await asyncio.wait_for(a.loop.drain(), 30)
    assert [(r, m.text) for r, m in sent] == [("a", "a:one")] and await a.inbox.unanswered() == []


async def test_a_send_made_mid_answer_is_fenced_like_the_reply(replicas) -> None:
    # A tool sending a file back while the model answers (gateway/media/send_back.py) asks the same fence
    # (gateway/send_fence.py): allowed while this replica holds the chat, refused after a takeover.
    open_replica, sent = replicas
    go = asyncio.Event()
    allowed: list[bool] = []

    async def sends_a_file(message: InboundMessage) -> str:
        allowed.append(await may_send())
        await go.wait()  # the replica stalls here; another takes the chat over
        allowed.append(await may_send())
        return f"a:{message.text}"

    async def answers(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", sends_a_file)
    a.inbox.lease = timedelta(hours=1)  # stalled: its keeper renews nothing while the test runs…

    async def no_sweep(**_: bool) -> int:
        return 0

    a.loop.take_waiting = no_sweep  # type: ignore[method-assign]  # …nor sweeps
    await a.loop.deliver(_msg("c1", "one", 1))
    await _until(lambda: len(allowed) == 1)
    await _lease_runs_out(a, ("test", "c1"))
    await open_replica("b", answers)  # its sweep takes the chat and answers "one"
    await _until(lambda: len(sent) == 1)
    go.set()
    await asyncio.wait_for(a.loop.drain(), 30)
    assert allowed == [True, False] and [(r, m.text) for r, m in sent] == [("b", "b:one")]
    assert await may_send()  # outside an answer there is no fence


async def test_a_reply_claimed_and_not_marked_is_answered_again_under_the_same_key(
    replicas, caplog: pytest.LogCaptureFixture
) -> None:
    open_replica, sent = replicas

    async def answers(message: InboundMessage) -> str:
        return f"re:{message.text}"

    a = await open_replica("a", answers)
    a.channel.hang = True  # a is killed while its send is on the wire
    await a.loop.deliver(_msg("c1", "one", 1))
    await asyncio.wait_for(a.channel.started.wait(), 30)
    assert await a.inbox.in_flight() == 1  # claimed: the claim is the send intent
    # SIGKILL: nothing marked, its hold left to run out
    await asyncio.wait_for(a.loop.stop(hand_over=False), 60)
    await _lease_runs_out(a, ("test", "c1"))

    with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
        b = await open_replica("b", answers)
        b.inbox.in_flight_wait = 0.5  # b waits that long for a's mark (a stalled a would make it): none
        await _until(lambda: len(sent) == 1)
        await asyncio.wait_for(b.loop.drain(), 30)
    [(replica, answer)] = sent
    assert replica == "b" and answer.key == "answer:1" and answer.reply_to == "one"
    assert any("claimed by replica a, which stopped" in r.getMessage() for r in caplog.records)
    assert await b.inbox.in_flight("a") == 0 and await b.inbox.unanswered() == []


async def test_a_replica_whose_clock_runs_far_off_takes_no_live_chat(replicas) -> None:
    open_replica, sent = replicas
    go_on = asyncio.Event()

    async def slow(message: InboundMessage) -> str:
        await go_on.wait()
        return f"a:{message.text}"

    async def answers(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", slow)
    await a.loop.deliver(_msg("c1", "one", 1))  # a holds c1, its lease live for 30 s
    try:
        for offset in (3600.0, -3600.0):  # b's host an hour ahead, then an hour behind
            clock.set_offset(offset)
            b = await open_replica(f"b{offset:+.0f}", answers)
            await b.loop.deliver(_msg("c1", f"two{offset:+.0f}", 2))
            sweeps = _counted_sweeps(b.loop)
            await _until(lambda sweeps=sweeps: len(sweeps) >= 5)
            assert await a.inbox.holder(("test", "c1")) == "a" and sent == []
    finally:
        clock.set_offset(0)
    go_on.set()
    await _until(lambda: len(sent) == 3)
    assert [r for r, _ in sent] == ["a", "a", "a"]  # a answered its chat, whoever stored the messages


async def test_a_chats_messages_are_claimed_in_the_platforms_order(replicas) -> None:
    open_replica, sent = replicas

    async def answers(message: InboundMessage) -> str:
        return f"re:{message.text}"

    a = await open_replica("a", answers)
    # "second" arrives first (over another connection): stored before "first" is
    await a.inbox.accept(_msg("c1", "second", 20))
    await a.inbox.accept(_msg("c1", "third", 30))
    await a.loop.deliver(_msg("c1", "first", 10))
    await _until(lambda: len(sent) == 3)
    assert [m.text for _, m in sent] == ["re:first", "re:second", "re:third"]


class StreamRecorder:
    """A reply stream of replica a's streaming channel: the frames it showed and its final text."""

    def __init__(self) -> None:
        self.updates: list[str] = []
        self.finished: list[str] = []

    def next_update_in(self) -> float:
        return 0.0

    async def update(self, text: str) -> None:
        self.updates.append(text)

    async def finish(self, text: str) -> None:
        self.finished.append(text)

    async def cancel(self) -> None:
        self.finished.append("<cancelled>")


async def test_a_streamed_reply_stops_when_its_holder_was_fenced_out(replicas) -> None:
    # A streamed reply's frames (Telegram drafts and edits, a Feishu card) ask the fence before each
    # update (a "yes" holds for the next frames while no takeover can come: a third of a lease on the
    # monotonic clock), and its final send asks it too (gateway/streaming.py): the replica that stalled
    # shows nothing more after the takeover and leaves the message to the chat's new holder.
    open_replica, sent = replicas
    go = asyncio.Event()
    streams: list[StreamRecorder] = []
    stalled = [0.0]  # seconds the replica's process was stopped, on its monotonic clock

    async def streams_then_stalls(message: InboundMessage) -> str:
        sink = reply_sink()
        assert sink is not None
        sink("frame one")
        await _until(lambda: streams[0].updates == ["frame one"])
        await go.wait()  # the replica stalls here; another takes the chat over
        sink("frame two")
        await _until(lambda: sink._closed)  # type: ignore[union-attr]  # its fence refused the frame
        return f"a:{message.text}"

    async def answers(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", streams_then_stalls)

    def open_stream(message: InboundMessage, *, resume: str, remember: object) -> StreamRecorder:
        streams.append(StreamRecorder())
        return streams[-1]

    a.channel.open_stream = open_stream  # type: ignore[attr-defined]
    a.channel.on_stopped = None  # type: ignore[attr-defined]
    assert isinstance(a.channel, StreamsReplies)
    a.inbox.lease = timedelta(hours=1)  # stalled: its keeper renews nothing while the test runs…
    a.inbox.monotonic = lambda: time.monotonic() + stalled[0]

    async def no_sweep(**_: bool) -> int:
        return 0

    a.loop.take_waiting = no_sweep  # type: ignore[method-assign]  # …nor sweeps
    await a.loop.deliver(_msg("c1", "one", 1))
    await _until(lambda: bool(streams) and streams[0].updates == ["frame one"])
    await _lease_runs_out(a, ("test", "c1"))
    await open_replica("b", answers)  # its sweep takes the chat and answers "one"
    await _until(lambda: len(sent) == 1)
    stalled[0] = a.inbox.lease.total_seconds()  # a takeover needs the lease to run out: a stall as long
    go.set()
    await asyncio.wait_for(a.loop.drain(), 30)
    assert streams[0].updates == ["frame one"] and streams[0].finished == []  # no frame, no final text
    assert [(r, m.text) for r, m in sent] == [("b", "b:one")]


def _counted_fences(store: MemoryStore) -> list[tuple[object, ...]]:
    """The fence statements of ``store`` from now on."""
    asked: list[tuple[object, ...]] = []
    fence = store.chat_holds.fence

    async def counted(*args: Any) -> bool:
        asked.append(args)
        return await fence(*args)

    store.chat_holds.fence = counted  # type: ignore[method-assign]
    return asked


async def test_a_fresh_claim_needs_no_fence_statement_and_a_stale_one_asks(replicas) -> None:
    # The claim saw the hold's lease: until a third of a lease before it ends (on the monotonic clock)
    # no other replica can take the chat, so the send's fence asks nothing (issue 38, item 5).
    open_replica, sent = replicas
    stalled = [0.0]

    async def answers(message: InboundMessage) -> str:
        if message.text == "two":
            stalled[0] = a.inbox.lease.total_seconds() * 2 / 3  # a pause: the claim is not fresh now
        return f"a:{message.text}"

    a = await open_replica("a", answers)
    a.inbox.monotonic = lambda: time.monotonic() + stalled[0]
    fences = _counted_fences(a.store)
    await a.loop.deliver(_msg("c1", "one", 1))
    await _until(lambda: len(sent) == 1)
    assert fences == []
    await a.loop.deliver(_msg("c1", "two", 2))
    await _until(lambda: len(sent) == 2)
    await asyncio.wait_for(a.loop.drain(), 30)
    assert len(fences) == 1 and [(r, m.text) for r, m in sent] == [("a", "a:one"), ("a", "a:two")]
    assert await a.inbox.unanswered() == [] and await a.inbox.in_flight() == 0


async def test_a_taker_waits_for_the_mark_of_the_reply_its_stalled_claimant_had_sent(
    replicas, caplog: pytest.LogCaptureFixture
) -> None:
    # SIGSTOP between a reply's send and its answered-mark: the taker must not answer that message again
    # when the claimant wakes within the wait (gateway/in_flight.py), and answers the next one in order.
    open_replica, sent = replicas
    a, b, wake = await _stalled_after_its_send(open_replica, sent)
    b.inbox.in_flight_wait = 60.0  # as on a shared database: a lease
    with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
        await b.loop.deliver(_msg("c1", "two", 2))  # b's sweep takes the chat over, claims "one", waits
        async with asyncio.timeout(30):
            while await b.inbox.in_flight("b") != 1:
                await asyncio.sleep(0.02)
        wake.set()  # a wakes and marks the reply it had sent
        await _until(lambda: len(sent) == 2)
        await asyncio.wait_for(b.loop.drain(), 30)
        await asyncio.wait_for(a.loop.drain(), 30)
    assert [(r, m.text) for r, m in sent] == [("a", "one?"), ("b", "two?")]
    assert "was answered by replica a, which had stalled" in caplog.text
    assert await b.inbox.unanswered() == [] and await b.inbox.in_flight("a") == 0


async def test_where_the_platform_drops_repeats_the_taker_answers_again_at_once(
    replicas, caplog: pytest.LogCaptureFixture
) -> None:
    # Feishu posts a repeated reply once (DropsRepeatedReplies): the taker does not wait for the stalled
    # claimant's mark — here a wait of an hour, which would end the test — and sends the message's
    # answer again under the same key, then the next message, in order.
    open_replica, sent = replicas
    a, b, wake = await _stalled_after_its_send(open_replica, sent)
    b.inbox.in_flight_wait = 3600.0
    b.inbox.repeats_dropped = {"test"}
    with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
        await b.loop.deliver(_msg("c1", "two", 2))
        await _until(lambda: len(sent) == 3)
        await asyncio.wait_for(b.loop.drain(), 30)
        wake.set()
        await asyncio.wait_for(a.loop.drain(), 30)
    assert [(r, m.text) for r, m in sent] == [("a", "one?"), ("b", "one?"), ("b", "two?")]
    assert sent[0][1].key and sent[0][1].key == sent[1][1].key  # the platform posts it once
    assert "which stopped before marking it answered" in caplog.text
    assert await b.inbox.unanswered() == []
