"""The streamed-reply plumbing (gateway/streaming.py, gateway/model_turn.py): the model streams through the
real openai client (tool rounds included), the feed hands the newest text to a channel no faster than its
pace, and the final send, a cancel and a restart each end a stream the way the loop needs."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from typing import Any

import pytest

from channels.base import InboundMessage, OutboundMessage, RememberHandle, StreamsReplies
from gateway import streaming
from gateway.agent import ChatRequest, ModelError, OpenAIChatModel
from gateway.inbox import DurableInbox
from gateway.loop import ProcessLoop
from gateway.model_turn import StreamedTurn, StreamFailed
from gateway.send_fence import fenced
from gateway.streaming import Feed, ReplyStreams, reply_sink
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace
from memory.engine import MemoryEngine
from tests.support.stub_clients import client_for
from tests.support.waiting import until

pytestmark = pytest.mark.usefixtures("close_stub_clients")


class Shown:
    """A reply stream that records what it was given; ``pace`` seconds between updates, ``gate`` holds
    each update until set."""

    def __init__(self, pace: float = 0.0, gate: asyncio.Event | None = None) -> None:
        self.pace = pace
        self.gate = gate
        self.updates: list[str] = []
        self.finished: list[str] = []
        self.cancelled = False
        self._last = float("-inf")

    def next_update_in(self) -> float:
        return max(self.pace - (asyncio.get_running_loop().time() - self._last), 0.0)

    async def update(self, text: str) -> None:
        self._last = asyncio.get_running_loop().time()
        if self.gate is not None:
            await self.gate.wait()
        self.updates.append(text)

    async def finish(self, text: str) -> None:
        self.finished.append(text)

    async def cancel(self) -> None:
        self.cancelled = True


class StreamingChannel:
    """A channel whose replies stream into ``Shown`` streams; remembers a handle on the first update."""

    name = "test"

    def __init__(self) -> None:
        self.on_stopped = None
        self.streams: list[Shown] = []
        self.resumed: list[str] = []
        self.sent: list[OutboundMessage] = []

    def open_stream(self, message: InboundMessage, *, resume: str, remember: RememberHandle) -> Shown:
        self.resumed.append(resume)
        channel = self

        class Remembering(Shown):
            async def update(self, text: str) -> None:
                await super().update(text)
                await remember(json.dumps({"shown": len(text)}))

        stream = Remembering()
        channel.streams.append(stream)
        return stream

    async def start(self, deliver: Any) -> None:
        pass

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)

    async def stop(self) -> None:
        pass


def test_the_test_channel_is_a_streaming_channel() -> None:
    assert isinstance(StreamingChannel(), StreamsReplies)


# ------------------------------------------------------------------------------- the model streams


def _request(on_text: Any = None, tools: Any = None) -> ChatRequest:
    return ChatRequest(system="sys", user_text="hello", on_text=on_text, tools=tools)


class Seen(list[str]):
    """A text sink (gateway/model_turn.TextSink) that keeps each text it is handed and always wants more;
    ``ends`` holds the text so far each time it was told the answer is whole."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[str] = []

    def __call__(self, text: str) -> None:
        self.append(text)

    def wanted_in(self) -> float:
        return 0.0

    def ended(self) -> None:
        self.ends.append(self[-1] if self else "")


async def test_the_model_hands_on_the_text_so_far_while_it_writes() -> None:
    held = threading.Event()  # the model stops after two tokens until the words so far were handed on

    class Releasing(Seen):
        def __call__(self, text: str) -> None:
            super().__call__(text)
            if text == "Hello there,":
                held.set()

    seen = Releasing()
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(content="Hello there, 你好.", hold=(2, held)))
        model = OpenAIChatModel(client_for(stub), "m")
        async with asyncio.timeout(60):  # never released: the words were not handed on while it wrote
            reply = await model.reply(_request(on_text=seen))
        body = stub.chat_requests()[0]
    assert reply == "Hello there, 你好."
    # Deltas come a batch at a time: each text handed on is longer than the last; the last is the whole.
    assert "Hello there," in seen and seen[-1] == "Hello there, 你好."
    assert seen.ends == ["Hello there, 你好."]  # told once that the answer is whole, after its last words
    assert all(later.startswith(earlier) and later != earlier for earlier, later in itertools.pairwise(seen))
    assert body["stream"] is True


