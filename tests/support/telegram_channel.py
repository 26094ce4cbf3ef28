"""What the Telegram channel tests share: the channel with short backoffs against the local Bot API server,
and a ``deliver`` that collects what the gateway would have received."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from channels.base import InboundMessage
from channels.telegram.channel import TelegramChannel, TelegramSettings
from localservers.telegram_server import TelegramStub

ME = 42  # the user (and private chat) the tests write as


def quick(channel: TelegramChannel) -> TelegramChannel:
    """Short backoffs and watchdog margin, so failure paths run in a test's time."""
    channel.retry_base_seconds = 0.05
    channel.retry_max_seconds = 0.2
    channel.stall_margin_seconds = 0.5
    return channel


def settings(tg: TelegramStub, allow: tuple[str, ...] = (str(ME),), **extra: object) -> TelegramSettings:
    values: dict = {"poll_timeout": 1, "timeout_seconds": 30.0, **extra}  # a ceiling toward the stub
    return TelegramSettings(token=tg.token, allow_from=allow, base_url=tg.base_url, **values)


class Inbox(list[InboundMessage]):
    """The channel's ``deliver``: collects what the gateway would have received."""

    async def __call__(self, message: InboundMessage) -> None:
        self.append(message)

    async def wait(self, count: int, timeout: float = 30.0) -> InboundMessage:
        for _ in range(int(timeout / 0.01)):
            if len(self) >= count:
                return self[count - 1]
            await asyncio.sleep(0.01)
        raise AssertionError(f"only {len(self)} messages delivered, expected {count}: {list(self)}")


@asynccontextmanager
async def running(
    tg: TelegramStub, allow: tuple[str, ...] = (str(ME),), **extra: object
) -> AsyncIterator[tuple[TelegramChannel, Inbox]]:
    channel = quick(TelegramChannel(settings(tg, allow, **extra)))
    inbox = Inbox()
    await channel.start(inbox)
    try:
        yield channel, inbox
    finally:
        await channel.stop()


async def settled(tg: TelegramStub) -> None:
    """Every pushed update was handled: the channel confirmed them all with its next getUpdates offset."""
    await tg.wait_until(lambda: not tg.pending_updates(), what="all updates confirmed")
