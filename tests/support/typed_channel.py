"""A channel (our ``Channel`` protocol) a test types into as user u1 of chat c1; it keeps every reply the
gateway sends, so a test can wait for the answer to what it said."""

from __future__ import annotations

import asyncio
import time

from channels.base import Deliver, InboundMessage, OutboundMessage


class ChatChannel:
    """A channel (our protocol) we type into; it records every reply the gateway sends."""

    name = "test"

    def __init__(self) -> None:
        self.deliver: Deliver | None = None
        self.replies: list[str] = []

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def send(self, message: OutboundMessage) -> None:
        self.replies.append(message.text)

    async def stop(self) -> None:
        pass

    async def say(self, text: str, timeout: float = 30.0) -> str:
        """Send ``text`` as user u1 and wait for the gateway's answer."""
        assert self.deliver is not None
        count = len(self.replies) + 1
        await self.deliver(InboundMessage("test", "c1", "u1", text, message_id=f"m{count}"))
        deadline = time.monotonic() + timeout
        while len(self.replies) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no reply to {text!r}: {self.replies}")
            await asyncio.sleep(0.01)
        return self.replies[count - 1]
