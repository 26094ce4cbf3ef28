"""The Feishu channel receiving, in both connection modes (HTTP callback and websocket): start, stop in two
steps, reconnects, bot info, and secrets kept out of logs (the real lark-oapi SDK against the local Feishu
server)."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from pathlib import Path

import aiohttp
import pytest

from channels.feishu.channel import FeishuChannel, FeishuError
from channels.feishu.events import message_uuid
from channels.feishu.open_api import FeishuApiError
from localservers.feishu_server import (
    BOT_INFO_PATH,
    BOT_NOT_IN_CHAT,
    BOT_OPEN_ID,
    FeishuStub,
    mention,
    message_event,
    post_callback,
)
from tests.support.feishu_channel import (
    ENCRYPT_KEY,
    SECRET,
    TOKEN,
    Inbox,
    callback_url,
    make_settings,
    reply,
    running,
)

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
        # a retry or two that still fail
        asked = lambda stub: sum(r.path == BOT_INFO_PATH for r in stub.requests) >= 3  # noqa: E731
        assert await feishu.wait_for(asked, timeout=30)
        feishu.bot_info_code = 0
        assert await feishu.wait_for(lambda _: channel.bot_open_id == BOT_OPEN_ID, timeout=30)
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
    feishu.delay_sends(3600)  # Feishu posts the message, but its answer never comes in the client's timeout
    async with running(make_settings(tmp_path, feishu, timeout_seconds=0.5)) as (channel, _):
        channel.retry_base_seconds = 0.01
        await channel.send(reply("just once"))
    first, second = feishu.send_requests()
    assert first.body["uuid"] == second.body["uuid"] == message_uuid("om_in_1", 0, "just once")
    assert [(s.kind, s.text) for s in feishu.sent] == [("reply", "just once")]


def _reaction() -> dict:
    """An ``im.message.reaction.created_v1`` event: not a message, acknowledged without the intake."""
    event = message_event("", token=TOKEN)
    event["header"]["event_type"] = "im.message.reaction.created_v1"
    event["event"] = {
        "message_id": "om_reacted",
        "reaction_type": {"emoji_type": "SMILE"},
        "operator_type": "user",
        "user_id": {"open_id": "ou_alice"},
    }
    return event


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
        await inbox.until_arrived(1)  # the gateway is storing it
        if mode == "callback":  # an event that is not a message is answered meanwhile: a barrier, not a
            # pause — an early answer to the first would have come back before this one's
            other = await post_callback(callback_url(channel), _reaction(), encrypt_key=ENCRYPT_KEY)
            assert other[0] == 200
        else:  # lark's thread waits in the handler: its next frame waits too
            await asyncio.sleep(0)
        assert not acks[0].done()  # not acknowledged before the gateway has it
        inbox.gate.set()
        assert await asyncio.wait_for(acks[0], 30) in (200, {"code": 200})
        inbox.gate.clear()
        acks.append(asyncio.create_task(send("second")))
        await inbox.until_arrived(2)  # taken in, held by the slow gateway
        stopping = asyncio.create_task(channel.stop_receiving())
        if mode == "callback":
            deadline = time.monotonic() + 30  # a ceiling: the stop closes it at once
            while not await _refused(channel.callback_port or 0):
                assert time.monotonic() < deadline, "the callback server still accepts connections"
                await asyncio.sleep(0.02)
            with pytest.raises(aiohttp.ClientConnectionError):  # Feishu will redeliver it later
                await post_callback(
                    callback_url(channel), message_event("too late", token=TOKEN), encrypt_key=ENCRYPT_KEY
                )
        await asyncio.sleep(0)
        assert not stopping.done()  # it waits until what was taken in is handed over
        inbox.gate.set()
        await asyncio.wait_for(stopping, timeout=30)
        if mode == "websocket":  # the connection closed once the event it was passing on was stored
            await feishu.wait_disconnected()
            assert await feishu.wait_for(lambda _: not _websocket_threads(), timeout=30)
        assert [m.text for m in inbox.messages] == ["first", "second"]
        if mode == "callback":  # its request was answered once the gateway had it
            assert await asyncio.wait_for(acks[1], 30) == 200
        await channel.send(reply("still answering"))
        assert [s.text for s in feishu.sent] == ["still answering"]
        if mode == "websocket":  # lark's global loop is free for another channel
            assert feishu.open_connections() == []
    finally:
        await channel.stop()
        await channel.stop()  # idempotent
    assert not channel.holds_resources and _websocket_threads() == []


async def test_stop_receiving_then_stop_on_an_idle_channel(tmp_path: Path, feishu: FeishuStub) -> None:
    channel = FeishuChannel(make_settings(tmp_path, feishu))
    await channel.start(Inbox().deliver)
    await channel.stop_receiving()
    await channel.stop_receiving()
    await channel.stop()
    assert not channel.holds_resources


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
    channel.ws_stop_grace_seconds = 60.0  # a ceiling, not a margin: the thread must end in the stop's join
    await channel.start(Inbox().deliver)  # returns after its timeout: not connected yet
    try:
        assert "lark keeps retrying" in caplog.text
        # lark's bootstrap request hangs (on a loaded machine it may reach the server after start returned)
        assert await feishu.wait_for(lambda s: len(s.endpoint_requests()) >= 1)
        # …and that is true: lark's request timed out and its reconnect loop took over
        assert await feishu.wait_for(lambda _: "timed out" in caplog.text, timeout=30)
        assert len(_websocket_threads()) == 1
    finally:
        await channel.stop()
    # the thread ended within the stop's bounded join (it says "did not end" otherwise), not at exit
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


async def test_an_unreachable_server_at_start_is_said_in_plain_words(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    # issue 37: "could not read the bot's identity … HTTPConnectionPool(…): Max retries exceeded …"
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(make_settings(tmp_path, feishu, domain=dead)):
            pass
    [line] = [r.getMessage() for r in caplog.records if "bot's identity" in r.getMessage()]
    assert "connection refused" in line
    assert "Max retries" not in line and "HTTPConnectionPool" not in line
