"""Stopping the gateway: intake stops first, what was taken in is answered, then everything closes."""

from __future__ import annotations

import json
from pathlib import Path

from channels.base import Deliver, InboundMessage, OutboundMessage
from gateway.app import Runtime
from gateway.config import load_config
from gateway.inbox import DurableInbox
from localservers.openai_server import OpenAIStub, StubReply
from memory.engine import MemoryEngine


class RecordingChannel:
    """A channel (our protocol) that records the order of what the gateway does to it."""

    name = "test"

    def __init__(self) -> None:
        self.events: list[str] = []
        self.deliver: Deliver | None = None

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def stop_receiving(self) -> None:
        self.events.append("stop_receiving")

    async def send(self, message: OutboundMessage) -> None:
        self.events.append(f"send:{message.text}")

    async def stop(self) -> None:
        self.events.append("stop")


def _config(tmp_path: Path, stub: OpenAIStub):
    raw = {
        "provider": {
            "apiKey": "sk-test-000000",
            "baseUrl": stub.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "memory.db"), "extraction": {"quietGap": "1h"}},
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


async def test_intake_stops_first_and_taken_in_messages_are_answered(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="slow answer", delay=0.5))
        channel = RecordingChannel()
        runtime = await Runtime.open(_config(tmp_path, stub), [channel])
        await runtime.start(schedule=False)
        assert channel.deliver is not None
        await channel.deliver(InboundMessage("test", "c1", "u1", "hello", message_id="m1"))
        assert await runtime.shutdown(drain_timeout=30) == 0  # a ceiling: a drain returns when done
        assert channel.events == ["stop_receiving", "send:slow answer", "stop"]


async def test_a_drain_that_runs_out_of_time_reports_what_was_left(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="too late", delay=3600))  # an answer that never comes in time
        channel = RecordingChannel()
        runtime = await Runtime.open(_config(tmp_path, stub), [channel])
        await runtime.start(schedule=False)
        assert channel.deliver is not None
        await channel.deliver(InboundMessage("test", "c1", "u1", "hello", message_id="m1"))
        assert await stub.await_for(lambda s: len(s.requests) == 1, timeout=30)  # the model was asked
        assert await runtime.shutdown(drain_timeout=0.2) == 1
        assert channel.events == ["stop_receiving", "stop"]
    # the message is the inbox's until it is answered (its exchange is written with the answered-mark):
    # nothing half-written, and the next start answers it and keeps the person's words once
    engine = await MemoryEngine.open(tmp_path / "memory.db")
    try:
        assert (await engine.stats())["buffered_turns"] == 0
        assert len(await DurableInbox(engine.store).unanswered()) == 1
    finally:
        await engine.close()
