"""The Telegram channel receiving: polling failures and restarts, stopping in two steps, start failures, the
webhook, updates that do not parse or could not be stored (the real python-telegram-bot against the local
Bot API server).
"""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from channels.base import ChannelError, InboundMessage, OutboundMessage
from channels.telegram.channel import TelegramChannel, TelegramSettings
from localservers.telegram_server import (
    BOT_ID,
    Fault,
    TelegramStub,
    conflict,
    free_port,
    post_webhook,
    unauthorized,
    webhook_active,
)
from tests.support.telegram_channel import Inbox, quick, running, settings, settled

# PTB warns when it builds a RetryAfter (its int ``retry_after`` becomes a timedelta in v23); the channel
# reads either form.
pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")


# --- receiving: failures and restarts ----------------------------------------------------------------


async def test_conflict_is_logged_once_and_polling_recovers(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", conflict(), conflict(), conflict())
    with caplog.at_level(logging.INFO, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("still there?"))
            assert (await inbox.wait(1)).text == "still there?"
    lines = [r.getMessage() for r in caplog.records if r.name == "tierclaw.channels"]
    assert sum("another bot instance is polling with this token" in line for line in lines) == 1
    assert not any("webhook" in line for line in lines)
    assert any("receiving messages again" in line for line in lines)
    assert [c.status for c in tg.requests("getUpdates")][:4] == [409, 409, 409, 200]
    assert len(tg.requests("deleteWebhook")) == 1  # no webhook was in the way


async def test_a_webhook_set_while_polling_is_deleted_again(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("first"))
            await inbox.wait(1)
            tg.set_webhook("https://other-deployment.example/hook")  # getUpdates now answers 409
            await tg.wait_until(lambda: any(c.status == 409 for c in tg.requests("getUpdates")))
            tg.push(tg.message("second"))
            assert (await inbox.wait(2)).text == "second"
    lines = [r.getMessage() for r in caplog.records if r.name == "tierclaw.channels"]
    assert sum("a webhook is set for this bot" in line for line in lines) == 1
    assert not any("another bot instance" in line for line in lines)
    assert len(tg.requests("deleteWebhook")) == 2 and tg.webhook == {}


async def test_a_scripted_webhook_conflict_is_told_apart(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", webhook_active(), conflict())
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("hi"))
            await inbox.wait(1)
    assert "a webhook is set for this bot" in caplog.text
    assert "another bot instance is polling with this token" in caplog.text
    calls = [c.method for c in tg.requests() if c.method in ("deleteWebhook", "getUpdates")]
    assert calls[:4] == ["deleteWebhook", "getUpdates", "deleteWebhook", "getUpdates"]


@pytest.mark.parametrize(
    ("fault", "logged"),
    [
        (Fault(hang=30), "getUpdates stalled"),  # httpx's read timeout fires
        (Fault(trickle=30), "getUpdates stalled"),  # a byte now and then: only the watchdog notices
        (unauthorized(), "Telegram rejected the bot token"),  # PTB's own loop would stop for good here
        (Fault(502, "Bad Gateway"), "polling Telegram failed"),
    ],
)
async def test_a_stalled_or_failing_poll_is_restarted(
    tg: TelegramStub, fault: Fault, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", fault)
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(tg, timeout_seconds=1.0) as (_, inbox):
            tg.push(tg.message("after the stall"))
            assert (await inbox.wait(1)).text == "after the stall"
    assert len(tg.requests("getUpdates")) >= 2
    assert logged in caplog.text


async def test_stop_confirms_handled_updates_so_a_restart_does_not_repeat_them(tg: TelegramStub) -> None:
    async with running(tg, poll_timeout=30) as (_, inbox):
        tg.push(tg.message("once"))
        await inbox.wait(1)
        polled = len(tg.requests("getUpdates"))
    assert tg.pending_updates() == []
    # The stop's own confirmation (timeout 0). Not necessarily the last request the server saw: the long
    # poll the stop abandons may reach it after (CI, stop 53).
    assert any(c.params["timeout"] == "0" for c in tg.requests("getUpdates")[polled:])
    async with running(tg) as (_, inbox):
        tg.push(tg.message("twice"))
        assert (await inbox.wait(1)).text == "twice"
        await settled(tg)
    assert [m.text for m in inbox] == ["twice"]


async def test_a_rejected_token_fails_start_without_showing_it(tg: TelegramStub) -> None:
    secret = "999:this-token-is-wrong"
    channel = TelegramChannel(TelegramSettings(token=secret, allow_from=("42",), base_url=tg.base_url))
    with pytest.raises(RuntimeError) as failure:
        await channel.start(Inbox())
    assert "rejected the token" in str(failure.value)
    assert secret not in str(failure.value) and failure.value.__suppress_context__


async def test_the_token_never_reaches_the_logs(tg: TelegramStub, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="httpx")  # httpx logs each request URL (with the token) at INFO
    tg.fail("getUpdates", conflict())
    async with running(tg) as (channel, inbox):
        tg.push(tg.message("hello"))
        await inbox.wait(1)
        await channel.send(OutboundMessage("telegram", "42", "reply", "1"))
    assert "HTTP Request: POST" in caplog.text and "<redacted>" in caplog.text
    assert tg.token not in caplog.text
    assert tg.token.split(":")[1] not in caplog.text
    assert not logging.getLogger("httpx").filters  # the redaction is removed with the channel


# --- stopping in two steps -----------------------------------------------------------------------


class Gate(Inbox):
    """A ``deliver`` that holds the first message until ``release()`` (the gateway being slow to take it)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.released = asyncio.Event()

    def release(self) -> None:
        self.released.set()

    async def __call__(self, message: InboundMessage) -> None:
        self.entered.set()
        await self.released.wait()
        self.append(message)


async def test_stop_receiving_confirms_only_what_was_handed_over_and_replies_still_go_out(
    tg: TelegramStub,
) -> None:
    first = tg.push(tg.message("one"))
    tg.push(tg.message("two"))
    tg.push(tg.message("three"))  # all three come back from the first getUpdates
    channel = quick(TelegramChannel(settings(tg)))
    gate = Gate()
    await channel.start(gate)
    try:
        await asyncio.wait_for(gate.entered.wait(), 30)
        stopping = asyncio.create_task(channel.stop_receiving())
        await tg.wait_until(lambda: channel._intake_stopped.is_set(), what="intake stopped")
        gate.release()  # "one" reaches the gateway after intake stopped; "two" and "three" never do
        await asyncio.wait_for(stopping, 30)
        assert [m.message_id for m in gate] == [str(first)]
        assert tg.pending_updates() == [2, 3]  # "one" confirmed, the others Telegram sends again
        polls = len(tg.requests("getUpdates"))
        tg.push(tg.message("four"))
        # the gateway drains: typing and replies still work
        channel.typing_every_seconds = 0.05
        async with channel.working(gate[0]):
            await tg.wait_until(lambda: len(tg.requests("sendChatAction")) >= 2, what="typing")
            await channel.send(OutboundMessage("telegram", "42", "answer to one", str(first)))
        await channel.stop_receiving()  # idempotent
        assert channel._poller is None  # its poll loop ended with the first stop_receiving...
        assert len(tg.requests("getUpdates")) == polls  # ...so nothing is fetched any more
    finally:
        await asyncio.wait_for(channel.stop(), 30)
    await channel.stop()  # safe twice
    assert [c.params["text"] for c in tg.sent()] == ["answer to one"]
    assert tg.pending_updates() == [2, 3, 4] and [m.text for m in gate] == ["one"]


async def test_stop_receiving_abandons_a_long_poll_at_once(tg: TelegramStub) -> None:
    async with running(tg, poll_timeout=600) as (channel, inbox):
        tg.push(tg.message("handled"))
        await inbox.wait(1)
        await tg.wait_until(lambda: len(tg.requests("getUpdates")) >= 2, what="a long poll in flight")
        await asyncio.wait_for(channel.stop_receiving(), 60)  # not the 600 s its long poll could take
        assert tg.pending_updates() == [] and channel._poller is None
        tg.push(tg.message("too late"))  # nobody polls any more: it waits at Telegram
        await channel.send(OutboundMessage("telegram", "42", "still sending", ""))
    assert [m.text for m in inbox] == ["handled"]
    assert len(tg.pending_updates()) == 1  # "too late" waits at Telegram for the next start
    assert [c.params["text"] for c in tg.sent()] == ["still sending"]


async def test_stop_receiving_closes_the_webhook_server_but_sending_works(tg: TelegramStub) -> None:
    port = free_port()
    extra = {"mode": "webhook", "webhook_url": "https://b.example.com/h", "webhook_port": port}
    async with running(tg, webhook_secret="s3cret-s3cret", **extra) as (channel, inbox):
        url = f"http://127.0.0.1:{port}/telegram"
        assert await post_webhook(url, tg.update(tg.message("before")), "s3cret-s3cret") == 200
        await channel.stop_receiving()
        assert [m.text for m in inbox] == ["before"]  # what the server accepted was handed over
        with pytest.raises(OSError):  # connection refused: Telegram keeps the update and retries later
            await post_webhook(url, tg.update(tg.message("after")), "s3cret-s3cret")
        await channel.send(OutboundMessage("telegram", "42", "reply to before", ""))
    assert [c.params["text"] for c in tg.sent()] == ["reply to before"]
    assert tg.webhook  # not deleted: updates wait at Telegram for the next start


# --- start failures ----------------------------------------------------------------------------------


async def test_a_refused_set_webhook_is_a_channel_error_without_a_traceback(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tg.fail("setWebhook", Fault(400, "Bad Request: bad webhook: HTTPS url must be provided for webhook"))
    port = free_port()
    channel = TelegramChannel(
        settings(tg, mode="webhook", webhook_url="http://insecure.example/h", webhook_port=port)
    )
    with pytest.raises(ChannelError) as failure:
        await channel.start(Inbox())
    message = str(failure.value)
    assert message.startswith("[telegram] setWebhook refused: Bad webhook: https url must be provided")
    assert tg.token not in message and failure.value.__suppress_context__
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert tg.token not in caplog.text
    assert not channel.holds_resources and not logging.getLogger("httpx").filters  # cleaned up
    assert not logging.getLogger("telegram.ext").filters
    with socket.socket() as probe:  # no webhook server left behind
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    await channel.stop()  # still safe


async def test_a_webhook_port_in_use_is_a_channel_error(tg: TelegramStub) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        channel = TelegramChannel(
            settings(tg, mode="webhook", webhook_url="https://b.example.com/h", webhook_port=port)
        )
        with pytest.raises(ChannelError) as failure:
            await channel.start(Inbox())
    message = str(failure.value)
    assert message.startswith(f"[telegram] cannot listen for the webhook on 127.0.0.1:{port}:")
    assert tg.token not in message and failure.value.__suppress_context__
    assert not channel.holds_resources and not logging.getLogger("httpx").filters


# --- webhook -----------------------------------------------------------------------------------------


async def test_webhook_sets_a_random_secret_and_checks_it(tg: TelegramStub) -> None:
    port = free_port()
    async with running(tg, mode="webhook", webhook_url="https://bot.example.com/tg", webhook_port=port) as (
        _,
        inbox,
    ):
        assert tg.webhook["url"] == "https://bot.example.com/tg"
        secret = tg.webhook["secret_token"]
        assert len(secret) >= 32 and tg.requests("getUpdates") == []
        url = f"http://127.0.0.1:{port}/telegram"
        assert await post_webhook(url, tg.update(tg.message("no secret"))) == 403
        assert await post_webhook(url, tg.update(tg.message("wrong")), secret="nope") == 403
        typed = tg.update(tg.message("wrong type"))
        assert await post_webhook(url, typed, secret, content_type="application/json; charset=utf-8") == 403
        assert await post_webhook(url, tg.update(tg.message("right")), secret=secret) == 200
        assert (await inbox.wait(1)).text == "right"
    assert [m.text for m in inbox] == ["right"]  # the refused ones were answered 403: never delivered


async def test_webhook_uses_the_configured_secret(tg: TelegramStub) -> None:
    port = free_port()
    extra = {"mode": "webhook", "webhook_url": "https://b.example.com/h", "webhook_port": port}
    async with running(tg, webhook_path="hook", webhook_secret="my-Secret_1", **extra) as (_, inbox):
        assert tg.webhook["secret_token"] == "my-Secret_1"
        update = tg.update(tg.message("hi", chat=tg.group(), entities=[]))  # group, no mention
        assert await post_webhook(f"http://127.0.0.1:{port}/hook", update, "my-Secret_1") == 200
        update = tg.update(tg.message("@stub_bot hi", chat=tg.group()))
        assert await post_webhook(f"http://127.0.0.1:{port}/hook", update, "my-Secret_1") == 200
        assert (await inbox.wait(1)).text == "hi"
    assert len(inbox) == 1 and inbox[0].is_group


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="mode"):
        TelegramChannel(TelegramSettings(token="1:a", allow_from=(), mode="pull"))
    with pytest.raises(ValueError, match="group_policy"):
        TelegramChannel(TelegramSettings(token="1:a", allow_from=(), group_policy="all"))
    assert TelegramChannel(TelegramSettings(token="1:a", allow_from=())).name == "telegram"
    assert BOT_ID == 123456


async def test_an_update_that_does_not_parse_is_skipped_and_polling_goes_on(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.push(tg.message("before the poison"))
    poison = tg.message("secret words in a broken update")
    del poison["date"]  # PTB cannot build a Message without it: the whole batch fails to parse
    tg.push(poison)
    tg.push(tg.message("after the poison"))
    with caplog.at_level(logging.INFO):  # above DEBUG nothing of a message is logged (README)
        async with running(tg) as (_, inbox):
            await inbox.wait(2)
            tg.push(tg.message("later"))
            await inbox.wait(3)
    assert [m.text for m in inbox] == ["before the poison", "after the poison", "later"]
    skipped = [r.getMessage() for r in caplog.records if "skipped update" in r.getMessage()]
    assert len(skipped) == 1 and "KeyError" in skipped[0]
    assert "secret words" not in caplog.text  # neither our line nor PTB's dump of the batch
    offsets = [c.params.get("offset") for c in tg.requests("getUpdates")]
    assert offsets.count(offsets[-1]) <= 2  # the offset moved on: no retry loop on the same batch


async def test_an_update_the_gateway_could_not_store_stays_unconfirmed_and_comes_again(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    attempts: list[str] = []

    async def deliver(message: InboundMessage) -> None:
        attempts.append(message.text)
        if len(attempts) < 3:
            raise OSError("database is locked")

    channel = quick(TelegramChannel(settings(tg)))
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        await channel.start(deliver)
        try:
            tg.push(tg.message("keep me"))
            tg.push(tg.message("and me"))
            await tg.wait_until(lambda: attempts.count("and me") == 1, what="both stored")
        finally:
            await channel.stop()
    assert attempts == ["keep me", "keep me", "keep me", "and me"]  # fetched again until stored, in order
    offsets = [c.params.get("offset") for c in tg.requests("getUpdates")]
    assert offsets[:3] == [None, None, None]  # asked from the start again: nothing was confirmed meanwhile
    assert sum("not stored" in r.getMessage() for r in caplog.records) == 2


async def test_a_batchs_chats_are_handed_over_at_once_each_chats_in_order(tg: TelegramStub) -> None:
    # Storing a message waits for the database: a chat whose message is slow to store must not hold up
    # the other chats of the batch (bench/README.md, "Streaming"), while each chat's messages still
    # reach the gateway one after another, in order.
    slow = asyncio.Event()
    handed: list[str] = []

    async def deliver(message: InboundMessage) -> None:
        handed.append(message.text)
        if message.text == "ann 1":
            await slow.wait()  # still being stored when the other chat's messages arrive
        elif message.text == "bob 2":
            slow.set()

    ann, bob = tg.user(42), tg.user(43)
    for text, sender in (("ann 1", ann), ("ann 2", ann), ("bob 1", bob), ("bob 2", bob)):
        tg.push(tg.message(text, sender=sender))  # one batch: the first getUpdates takes all four
    channel = quick(TelegramChannel(settings(tg, allow=("42", "43"))))
    await channel.start(deliver)
    try:
        await tg.wait_until(lambda: len(handed) == 4, what="all four handed over")
        await settled(tg)
    finally:
        await channel.stop()
    # Bob's messages went while Ann's first was being stored; Ann's second only after it.
    assert handed == ["ann 1", "bob 1", "bob 2", "ann 2"]


async def test_an_update_stored_after_a_chat_that_failed_comes_again_and_the_first_chat_in_order(
    tg: TelegramStub,
) -> None:
    attempts: list[str] = []

    async def deliver(message: InboundMessage) -> None:
        attempts.append(message.text)
        if message.text == "ann 1" and attempts.count("ann 1") == 1:
            raise OSError("database is locked")

    ann, bob = tg.user(42), tg.user(43)
    for text, sender in (("ann 1", ann), ("bob 1", bob), ("ann 2", ann)):
        tg.push(tg.message(text, sender=sender))
    channel = quick(TelegramChannel(settings(tg, allow=("42", "43"))))
    await channel.start(deliver)
    try:
        await tg.wait_until(lambda: attempts.count("ann 2") == 1, what="stored after the retry")
        await settled(tg)
    finally:
        await channel.stop()
    # Nothing was confirmed past Ann's failed message: Bob's, stored meanwhile, came again with it (the
    # gateway's inbox answers a delivery once); Ann's second waited for her first.
    assert [a for a in attempts if a.startswith("ann")] == ["ann 1", "ann 1", "ann 2"]
    assert attempts.count("bob 1") == 2 and attempts[:2] == ["ann 1", "bob 1"]