async def test_a_stream_is_read_from_its_events_however_the_bytes_are_cut() -> None:
    """Events cut anywhere, CR LF line ends, comments, a multi-line data field, [DONE] then more."""
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"index": 0, "delta": {"content": "你好"}}]},
        {"choices": [{"index": 1, "delta": {"content": "another choice"}}]},
        {"choices": [{"index": 0, "delta": {"content": ", Lisbon"}, "finish_reason": "stop"}]},
    ]
    body = b": keep-alive\r\n\r\n" + b"".join(
        b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\r\n\r\n" for e in events[:2]
    )
    body += b"data: " + json.dumps(events[2]).encode() + b"\n\n"
    # one event, two data lines:
    body += b'data: {"choices": [{"index": 0,\ndata: "delta": {"content": ", Lisbon"},'
    body += b' "finish_reason": "stop"}]}\n\n'
    body += b'data: [DONE]\n\ndata: {"choices": []}\n\n'
    for size in (1, 2, 7, len(body)):
        turn = StreamedTurn()
        for at in range(0, len(body), size):
            turn.feed(body[at : at + size])
        turn.feed(b"\n\n")
        assert turn.turn().content == "你好, Lisbon" and turn.turn().finish_reason == "stop", size
        assert turn.done


async def test_an_error_event_in_a_stream_is_a_model_error() -> None:
    turn = StreamedTurn()
    with pytest.raises(StreamFailed):
        turn.feed(b'data: {"error": {"message": "overloaded"}}\n\n')


class OneTool:
    """A tool box with one tool that answers what it was asked."""

    max_rounds = 2

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def schemas(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": "memory_search", "parameters": {"type": "object"}}}]

    async def call(self, name: str, arguments: str) -> str:
        self.calls.append((name, arguments))
        return "found: Lisbon"


async def test_a_streamed_round_of_tool_calls_is_answered_then_the_reply_streams() -> None:
    seen = Seen()
    tools = OneTool()
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(tool_calls=[("memory_search", '{"query": "home"}')]), "You live in Lisbon.")
        reply = await OpenAIChatModel(client_for(stub), "m").reply(_request(seen, tools))
        second = stub.chat_requests()[1]
    assert reply == "You live in Lisbon." and seen[-1] == "You live in Lisbon."
    assert seen.ends == ["You live in Lisbon."]  # not after the round that asked for a tool
    assert tools.calls == [("memory_search", '{"query": "home"}')]
    asked, answered = second["messages"][-2:]
    assert asked["tool_calls"][0]["function"] == {"name": "memory_search", "arguments": '{"query": "home"}'}
    assert answered == {"role": "tool", "tool_call_id": "call_1", "content": "found: Lisbon"}
    assert second["stream"] is True


async def test_a_stream_cut_midway_is_a_model_error() -> None:
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(content="one two three four five", cut_after=2))
        with pytest.raises(ModelError) as caught:
            await OpenAIChatModel(client_for(stub), "m").reply(_request(on_text=Seen()))
    assert caught.value.kind == "unreachable"


# ------------------------------------------------------------------------------- the feed


async def test_the_feed_keeps_the_newest_text_and_never_waits_for_the_channel() -> None:
    stream = Shown(pace=0.2)
    feed = Feed(stream, "test:1")
    for n in range(1, 51):
        feed.push(" ".join(["word"] * n))  # fifty deltas at once: the model is not held up
    async with asyncio.timeout(30):
        while not stream.updates or stream.updates[-1].count("word") < 50:
            await asyncio.sleep(0.01)
    await feed.settle()
    assert stream.updates[-1].count("word") == 50  # the newest text reached the channel
    assert len(stream.updates) < 50  # the frames between were dropped, not queued


async def test_settling_lets_an_update_on_its_way_end_first() -> None:
    gate = asyncio.Event()
    stream = Shown(gate=gate)
    feed = Feed(stream, "test:1")
    feed.push("partial")
    async with asyncio.timeout(30):
        while stream._last < 0:  # the update started and waits at the gate
            await asyncio.sleep(0.01)
    settling = asyncio.create_task(feed.settle())
    await asyncio.sleep(0)
    assert not settling.done()
    gate.set()
    await settling
    assert stream.updates == ["partial"]  # it landed before the final text can


