"""The process loop: per-chat order, bounded concurrency across chats, isolation of slow/failing chats."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import pytest

from channels.base import InboundMessage, OutboundMessage
from gateway.loop import ProcessLoop
from gateway.notices import BUSY_REPLY, DEADLINE_REPLY, FAILURE_REPLY, NOTICES_ZH
from tests.support.stepped_clock import SteppedLoop, run_stepped


class RecordingChannel:
    """A channel that records what it was asked to send (optionally failing for one chat)."""

    name = "test"

    def __init__(self, fail_chat: str | None = None) -> None:
        self.sent: list[OutboundMessage] = []
        self.fail_chat = fail_chat

    async def start(self, deliver) -> None:  # pragma: no cover - not used by these tests
        pass

    async def send(self, message: OutboundMessage) -> None:
        if message.chat_id == self.fail_chat:
            raise ConnectionError("platform down")
        self.sent.append(message)

    async def stop(self) -> None:
        pass


def _msg(chat: str, text: str) -> InboundMessage:
    return InboundMessage(channel="test", chat_id=chat, sender_id=chat, text=text, message_id=text)


async def _run(loop: ProcessLoop, messages: list[InboundMessage]) -> None:
    loop.start()
    try:
        for m in messages:
            await loop.deliver(m)
        await asyncio.wait_for(loop.drain(), timeout=30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)


async def test_each_chat_is_answered_in_order_while_chats_interleave() -> None:
    rng = random.Random(7)
    active = 0
    peak = 0

    async def handler(msg: InboundMessage) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(rng.uniform(0, 0.01))
        active -= 1
        return f"re:{msg.text}"

    channel = RecordingChannel()
    loop = ProcessLoop(handler, max_concurrent=3)
    loop.add_channel(channel)
    messages = [_msg(f"c{c}", f"c{c}-{i}") for i in range(10) for c in range(6)]
    await _run(loop, messages)
    assert len(channel.sent) == 60
    for c in range(6):
        texts = [m.text for m in channel.sent if m.chat_id == f"c{c}"]
        assert texts == [f"re:c{c}-{i}" for i in range(10)]
    assert 1 < peak <= 3  # concurrent across chats, but bounded


async def test_a_slow_chat_does_not_stall_the_others() -> None:
    release = asyncio.Event()
    order: list[str] = []

    async def handler(msg: InboundMessage) -> str:
        if msg.chat_id == "slow":
            await release.wait()
        order.append(msg.text)
        return msg.text

    channel = RecordingChannel()
    loop = ProcessLoop(handler, max_concurrent=4)
    loop.add_channel(channel)
    loop.start()
    try:
        await loop.deliver(_msg("slow", "s1"))
        for i in range(5):
            await loop.deliver(_msg("fast", f"f{i}"))
        async with asyncio.timeout(30):
            while len(order) < 5:
                await asyncio.sleep(0.01)
        assert order == [f"f{i}" for i in range(5)]  # answered while "slow" still waits
        release.set()
        await asyncio.wait_for(loop.drain(), timeout=30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    assert order[-1] == "s1"


async def test_handler_errors_get_a_failure_reply_and_the_loop_goes_on() -> None:
    async def handler(msg: InboundMessage) -> str:
        if msg.text == "boom":
            raise RuntimeError("database is locked")
        return f"re:{msg.text}"

    channel = RecordingChannel()
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    await _run(loop, [_msg("a", "boom"), _msg("a", "next")])
    assert [m.text for m in channel.sent] == [FAILURE_REPLY, "re:next"]


async def test_a_chinese_message_gets_the_failure_notice_in_chinese() -> None:
    async def handler(msg: InboundMessage) -> str:
        raise RuntimeError("database is locked")

    channel = RecordingChannel()
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    await _run(loop, [_msg("a", "我女儿叫什么名字")])
    assert [m.text for m in channel.sent] == [NOTICES_ZH[FAILURE_REPLY]]


async def test_a_failing_send_does_not_block_other_chats() -> None:
    async def handler(msg: InboundMessage) -> str:
        return msg.text

    channel = RecordingChannel(fail_chat="down")
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    await _run(loop, [_msg("down", "x1"), _msg("up", "y1"), _msg("down", "x2"), _msg("up", "y2")])
    assert [m.text for m in channel.sent] == ["y1", "y2"]


async def test_no_reply_for_none_and_replies_thread_under_the_message() -> None:
    async def handler(msg: InboundMessage) -> str | None:
        return None if msg.text == "quiet" else "ok"

    channel = RecordingChannel()
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    await _run(loop, [_msg("a", "quiet"), _msg("a", "loud")])
    assert [(m.text, m.reply_to) for m in channel.sent] == [("ok", "loud")]


class WorkingChannel(RecordingChannel):
    """A channel with a work-in-progress sign; records when it is shown and taken down."""

    def __init__(self, broken: bool = False) -> None:
        super().__init__()
        self.events: list[str] = []
        self.broken = broken

    @contextlib.asynccontextmanager
    async def _sign(self, message: InboundMessage) -> AsyncIterator[None]:
        self.events.append(f"show:{message.text}")
        try:
            yield
        finally:
            self.events.append(f"hide:{message.text}")

    def working(self, message: InboundMessage) -> contextlib.AbstractAsyncContextManager[None]:
        if self.broken:
            raise RuntimeError("sign broken")
        return self._sign(message)

    async def send(self, message: OutboundMessage) -> None:
        await asyncio.sleep(0.01)  # a send that takes a moment: the sign must still be up
        self.events.append(f"send:{message.text}")
        await super().send(message)


async def test_work_sign_is_shown_from_pickup_until_the_reply_is_sent() -> None:
    async def handler(msg: InboundMessage) -> str | None:
        return None if msg.text == "silent" else f"re:{msg.text}"

    channel = WorkingChannel()
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    await _run(loop, [_msg("a", "one"), _msg("a", "silent"), _msg("a", "two")])
    assert channel.events == [
        "show:one",
        "send:re:one",
        "hide:one",
        "show:silent",
        "hide:silent",
        "show:two",
        "send:re:two",
        "hide:two",
    ]


async def test_a_broken_work_sign_never_costs_the_reply() -> None:
    async def handler(msg: InboundMessage) -> str:
        return f"re:{msg.text}"

    channel = WorkingChannel(broken=True)
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    await _run(loop, [_msg("a", "one")])
    assert [m.text for m in channel.sent] == ["re:one"]


async def test_pending_counts_messages_and_replies_not_yet_out() -> None:
    release = asyncio.Event()

    async def handler(msg: InboundMessage) -> str:
        await release.wait()
        return f"re:{msg.text}"

    channel = RecordingChannel()
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    loop.start()
    try:
        await loop.deliver(_msg("a", "one"))
        await loop.deliver(_msg("b", "two"))
        async with asyncio.timeout(30):  # both workers in their handlers
            while loop.pending != 2:
                await asyncio.sleep(0.01)
        draining = asyncio.create_task(loop.drain())
        await asyncio.sleep(0)
        assert not draining.done()  # nothing is answered yet: a drain waits
        release.set()
        await asyncio.wait_for(draining, timeout=30)
        await asyncio.wait_for(loop.drain(), timeout=30)
        assert loop.pending == 0 and len(channel.sent) == 2
    finally:
        await asyncio.wait_for(loop.stop(), 60)


# --------------------------------------------------------------------------------- bounded waiting


async def test_a_hung_handler_gets_an_apology_at_the_deadline_and_frees_its_slot() -> None:
    async def handler(msg: InboundMessage) -> str:
        if msg.chat_id == "hung":
            await asyncio.Event().wait()  # a model that never answers
        return f"answer to {msg.text}"

    channel = RecordingChannel()
    loop = ProcessLoop(handler, max_concurrent=1, deadline=0.2)  # one slot: the hung chat holds it
    loop.add_channel(channel)
    await _run(loop, [_msg("hung", "h1"), _msg("bystander", "b1")])
    by_chat = {m.chat_id: m.text for m in channel.sent}
    assert by_chat == {"hung": DEADLINE_REPLY, "bystander": "answer to b1"}


def test_a_chat_waiting_past_the_deadline_for_a_slot_is_told_and_still_answered() -> None:
    # One slot, an 8 s deadline (for the slot and for each handler), on a clock that moves only when the
    # test moves it (tests/support/stepped_clock.py): a holds the slot for 4 s, so b waits 4 s: not told;
    # c, waiting behind both since the start, is told at 8 s, while b's own handler is 4 s in. On the real
    # clock these were margins of 4 s that a stalled machine could eat; here no step depends on speed.
    def told(channel: RecordingChannel, chat: str) -> bool:
        return (chat, BUSY_REPLY) in [(m.chat_id, m.text) for m in channel.sent]

    async def main(clock: SteppedLoop) -> list[tuple[str, str]]:
        go = {"a": asyncio.Event(), "b": asyncio.Event()}
        started: list[str] = []

        async def handler(msg: InboundMessage) -> str:
            started.append(msg.chat_id)
            if msg.chat_id in go:
                await go[msg.chat_id].wait()
            return f"answer to {msg.text}"

        channel = RecordingChannel()
        loop = ProcessLoop(handler, max_concurrent=1, deadline=8)
        loop.add_channel(channel)
        loop.start()
        try:
            for chat in ("a", "b", "c"):
                await loop.deliver(_msg(chat, f"{chat}1"))
            await clock.settle()
            assert started == ["a"]  # a holds the slot; b and c wait for it
            clock.advance(4.0)
            await clock.settle()
            go["a"].set()
            await clock.settle()
            assert started == ["a", "b"] and channel.sent[0].text == "answer to a1"
            assert not told(channel, "b") and not told(channel, "c")  # 4 s of 8
            clock.advance(4.0)
            await clock.settle()
            assert told(channel, "c") and not told(channel, "b")  # c: 8 s of 8; b's handler: 4 s of 8
            go["b"].set()
            draining = asyncio.ensure_future(loop.drain())
            await clock.settle()
            assert draining.done()
        finally:
            stopping = asyncio.ensure_future(loop.stop())
            await clock.settle()
            assert stopping.done()
        return [(m.chat_id, m.text) for m in channel.sent]

    texts = run_stepped(main)
    assert texts == [
        ("a", "answer to a1"),
        ("c", BUSY_REPLY),
        ("b", "answer to b1"),
        ("c", "answer to c1"),
    ]


def test_a_deadline_must_be_positive() -> None:
    with pytest.raises(ValueError, match="deadline"):
        ProcessLoop(lambda m: asyncio.sleep(0), deadline=0)


async def test_a_failing_handler_logs_one_line_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    async def handler(msg: InboundMessage) -> str:
        raise OSError("database or disk is full")

    channel = RecordingChannel()
    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    with caplog.at_level("INFO", logger="tierclaw.gateway"):
        await _run(loop, [_msg("a", "one"), _msg("a", "two")])
    failures = [r for r in caplog.records if "failed" in r.getMessage()]
    assert len(failures) == 2 and all(not r.exc_info for r in failures)
    assert "OSError: database or disk is full" in failures[0].getMessage()
    assert [m.text for m in channel.sent] == [FAILURE_REPLY, FAILURE_REPLY]


async def test_cancel_stops_a_chats_current_reply_and_the_next_message_is_answered() -> None:
    started = asyncio.Event()
    stopped: list[str] = []

    async def handler(msg: InboundMessage) -> str:
        if msg.text == "slow":
            started.set()
            try:
                await asyncio.Event().wait()  # a model still thinking
            except asyncio.CancelledError:
                stopped.append(msg.text)
                raise
        return f"answer to {msg.text}"

    channel = RecordingChannel()
    loop = ProcessLoop(handler, deadline=30)
    loop.add_channel(channel)
    loop.start()
    try:
        assert not loop.cancel("test:a")  # nothing being made yet
        await loop.deliver(_msg("a", "slow"))
        await loop.deliver(_msg("a", "next"))
        await loop.deliver(_msg("b", "other"))
        await asyncio.wait_for(started.wait(), timeout=30)
        assert loop.cancel("test:a")
        await asyncio.wait_for(loop.drain(), timeout=30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    assert stopped == ["slow"]
    assert sorted((m.chat_id, m.text) for m in channel.sent) == [
        ("a", "answer to next"),
        ("b", "answer to other"),
    ]
    assert loop.pending == 0
