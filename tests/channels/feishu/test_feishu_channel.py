"""The Feishu channel on its own (no gateway) against the local Feishu stub: parsing events, sending
replies (uuid, retries, fallbacks, errors), both connection modes' start/stop, and secrets kept out of logs.
The real lark-oapi SDK does every request."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from channels.base import InboundMessage, OutboundMessage
from channels.feishu.channel import FeishuChannel, FeishuError, FeishuSettings
from channels.feishu.events import FeishuEvent, Mention, inbound_message, message_uuid
from channels.feishu.open_api import FeishuApiError
from localservers.feishu_server import (
    BOT_NOT_IN_CHAT,
    BOT_OPEN_ID,
    RATE_LIMITED,
    SERVER_ERROR,
    FeishuStub,
    mention,
    message_event,
    post_callback,
)

SECRET = "app-secret-Zq8vK2"
ENCRYPT_KEY = "encrypt-key-Xy7pL4"
TOKEN = "verify-token-Wq3mN9"


class Inbox:
    """The ``deliver`` callback, recording what the channel hands over (``gate``: a closed gate holds
    every delivery until it is opened)."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def deliver(self, message: InboundMessage) -> None:
        await self.gate.wait()
        self.messages.append(message)

    async def wait(self, count: int, timeout: float = 10.0) -> list[InboundMessage]:
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
        "state_path": tmp_path / "channels.db",
        "verification_token": TOKEN,
        "encrypt_key": ENCRYPT_KEY,
        "domain": feishu.domain,
        "mode": "callback",
        "timeout_seconds": 5.0,
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


# --- parsing -----------------------------------------------------------------------------------------


def event(text: str = "hi", **fields: object) -> FeishuEvent:
    values: dict[str, object] = {
        "event_id": "ev1",
        "message_id": "om1",
        "chat_id": "oc1",
        "chat_type": "p2p",
        "sender_open_id": "ou_alice",
        "sender_type": "user",
        "message_type": "text",
        "content": json.dumps({"text": text}),
    }
    values.update(fields)
    return FeishuEvent(**values)  # type: ignore[arg-type]


BOT = Mention("@_user_1", BOT_OPEN_ID, "StubBot")


def test_p2p_text() -> None:
    message = inbound_message(event("hello"), BOT_OPEN_ID)
    assert message == InboundMessage(
        channel="feishu",
        chat_id="oc1",
        sender_id="ou_alice",
        text="hello",
        message_id="om1",
        delivery_id="ev1",
    )


def test_group_needs_the_bot_mentioned_and_placeholders_are_resolved() -> None:
    assert inbound_message(event("hello all", chat_type="group"), BOT_OPEN_ID) is None
    bob = Mention("@_user_2", "ou_bob", "Bob")
    other_only = event("@_user_2 hi", chat_type="group", mentions=(bob,))
    assert inbound_message(other_only, BOT_OPEN_ID) is None
    many = tuple(Mention(f"@_user_{i}", f"ou_{i}", f"P{i}") for i in range(2, 11))
    text = "@_user_1 ask @_user_2 and @_user_10 about lunch"
    message = inbound_message(event(text, chat_type="group", mentions=(BOT, *many)), BOT_OPEN_ID)
    assert message is not None
    assert message.text == "ask @P2 and @P10 about lunch"
    assert message.is_group and message.mentions_bot


def test_unknown_bot_id_any_mention_counts() -> None:
    bob = Mention("@_user_1", "ou_bob", "Bob")
    message = inbound_message(event("@_user_1 hi", chat_type="group", mentions=(bob,)), "")
    assert message is not None and message.text == "hi"


@pytest.mark.parametrize("kind", ["image", "file", "audio", "media", "sticker", "interactive"])
def test_non_text_messages_are_attachments(kind: str) -> None:
    message = inbound_message(event(message_type=kind, content='{"image_key": "img_1"}'), BOT_OPEN_ID)
    assert message is not None
    assert (message.text, message.attachment) == ("", kind)