class Held(Shown):
    """A stream whose next frame is due when the test says (``due_in``)."""

    def __init__(self) -> None:
        super().__init__()
        self.due_in = 0.0

    def next_update_in(self) -> float:
        return self.due_in


async def test_a_due_frame_goes_with_the_text_pushed_once_it_is_due() -> None:
    stream = Held()
    feed = Feed(stream, "test:1")
    await _frames(feed, stream, ["One"])
    stream.due_in = 100.0  # the next frame is not due: what comes waits
    feed.push("One two")
    for _ in range(5):  # the feed's task waits for its frame
        await asyncio.sleep(0)
    stream.due_in = 0.0  # due now: the model's stream is read, and its words go at once
    await _frames(feed, stream, ["One two three"])
    await feed.settle()
    assert stream.updates == ["One", "One two three"]  # not the words read a frame's time before


async def test_once_the_answer_is_whole_a_due_frame_waits_for_the_final_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hold no slow machine outlasts: the assertion below cannot pass or fail by a timing margin.
    monkeypatch.setattr(streaming, "ENDED_HOLD_S", 3600.0)
    stream = Shown()
    feed = Feed(stream, "test:1")
    await _frames(feed, stream, ["Hello"])
    feed.push("Hello there, the whole answer.")
    feed.ended()  # before the feed's task runs: the model's last read had the rest and [DONE]
    for _ in range(5):  # the feed's task runs and waits (without the wait a frame would go at once)
        await asyncio.sleep(0)
    await feed.settle()
    await feed.stream.finish("Hello there, the whole answer.")
    assert stream.updates == ["Hello"] and stream.finished == ["Hello there, the whole answer."]


async def test_a_final_text_held_up_still_lets_the_newest_words_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "ENDED_HOLD_S", 0.05)
    stream = Shown()
    feed = Feed(stream, "test:1")
    feed.push("Hello there.")
    feed.ended()
    async with asyncio.timeout(30):  # the final send is late (no settle): the frame goes after the wait
        while not stream.updates:
            await asyncio.sleep(0.01)
    await feed.settle()
    assert stream.updates == ["Hello there."]


def _feeding(feed: Feed) -> contextlib.AbstractContextManager[None]:
    """What the loop does around the handler: ``reply_sink`` finds ``feed``."""
    return ReplyStreams(None).feeding(feed)


async def _frames(feed: Feed, stream: Shown, texts: list[str]) -> None:
    """Push each text and wait until the stream showed it (or the feed stopped)."""
    for text in texts:
        feed.push(text)
        async with asyncio.timeout(30):
            while stream.updates[-1:] != [text] and not feed._closed:
                await asyncio.sleep(0.01)


async def test_a_fence_yes_holds_for_the_frames_of_its_fresh_window_then_is_asked_again() -> None:
    now = [100.0]
    asked: list[float] = []
    answer = [True]

    async def fence() -> bool:
        asked.append(now[0])
        return answer[0]

    stream = Shown()
    feed = Feed(stream, "test:1", fence_fresh_s=10.0, clock=lambda: now[0])
    with fenced(fence):
        await _frames(feed, stream, ["one", "one two", "one two three"])
        assert asked == [100.0]  # the first frame asked; the next two went on its "yes"
        now[0] = 109.9
        await _frames(feed, stream, ["one two three four"])
        assert asked == [100.0]
        now[0] = 110.0  # the window is measured from when the fence was asked: over
        answer[0] = False  # …and meanwhile the chat was taken over
        await _frames(feed, stream, ["one two three four five"])
    await feed.settle()
    assert asked == [100.0, 110.0]
    assert stream.updates == ["one", "one two", "one two three", "one two three four"]  # nothing after "no"
    assert feed._closed


async def test_without_a_fresh_window_every_frame_asks_the_fence() -> None:
    asked: list[str] = []

    async def fence() -> bool:
        asked.append("fence")
        return True

    stream = Shown()
    feed = Feed(stream, "test:1")  # no inbox: no lease, nothing to trust
    with fenced(fence):
        await _frames(feed, stream, ["a", "a b", "a b c"])
    await feed.settle()
    assert len(asked) == 3


