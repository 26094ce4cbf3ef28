"""What the Feishu channel tests share: settings against the local Feishu server, a channel running with a
``deliver`` that records (and can hold) what it hands over, and replies to send."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from channels.base import InboundMessage, OutboundMessage
from channels.feishu.channel import FeishuChannel, FeishuSettings
from localservers.feishu_server import (
    FeishuStub,
)

SECRET = "app-secret-Zq8vK2"
ENCRYPT_KEY = "encrypt-key-Xy7pL4"
TOKEN = "verify-token-Wq3mN9"


class Inbox:
    """The ``deliver`` callback, recording what the channel hands over (``gate``: a closed gate holds
    every delivery until it is opened)."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self.arrived = 0  # deliveries begun (some may be held at the gate)
        self.gate = asyncio.Event()
        self.gate.set()

    async def deliver(self, message: InboundMessage) -> None:
        self.arrived += 1
        await self.gate.wait()
        self.messages.append(message)

    async def until_arrived(self, count: int, timeout: float = 30.0) -> None:
        """Until ``count`` deliveries have begun (held at the gate or not)."""
        async with asyncio.timeout(timeout):
            while self.arrived < count:
                await asyncio.sleep(0.01)

    async def wait(self, count: int, timeout: float = 30.0) -> list[InboundMessage]:
        for _ in range(int(timeout / 0.01)):
            if len(self.messages) >= count:
                return self.messages
            await asyncio.sleep(0.01)
        raise AssertionError(f"{len(self.messages)} messages delivered, expected {count}")


def make_settings(tmp_path: Path, feishu: FeishuStub, **overrides: object) -> FeishuSettings:
    values: dict[str, object] = {
        "app_id": f"cli_{uuid.uuid4().hex[:12]}",  # lark caches tenant tokens per app_id, process-wide
        "app_secret": SECRET,
        "allow_from": ("ou_alice",),
        "verification_token": TOKEN,
        "encrypt_key": ENCRYPT_KEY,
        "domain": feishu.domain,
        "mode": "callback",
        "timeout_seconds": 30.0,  # a ceiling toward the stub; a test of a timeout sets its own
        "callback_port": 0,
    }
    values.update(overrides)
    return FeishuSettings(**values)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def running(settings: FeishuSettings) -> AsyncIterator[tuple[FeishuChannel, Inbox]]:
    channel, inbox = FeishuChannel(settings), Inbox()
    await channel.start(inbox.deliver)
    try:
        yield channel, inbox
    finally:
        await channel.stop()


def callback_url(channel: FeishuChannel) -> str:
    return f"http://127.0.0.1:{channel.callback_port}{channel.settings.callback_path}"


def reply(text: str, to: str = "om_in_1") -> OutboundMessage:
    return OutboundMessage("feishu", "oc_chat_alice", text, reply_to=to)