def test_post_becomes_its_text() -> None:
    content = '{"title": "", "content": [[{"tag": "text", "text": "see "}, {"tag": "a", "text": "this"}]]}'
    message = inbound_message(event(message_type="post", content=content), BOT_OPEN_ID)
    assert message is not None
    assert (message.text, message.attachment) == ("see this", "")


def test_message_uuid_is_deterministic_short_and_distinct() -> None:
    first = message_uuid("om_1", 0, "hello")
    assert first == message_uuid("om_1", 0, "hello")
    assert len(first) <= 50
    assert len({first, message_uuid("om_1", 1, "hello"), message_uuid("om_2", 0, "hello")}) == 3
    assert message_uuid("om_1", 0, "hello!") != first


def test_settings_repr_hides_secrets(tmp_path: Path) -> None:
    settings = FeishuSettings("cli_x", SECRET, ("*",), tmp_path / "c.db", TOKEN, ENCRYPT_KEY)
    shown = repr(settings)
    assert "cli_x" in shown
    assert SECRET not in shown and TOKEN not in shown and ENCRYPT_KEY not in shown


# --- sending -----------------------------------------------------------------------------------------


async def test_plain_reply_is_a_text_reply_with_a_uuid(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply("Hello there"))
    [sent] = feishu.sent
    assert (sent.kind, sent.target, sent.msg_type, sent.text) == ("reply", "om_in_1", "text", "Hello there")
    assert sent.uuid == message_uuid("om_in_1", 0, "Hello there")
    assert feishu.send_requests()[0].body["reply_in_thread"] is False


async def test_without_reply_to_the_message_is_created_in_the_chat(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(OutboundMessage("feishu", "oc_chat_alice", "Good morning"))
    [sent] = feishu.sent
    assert (sent.kind, sent.target, sent.text) == ("create", "oc_chat_alice", "Good morning")
    assert feishu.send_requests()[0].query == {"receive_id_type": "chat_id"}


async def test_a_retried_send_is_not_posted_twice(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply("Only once, please"))
        await channel.send(reply("Only once, please"))
    requests = feishu.send_requests()
    assert len(requests) == 2
    assert requests[0].body["uuid"] == requests[1].body["uuid"]
    assert len(feishu.sent) == 1


async def test_rate_limit_is_retried(tmp_path: Path, feishu: FeishuStub) -> None:
    feishu.fail_sends(RATE_LIMITED, RATE_LIMITED)
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply("after the limit"))
    assert len(feishu.send_requests()) == 3
    assert [s.text for s in feishu.sent] == ["after the limit"]