@pytest.mark.parametrize("allowed", [True, False])
async def test_the_fence_is_asked_while_the_model_thinks_and_the_first_words_go_on_its_answer(
    allowed: bool,
) -> None:
    asked = asyncio.Event()
    allow = asyncio.Event()
    calls: list[bool] = []

    async def fence() -> bool:
        calls.append(allowed)
        asked.set()
        await allow.wait()
        return allowed

    stream = Shown()
    feed = Feed(stream, "test:1", fence_fresh_s=3600.0)  # the early "yes" still holds however slow the test
    with fenced(fence), _feeding(feed):
        sink = reply_sink()  # what the assistant does right before it asks the model
        await asyncio.wait_for(asked.wait(), 30)  # asked before any text came
        assert sink is feed and stream.updates == []
        feed.push("first words")
        allow.set()
        await _frames(feed, stream, ["first words"])
    await feed.settle()
    assert calls == [allowed]  # one fence: the first frame waited for the early one
    assert stream.updates == (["first words"] if allowed else [])


# ------------------------------------------------------------------------------- through the loop


def _shown(channel: StreamingChannel) -> str | None:
    """The text the channel's latest stream shows last, if any."""
    return channel.streams[-1].updates[-1] if channel.streams and channel.streams[-1].updates else None


def _message(text: str) -> InboundMessage:
    return InboundMessage(channel="test", chat_id="c1", sender_id="u1", text=text)


@pytest.mark.both_stores
async def test_the_loop_streams_a_reply_keeps_its_handle_and_sends_only_the_final_text(
    engine: MemoryEngine,
) -> None:
    channel = StreamingChannel()

    async def handler(message: InboundMessage) -> str:
        sink = reply_sink()
        assert sink is not None
        for text in ("The", "The answer", "The answer is 42."):
            sink(text)
            # the model goes on once the channel showed it (a frame, not a fixed time between words)
            await until(lambda shown=text: _shown(channel) == shown, what=f"{text!r} shown")
        return "The answer is 42."

    inbox = DurableInbox(engine.store)
    loop = ProcessLoop(handler, inbox=inbox)
    loop.add_channel(channel)
    loop.start()
    try:
        await loop.deliver(_message("what is it?"))
        await asyncio.wait_for(loop.drain(), 30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    (stream,) = channel.streams
    assert stream.finished == ["The answer is 42."] and channel.sent == []
    assert stream.updates == ["The", "The answer", "The answer is 42."]
    assert channel.resumed == [""] and await inbox.unanswered() == []


@pytest.mark.both_stores
async def test_after_a_restart_the_stream_resumes_from_its_handle_even_with_streaming_off(
    engine: MemoryEngine,
) -> None:
    inbox = DurableInbox(engine.store)
    stored = await inbox.accept(_message("what is it?"))
    assert stored is not None
    await inbox.remember_reply(stored, '{"shown": 10}')  # written partly before the crash
    channel = StreamingChannel()
    loop = ProcessLoop(lambda m: _answer_whole(), inbox=inbox)
    loop.streams.enabled = False  # agent.stream off since
    loop.add_channel(channel)
    loop.start()
    try:
        await loop.take_waiting(at_start=True, every=True)
        await asyncio.wait_for(loop.drain(), 30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    (stream,) = channel.streams
    assert channel.resumed == ['{"shown": 10}'] and stream.finished == ["whole"] and stream.updates == []


async def _answer_whole() -> str:
    assert reply_sink() is None  # streaming is off: the model is asked for the whole reply
    return "whole"


async def test_a_cancelled_reply_cancels_its_stream() -> None:
    channel = StreamingChannel()
    started = asyncio.Event()

    async def handler(message: InboundMessage) -> str:
        sink = reply_sink()
        assert sink is not None
        sink("so far")
        started.set()
        await asyncio.Event().wait()  # only the cancel ends it (the drain's ceiling fails the test)
        return "never"

    loop = ProcessLoop(handler)
    loop.add_channel(channel)
    loop.start()
    try:
        await loop.deliver(_message("long one"))
        await asyncio.wait_for(started.wait(), 30)
        assert loop.cancel("test:c1")
        await asyncio.wait_for(loop.drain(), 30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    (stream,) = channel.streams
    assert stream.cancelled and stream.finished == [] and channel.sent == []
