"""A message left unanswered by the last run is answered once its channel has started, not before.

At start the waiting messages' chats are held before the channels start (so they are answered first, in
order: gateway/app.py); a reply made before its channel is up met a channel that could not send yet
(Telegram: "the telegram channel is not started"), was marked answered with that error, and the person
never got it (seen in tests/gateway/test_streamed_telegram.py on a loaded machine). The worker now waits
for its channel (gateway/channel_starts.py). Here the channel's start is held until the worker either
said it waits or tried to send, so the test does not depend on which comes first in time.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from channels.base import Deliver, InboundMessage, OutboundMessage
from gateway.app import Runtime
from gateway.inbox import DurableInbox
from localservers.openai_server import OpenAIStub
from memory.engine import MemoryEngine
from tests.gateway.test_shutdown import _config
from tests.support.waiting import until

WAITS = "test is not started yet"


class LateChannel:
    """A channel (our protocol) whose start waits for the test; a send before it started fails, as a
    Telegram channel's does."""

    name = "test"

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.started = False
        self.sent: list[str] = []
        self.refused: list[str] = []

    async def start(self, deliver: Deliver) -> None:
        await self.go.wait()
        self.started = True

    async def send(self, message: OutboundMessage) -> None:
        if not self.started:
            self.refused.append(message.text)
            raise RuntimeError("the test channel is not started")
        self.sent.append(message.text)

    async def stop(self) -> None:
        pass


async def test_a_waiting_message_is_answered_once_its_channel_started(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tierclaw.gateway")
    engine = await MemoryEngine.open(tmp_path / "memory.db")
    try:  # stored by the last run and not answered
        assert await DurableInbox(engine.store).accept(InboundMessage("test", "c1", "u1", "hi", "m1"))
    finally:
        await engine.close()
    with OpenAIStub() as stub:
        stub.script("the answer")
        channel = LateChannel()
        runtime = await Runtime.open(_config(tmp_path, stub), [channel])
        try:
            starting = asyncio.create_task(runtime.start(schedule=False))
            await until(
                lambda: bool(channel.refused) or WAITS in caplog.text,
                what="the leftover's worker waiting for its channel, or trying to send",
            )
            channel.go.set()
            await asyncio.wait_for(starting, 60)
            await asyncio.wait_for(runtime.loop.drain(), 60)
            unanswered = await runtime.inbox.unanswered()
        finally:
            await runtime.close()
    assert channel.refused == [] and channel.sent == ["the answer"] and unanswered == []