async def test_server_errors_are_retried_a_bounded_number_of_times(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    feishu.fail_sends(SERVER_ERROR)
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        channel.retry_base_seconds = 0.001
        await channel.send(reply("second time lucky"))
        assert len(feishu.sent) == 1
        feishu.fail_sends(*[SERVER_ERROR] * 10)
        with pytest.raises(FeishuApiError) as caught:
            await channel.send(reply("never"))
    assert caught.value.status == 500
    assert len(feishu.send_requests()) == 2 + 4


async def test_a_refusal_raises_with_code_and_message_but_no_secret(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    feishu.fail_sends(BOT_NOT_IN_CHAT)
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        with pytest.raises(FeishuApiError) as caught:
            await channel.send(reply("hello?"))
    text = str(caught.value)
    assert "230002" in text and "out of the chat" in text and "om_in_1" in text
    assert SECRET not in text
    assert len(feishu.send_requests()) == 1  # not retried
    assert feishu.sent == []


async def test_markdown_goes_as_post_and_falls_back_to_text(tmp_path: Path, feishu: FeishuStub) -> None:
    markdown = "**Plan**\n- one\n- two"
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply(markdown, to="om_a"))
        feishu.refuse_posts = True
        await channel.send(reply(markdown, to="om_b"))
    first, second = feishu.sent
    assert first.msg_type == "post"
    assert first.content == {"zh_cn": {"content": [[{"tag": "md", "text": markdown}]]}}
    assert (second.msg_type, second.text, second.target) == ("text", markdown, "om_b")
    assert [r.body["msg_type"] for r in feishu.send_requests()] == ["post", "post", "text"]


# --- receiving ---------------------------------------------------------------------------------------


async def test_callback_restores_lowercased_signature_headers(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, inbox):
        status, _ = await post_callback(
            callback_url(channel),
            message_event("hi", token=TOKEN),
            encrypt_key=ENCRYPT_KEY,
            lowercase_headers=True,
        )
        assert status == 200
        [message] = await inbox.wait(1)
    assert message.text == "hi"


async def test_callback_without_encryption(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path, feishu, encrypt_key="")
    async with running(settings) as (channel, inbox):
        assert "X-Lark-Signature of incoming events is not checked" in caplog.text
        status, _ = await post_callback(
            callback_url(channel), message_event("plain", token=TOKEN), encrypt_key=""
        )
        assert status == 200
        assert (await inbox.wait(1))[0].text == "plain"
        status, _ = await post_callback(
            callback_url(channel), message_event("forged", token="wrong"), encrypt_key=""
        )
        assert status != 200


async def test_bot_info_unavailable_any_mention_counts(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    feishu.bot_info_code = 99991672
    async with running(make_settings(tmp_path, feishu)) as (channel, inbox):
        assert channel.bot_open_id == ""
        group = message_event(
            "@_user_1 hi",
            chat_type="group",
            chat_id="oc_group",
            mentions=[mention(open_id="ou_bob")],
            token=TOKEN,
        )
        await post_callback(callback_url(channel), group, encrypt_key=ENCRYPT_KEY)
        [message] = await inbox.wait(1)
    assert message.text == "hi" and message.mentions_bot
    assert "any @mention will count" in caplog.text


async def test_with_encryption_no_signature_warning(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(make_settings(tmp_path, feishu)):
        pass
    assert "not checked" not in caplog.text


async def test_bot_info_is_retried_until_known_then_groups_are_exact(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    feishu.bot_info_code = 99991672
    channel, inbox = FeishuChannel(make_settings(tmp_path, feishu)), Inbox()
    channel.bot_info_retry_seconds = 0.05
    await channel.start(inbox.deliver)
    try:
        assert channel.bot_open_id == ""
        assert "retrying in the background" in caplog.text
        await asyncio.sleep(0.2)  # a retry or two that still fail
        feishu.bot_info_code = 0
        assert await feishu.wait_for(lambda _: channel.bot_open_id == BOT_OPEN_ID, timeout=5)
        group = {"chat_type": "group", "chat_id": "oc_group", "token": TOKEN}
        someone_else = message_event("@_user_1 hi Bob", mentions=[mention(open_id="ou_bob")], **group)
        to_the_bot = message_event("@_user_1 hi bot", mentions=[mention()], **group)
        for incoming in (someone_else, to_the_bot):
            status, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)
            assert status == 200
        messages = await inbox.wait(1)  # the intake is in order: Bob's was decided first
    finally:
        await channel.stop()
    assert [m.text for m in messages] == ["hi bot"]
    assert not channel.holds_resources  # the bot-info retry ended with the channel


async def test_callback_port_in_use_is_a_feishu_error(tmp_path: Path, feishu: FeishuStub) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        channel = FeishuChannel(make_settings(tmp_path, feishu, callback_port=port))
        with pytest.raises(FeishuError, match=f"cannot listen on 127.0.0.1:{port}: ") as caught:
            await channel.start(Inbox().deliver)
    assert not isinstance(caught.value.__cause__, OSError)
    assert not channel.holds_resources  # cleaned up
    await channel.stop()  # still fine
    async with running(make_settings(tmp_path, feishu, callback_port=port)) as (channel, _):
        assert channel.callback_port == port  # the port was released by the failed start's cleanup


async def test_a_reply_answered_too_late_is_retried_and_posted_once(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    feishu.delay_sends(2.0)  # Feishu posts the message, but its answer comes after the client's timeout
    async with running(make_settings(tmp_path, feishu, timeout_seconds=0.5)) as (channel, _):
        channel.retry_base_seconds = 0.01
        await channel.send(reply("just once"))
    first, second = feishu.send_requests()
    assert first.body["uuid"] == second.body["uuid"] == message_uuid("om_in_1", 0, "just once")
    assert [(s.kind, s.text) for s in feishu.sent] == [("reply", "just once")]


async def _refused(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return True
    writer.close()
    return False


@pytest.mark.parametrize("mode", ["callback", "websocket"])
async def test_stop_receiving_hands_over_what_was_taken_in_and_keeps_sending(
    tmp_path: Path, feishu: FeishuStub, mode: str
) -> None:
    channel, inbox = FeishuChannel(make_settings(tmp_path, feishu, mode=mode)), Inbox()
    await channel.start(inbox.deliver)
    try:
        inbox.gate.clear()  # the gateway is slow to store messages: nothing is acknowledged meanwhile

        async def send(text: str) -> object:
            incoming = message_event(text, token=TOKEN)
            if mode == "callback":
                return (await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY))[0]
            return await feishu.wait_for_ack(await feishu.push_event(incoming))

        acks = [asyncio.create_task(send("first"))]
        await asyncio.sleep(0.2)
        assert not acks[0].done()  # not acknowledged before the gateway has it
        inbox.gate.set()
        assert await asyncio.wait_for(acks[0], 5) in (200, {"code": 200})
        inbox.gate.clear()
        acks.append(asyncio.create_task(send("second")))
        await asyncio.sleep(0.2)
        stopping = asyncio.create_task(channel.stop_receiving())
        if mode == "callback":
            deadline = time.monotonic() + 5
            while not await _refused(channel.callback_port or 0):
                assert time.monotonic() < deadline, "the callback server still accepts connections"
                await asyncio.sleep(0.02)
            with pytest.raises(aiohttp.ClientConnectionError):  # Feishu will redeliver it later
                await post_callback(
                    callback_url(channel), message_event("too late", token=TOKEN), encrypt_key=ENCRYPT_KEY
                )
        await asyncio.sleep(0.1)
        assert not stopping.done()  # it waits until what was taken in is handed over
        inbox.gate.set()
        await asyncio.wait_for(stopping, timeout=5)
        if mode == "websocket":  # the connection closed once the event it was passing on was stored
            await feishu.wait_disconnected()
            assert await feishu.wait_for(lambda _: not _websocket_threads(), timeout=5)
        assert [m.text for m in inbox.messages] == ["first", "second"]
        if mode == "callback":  # its request was answered once the gateway had it
            assert await asyncio.wait_for(acks[1], 5) == 200
        await channel.send(reply("still answering"))
        assert [s.text for s in feishu.sent] == ["still answering"]
        if mode == "websocket":  # lark's global loop is free for another channel
            assert feishu.open_connections() == []
    finally:
        await channel.stop()
        await channel.stop()  # idempotent
    assert channel.seen is None and _websocket_threads() == []


async def test_stop_receiving_then_stop_on_an_idle_channel(tmp_path: Path, feishu: FeishuStub) -> None:
    channel = FeishuChannel(make_settings(tmp_path, feishu))
    await channel.start(Inbox().deliver)
    await channel.stop_receiving()
    await channel.stop_receiving()
    await channel.stop()
    assert channel.seen is None


async def test_bot_messages_are_never_answered(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu, allow_from=("*",))) as (channel, inbox):
        url = callback_url(channel)
        await post_callback(
            url, message_event("beep", sender_type="app", token=TOKEN), encrypt_key=ENCRYPT_KEY
        )
        await post_callback(url, message_event("human", token=TOKEN), encrypt_key=ENCRYPT_KEY)
        messages = await inbox.wait(1)  # the intake is in order: "beep" was decided before "human"
    assert [m.text for m in messages] == ["human"]


def _websocket_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feishu-websocket"]


async def test_websocket_receives_and_stop_ends_the_connection_and_thread(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    channel, inbox = FeishuChannel(make_settings(tmp_path, feishu, mode="websocket")), Inbox()
    await channel.start(inbox.deliver)
    try:
        assert len(feishu.open_connections()) == 1 and len(_websocket_threads()) == 1
        frame = await feishu.push_event(message_event("over the socket"))
        assert await feishu.wait_for_ack(frame) == {"code": 200}
        assert (await inbox.wait(1))[0].text == "over the socket"
    finally:
        await channel.stop()
    assert _websocket_threads() == []
    await feishu.wait_disconnected()
    # a new websocket channel can run after the first stopped (lark's global loop is free again)
    async with running(make_settings(tmp_path, feishu, mode="websocket")) as (_, again):
        frame = await feishu.push_event(message_event("again"))
        await feishu.wait_for_ack(frame)
        assert (await again.wait(1))[0].text == "again"


async def test_websocket_reconnects_and_a_replayed_event_is_not_answered_twice(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    feishu.reconnect_nonce = 0  # lark waits a random 0..nonce seconds before reconnecting
    async with running(make_settings(tmp_path, feishu, mode="websocket")) as (_, inbox):
        first = message_event("before the drop")
        await feishu.wait_for_ack(await feishu.push_event(first))
        await inbox.wait(1)
        old = feishu.open_connections()
        feishu.drop_connections()
        assert await feishu.wait_for(lambda s: bool(s.open_connections()) and s.open_connections() != old)
        await feishu.wait_for_ack(await feishu.push_event(first))  # replayed after the reconnect
        await feishu.wait_for_ack(await feishu.push_event(message_event("after the drop")))
        messages = await inbox.wait(2)
    assert [m.text for m in messages] == ["before the drop", "after the drop"]


def _lark_tasks() -> list[asyncio.Task]:
    """Tasks on the running (main) loop whose coroutine is lark-oapi's."""
    return [
        t
        for t in asyncio.all_tasks()
        if "lark_oapi" in getattr(getattr(t.get_coro(), "cr_code", None), "co_filename", "")
    ]


async def test_websocket_leaves_no_lark_task_on_the_main_loop(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu, mode="websocket")) as (_, inbox):
        assert _lark_tasks() == []  # lark's client was built on its own thread and loop
        await feishu.wait_for_ack(await feishu.push_event(message_event("hi")))
        await inbox.wait(1)
    assert _lark_tasks() == []


async def test_websocket_endpoint_that_never_answers(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    feishu.ws_endpoint_hangs = True  # accepts lark's bootstrap request and never answers it
    settings = make_settings(tmp_path, feishu, mode="websocket", timeout_seconds=1.0)
    channel = FeishuChannel(settings)
    await channel.start(Inbox().deliver)  # returns after its timeout: not connected yet
    try:
        assert "lark keeps retrying" in caplog.text
        assert len(feishu.endpoint_requests()) == 1
        # …and that is true: lark's request timed out and its reconnect loop took over
        assert await feishu.wait_for(lambda _: "timed out" in caplog.text, timeout=5)
        assert len(_websocket_threads()) == 1
    finally:
        began = time.monotonic()
        await channel.stop()
    assert time.monotonic() - began < settings.timeout_seconds + 2
    assert _websocket_threads() == []
    assert "did not end" not in caplog.text


async def test_websocket_refused_app_raises_at_start(tmp_path: Path, feishu: FeishuStub) -> None:
    feishu.ws_endpoint_code = 10003
    channel = FeishuChannel(make_settings(tmp_path, feishu, mode="websocket"))
    with pytest.raises(FeishuError, match="10003"):
        await channel.start(Inbox().deliver)
    assert _websocket_threads() == []
    feishu.ws_endpoint_code = 0
    async with running(make_settings(tmp_path, feishu, mode="websocket")):
        assert len(feishu.open_connections()) == 1


async def test_only_one_websocket_channel_per_process(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu, mode="websocket")):
        second = FeishuChannel(make_settings(tmp_path / "b", feishu, mode="websocket"))
        with pytest.raises(FeishuError, match="one"):
            await second.start(Inbox().deliver)


async def test_secrets_never_reach_the_logs(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = make_settings(tmp_path, feishu, mode="websocket", allow_from=())
    async with running(settings) as (channel, _):
        frame = await feishu.push_event(message_event("let me in"))  # refused: logged with the sender id
        await feishu.wait_for_ack(frame)
        await channel.send(reply("**md**"))
        feishu.fail_sends(BOT_NOT_IN_CHAT, BOT_NOT_IN_CHAT)
        with pytest.raises(FeishuApiError):
            await channel.send(reply("**md**", to="om_2"))
    callback = make_settings(tmp_path, feishu)
    async with running(callback) as (channel, _):
        await post_callback(
            callback_url(channel),
            message_event("x", token=TOKEN),
            encrypt_key=ENCRYPT_KEY,
            bad_signature=True,
        )
    out, err = capfd.readouterr()
    logged = caplog.text + out + err
    assert "ou_alice" in caplog.text  # the refusal was logged, so logging really was on
    tenant_token = f"t-stubtoken-{settings.app_id}"
    for secret in (SECRET, ENCRYPT_KEY, TOKEN, tenant_token):
        assert secret not in logged


# ------------------------------------------------------------------ refused callbacks are cheap


async def _post_raw(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers or {}) as resp,
    ):
        return resp.status, await resp.read()


@pytest.mark.parametrize(
    ("case", "status", "reason"),
    [
        ("malformed JSON", 400, "malformed JSON"),
        ("bad signature", 401, "X-Lark-Signature"),
        ("undecryptable", 403, "cannot decrypt"),
        ("wrong token", 403, "verification token"),
    ],
)
async def test_a_refused_callback_is_one_line_and_a_fixed_answer(
    tmp_path: Path,
    feishu: FeishuStub,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    case: str,
    status: int,
    reason: str,
) -> None:
    from localservers.feishu_server import signed_body

    caplog.set_level(logging.DEBUG)
    async with running(make_settings(tmp_path, feishu)) as (channel, inbox):
        url = callback_url(channel)
        if case == "malformed JSON":
            answer = await _post_raw(url, b"{not json")
        elif case == "bad signature":
            body, headers = signed_body(message_event("x", token=TOKEN), ENCRYPT_KEY, bad_signature=True)
            answer = await _post_raw(url, body, headers)
        elif case == "undecryptable":
            body, headers = signed_body(message_event("x", token=TOKEN), "some-other-key")
            answer = await _post_raw(url, body, headers)
        else:
            body, headers = signed_body(message_event("x", token="wrong"), ENCRYPT_KEY)
            answer = await _post_raw(url, body, headers)
        assert await post_callback(
            url, message_event("a good one", token=TOKEN), encrypt_key=ENCRYPT_KEY
        ) == (
            200,
            {"msg": "success"},
        )
        assert [m.text for m in await inbox.wait(1)] == ["a good one"]  # nothing else got through
    got_status, got_body = answer
    assert got_status == status
    assert json.loads(got_body) in ({"msg": "bad request"}, {"msg": "unauthorized"}, {"msg": "forbidden"})
    refusals = [r for r in caplog.records if "refused a callback" in r.getMessage()]
    assert (
        len(refusals) == 1 and reason in refusals[0].getMessage() and "127.0.0.1" in refusals[0].getMessage()
    )
    assert not [r for r in caplog.records if r.exc_info]  # no traceback, from us or from lark
    assert "Traceback" not in capfd.readouterr().err


async def test_an_event_the_gateway_could_not_store_is_not_acknowledged_and_comes_again(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    delivered: list[str] = []
    failures = [OSError("database is locked")]

    async def deliver(message: InboundMessage) -> None:
        if failures:
            raise failures.pop()
        delivered.append(message.text)

    channel = FeishuChannel(make_settings(tmp_path, feishu))
    await channel.start(deliver)
    try:
        incoming = message_event("keep me", token=TOKEN)
        first, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)
        again, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)  # redelivery
        third, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)
    finally:
        await channel.stop()
    assert (first, again, third) == (500, 200, 200)  # not acknowledged until stored; then once
    assert delivered == ["keep me"]
