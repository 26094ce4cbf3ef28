"""Webhook mode's intake (channels/telegram/webhook.py): Telegram hears 200 only once the gateway has the
update stored, 500 when it could not be stored (so Telegram sends it again), and an update that does not
parse is skipped; bad requests are refused before anything is parsed."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from channels.base import InboundMessage
from channels.telegram.channel import TelegramChannel, TelegramSettings
from localservers.telegram_server import TelegramStub, free_port, post_webhook
from localservers.telegram_webhook import WebhookSender

SECRET = "s3cret-s3cret"


def webhook_channel(tg: TelegramStub, port: int) -> TelegramChannel:
    return TelegramChannel(
        TelegramSettings(
            token=tg.token,
            allow_from=("42",),
            base_url=tg.base_url,
            mode="webhook",
            timeout_seconds=30.0,
            webhook_url=f"http://127.0.0.1:{port}/telegram",
            webhook_port=port,
            webhook_secret=SECRET,
        )
    )


async def test_the_answer_waits_until_the_update_is_stored(tg: TelegramStub) -> None:
    stored = asyncio.Event()
    release = asyncio.Event()
    entered = asyncio.Event()
    got: list[InboundMessage] = []

    async def slow_store(message: InboundMessage) -> None:
        if message.text == "hello":  # this one is slow to store; any other is stored at once
            entered.set()
            await release.wait()
            stored.set()
        got.append(message)

    port = free_port()
    channel = webhook_channel(tg, port)
    url = f"http://127.0.0.1:{port}/telegram"
    await channel.start(slow_store)
    try:
        post = asyncio.create_task(post_webhook(url, tg.update(tg.message("hello")), SECRET))
        await asyncio.wait_for(entered.wait(), 30)  # the update is with the gateway, being stored
        # A later update is stored and answered meanwhile (a barrier, not a pause): an answer to the first
        # would have come back before this one's...
        assert await post_webhook(url, tg.update(tg.message("later")), SECRET) == 200
        assert not post.done()  # ...but it is not answered while the gateway has not stored it
        release.set()
        assert await asyncio.wait_for(post, 30) == 200
        assert stored.is_set() and [m.text for m in got] == ["later", "hello"]
    finally:
        await channel.stop()


async def test_an_update_that_cannot_be_stored_is_answered_500_and_comes_again(tg: TelegramStub) -> None:
    attempts: list[str] = []

    async def flaky_store(message: InboundMessage) -> None:
        attempts.append(message.text)
        if len(attempts) == 1:
            raise OSError("database is locked")

    port = free_port()
    channel = webhook_channel(tg, port)
    await channel.start(flaky_store)
    sender = WebhookSender(tg, retry_after=0.05, give_up_after=30)
    try:
        assert tg.webhook["url"] == f"http://127.0.0.1:{port}/telegram"  # set with setWebhook
        posts = await sender.deliver(tg.update(tg.message("keep me")))
    finally:
        await sender.close()
        await channel.stop()
    assert posts == 2 and sender.failed_attempts == 1  # the 500, then the resent copy stored
    assert attempts == ["keep me", "keep me"]


@pytest.mark.parametrize(
    ("body", "content_type", "secret", "status"),
    [
        (b'{"update_id": 1}', "application/json", "wrong", 403),
        (b"not json", "application/json", SECRET, 400),
        (b"[1, 2]", "application/json", SECRET, 400),
        (b'{"update_id": 7, "message": {"text": "no date, no chat"}}', "application/json", SECRET, 200),
    ],
)
async def test_bad_requests_are_refused_and_an_unparsable_update_is_skipped(
    tg: TelegramStub, body: bytes, content_type: str, secret: str, status: int
) -> None:
    got: list[InboundMessage] = []

    async def store(message: InboundMessage) -> None:
        got.append(message)

    port = free_port()
    channel = webhook_channel(tg, port)
    await channel.start(store)
    try:
        headers = {"Content-Type": content_type, "X-Telegram-Bot-Api-Secret-Token": secret}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"http://127.0.0.1:{port}/telegram", data=body, headers=headers) as answer,
        ):
            assert answer.status == status
    finally:
        await channel.stop()
    assert got == []
