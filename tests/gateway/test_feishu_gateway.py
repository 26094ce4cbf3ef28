"""End to end: Feishu events through the real gateway (config → ``enabled_channels`` → ``Runtime``), the
real lark-oapi SDK, the local Feishu stub (tests/feishu_stub.py) and the local OpenAI-compatible model
(tests/openai_stub.py), in both connection modes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from channels.feishu.channel import FeishuChannel
from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.config import Config, load_config
from gateway.media.words import say
from localservers.feishu_server import (
    BOT_OPEN_ID,
    FeishuStub,
    mention,
    message_event,
    post_callback,
    url_verification,
)
from localservers.openai_server import OpenAIStub, StubReply
from memory.store.turn_watermark import pending
from tests.support.sqlite_peek import sql

SECRET = "app-secret-e2e-Hq2"
ENCRYPT_KEY = "encrypt-key-e2e-Vb8"
TOKEN = "verify-token-e2e-Jt5"
ALICE = "ou_alice"
MODES = ["websocket", "callback"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(
    tmp_path: Path,
    model: OpenAIStub,
    feishu: FeishuStub,
    *,
    mode: str,
    allow_from: list[str] | None = None,
    app_id: str | None = None,
    **feishu_settings: object,
) -> Config:
    raw = {
        "provider": {
            "apiKey": "sk-test-000000",
            "baseUrl": model.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "data" / "memory.db"),
            "model": "memory-model",
            "extraction": {"quietGap": "1h"},
        },
        "channels": {
            "feishu": {
                "enabled": True,
                "appId": app_id or f"cli_{uuid.uuid4().hex[:12]}",  # lark caches tokens per app_id
                "appSecret": SECRET,
                "verificationToken": TOKEN,
                "encryptKey": ENCRYPT_KEY,
                "allowFrom": [ALICE] if allow_from is None else allow_from,
                "mode": mode,
                "domain": feishu.domain,
                "timeoutSeconds": 30,
                "callback": {"listen": "127.0.0.1", "port": free_port(), "path": "/feishu/events"},
                **feishu_settings,
            }
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


@contextlib.asynccontextmanager
async def gateway(config: Config) -> AsyncIterator[tuple[Runtime, FeishuChannel]]:
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        channel = runtime.channels[0]
        assert isinstance(channel, FeishuChannel)
        yield runtime, channel
    finally:
        await runtime.close()


def callback_url(channel: FeishuChannel) -> str:
    return f"http://127.0.0.1:{channel.callback_port}{channel.settings.callback_path}"


async def push(feishu: FeishuStub, channel: FeishuChannel, event: dict) -> int:
    """Deliver ``event`` the way the channel's mode receives it; returns the acknowledgement code."""
    if channel.settings.mode == "websocket":
        return int((await feishu.wait_for_ack(await feishu.push_event(event)))["code"])
    status, _ = await post_callback(callback_url(channel), event, encrypt_key=ENCRYPT_KEY)
    return status


def event(text: str, **fields: object) -> dict:
    return message_event(text, token=TOKEN, **fields)


def user_turns(model: OpenAIStub) -> list[str]:
    """The last line of the user turn of every main-model request (the memory block comes before it)."""
    return [r["messages"][-1]["content"].splitlines()[-1] for r in model.chat_requests()]


@pytest.mark.parametrize("mode", MODES)
async def test_a_message_is_answered_with_a_reply(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, mode: str
) -> None:
    config = write_config(tmp_path, model, feishu, mode=mode)
    async with gateway(config) as (runtime, channel):
        assert runtime.inbox.repeats_dropped == {"feishu"}  # a takeover answers again at once (in_flight.py)
        incoming = event("What is the capital of France?")
        assert await push(feishu, channel, incoming) == 200
        [sent] = await feishu.wait_for_sent(1)
    assert sent.kind == "reply"
    assert sent.target == incoming["event"]["message"]["message_id"]
    assert sent.text == "stub reply: What is the capital of France?"
    assert sent.uuid and len(sent.uuid) <= 50
    assert user_turns(model) == ["What is the capital of France?"]
    assert feishu.token_requests()  # the tenant token came from the SDK


async def test_url_verification_is_answered(tmp_path: Path, model: OpenAIStub, feishu: FeishuStub) -> None:
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
        status, body = await post_callback(
            callback_url(channel), url_verification("challenge-42", TOKEN), encrypt_key=ENCRYPT_KEY
        )
    assert (status, body) == (200, {"challenge": "challenge-42"})
    assert model.requests == [] and feishu.sent == []


async def test_bad_signature_is_rejected(tmp_path: Path, model: OpenAIStub, feishu: FeishuStub) -> None:
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
        forged = event("transfer all the money")
        status, _ = await post_callback(
            callback_url(channel), forged, encrypt_key=ENCRYPT_KEY, bad_signature=True
        )
        assert status != 200
        assert await push(feishu, channel, event("hello")) == 200  # a good event after it is answered…
        await feishu.wait_for_sent(1)
    assert user_turns(model) == ["hello"]  # …and the forged one never reached the model
    assert len(feishu.sent) == 1


async def test_callback_answers_before_a_slow_model(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    answer = threading.Event()  # the model answers only once the callback was acknowledged

    def slow(body: dict) -> StubReply | None:
        if body.get("response_format"):  # not the chat's answer (extraction): the usual reply
            return None
        answer.wait(60)  # a ceiling: set below
        return StubReply(content="worth the wait")

    model.responder = slow
    try:
        async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
            status, body = await post_callback(
                callback_url(channel), event("think hard"), encrypt_key=ENCRYPT_KEY
            )
            assert (status, body) == (200, {"msg": "success"})
            assert feishu.sent == []  # acknowledged while the reply was still being made
            answer.set()
            [sent] = await feishu.wait_for_sent(1)
    finally:
        answer.set()
    assert sent.text == "worth the wait"


@pytest.mark.parametrize("mode", MODES)
async def test_a_redelivered_event_is_answered_once_also_after_a_restart(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, mode: str
) -> None:
    config = write_config(tmp_path, model, feishu, mode=mode)
    repeated = event("remember me once")
    async with gateway(config) as (runtime, channel):
        for _ in range(3):
            assert await push(feishu, channel, repeated) == 200
        await push(feishu, channel, event("sentinel one"))  # same chat: answered after the repeats
        await feishu.wait_for_sent(2)
        await asyncio.wait_for(runtime.loop.drain(), 30)  # a streamed reply shows before it is whole
    async with gateway(config) as (runtime, channel):  # a new process on the same state
        assert await push(feishu, channel, repeated) == 200
        await push(feishu, channel, event("sentinel two"))
        await feishu.wait_for_sent(3)
        await asyncio.wait_for(runtime.loop.drain(), 30)
    assert user_turns(model) == ["remember me once", "sentinel one", "sentinel two"]
    assert [s.text for s in feishu.sent] == [f"stub reply: {t}" for t in user_turns(model)]


async def test_a_new_event_id_with_a_seen_message_id_is_a_duplicate(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
        first = event("only once", message_id="om_same")
        again = event("only once", message_id="om_same")
        assert first["header"]["event_id"] != again["header"]["event_id"]
        await push(feishu, channel, first)
        await push(feishu, channel, again)
        await push(feishu, channel, event("sentinel"))
        await feishu.wait_for_sent(2)
    assert user_turns(model) == ["only once", "sentinel"]


async def test_a_stranger_gets_nothing_and_leaves_no_trace(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (runtime, channel):
        stranger = event("I am not on the list", sender="ou_mallory", chat_id="oc_shared")
        assert await push(feishu, channel, stranger) == 200  # acknowledged, or Feishu would retry for hours
        await push(feishu, channel, event("I am", chat_id="oc_shared"))  # processed after the stranger's
        [sent] = await feishu.wait_for_sent(1)
        engine = runtime.engine
    assert sent.text == "stub reply: I am"
    assert user_turns(model) == ["I am"]
    assert sql(engine, f"SELECT count(*) FROM {pending(False)} WHERE sender_id = 'ou_mallory'") == [(0,)]
    assert sql(engine, "SELECT content FROM session_messages WHERE content LIKE '%not on the list%'") == []
    assert sql(engine, "SELECT content FROM conversation_turns WHERE content LIKE '%not on the list%'") == []
    assert 'add "ou_mallory"' in caplog.text


async def test_empty_allow_from_lets_nobody_in(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path, model, feishu, mode="websocket", allow_from=[])
    async with gateway(config) as (_, channel):
        assert "allowFrom is empty" in caplog.text
        assert await push(feishu, channel, event("hello?")) == 200
        assert await feishu.wait_for(lambda _: "ignored a message from ou_alice" in caplog.text)
    assert model.requests == [] and feishu.sent == []


async def test_groups_are_answered_only_when_the_bot_is_mentioned(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    group = {"chat_type": "group", "chat_id": "oc_team"}
    async with gateway(write_config(tmp_path, model, feishu, mode="websocket")) as (_, channel):
        assert channel.bot_open_id == BOT_OPEN_ID  # from the bot info API at start
        await push(feishu, channel, event("lunch at noon?", **group))
        mentioned = event(
            "@_user_1 ask @_user_2 about lunch",
            mentions=[mention("@_user_1"), mention("@_user_2", open_id="ou_bob", name="Bob")],
            **group,
        )
        await push(feishu, channel, mentioned)
        [sent] = await feishu.wait_for_sent(1)
    assert user_turns(model) == ["ask @Bob about lunch"]
    assert sent.target == mentioned["event"]["message"]["message_id"]


async def test_an_image_feishu_does_not_give_gets_a_plain_reply_and_no_model_call(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
        await push(feishu, channel, event("", message_type="image", content={"image_key": "img_v2_1"}))
        [sent] = await feishu.wait_for_sent(1)
    assert sent.text == say("refused", False, kind="image", platform="Feishu")
    assert model.chat_requests() == []


async def test_a_post_message_is_read_as_its_text(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    content = {"title": "", "content": [[{"tag": "text", "text": "bold "}, {"tag": "text", "text": "move"}]]}
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
        await push(feishu, channel, event("", message_type="post", content=content))
        await feishu.wait_for_sent(1)
    assert user_turns(model) == ["bold move"]


async def test_markdown_reply_is_a_post_and_a_refused_post_is_sent_as_text(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    """Without streaming cards (off here; or refused: tests/gateway/test_streamed_feishu.py)."""
    answer = "Here is the **plan**:\n- pack\n- go"
    model.script(answer, answer)
    config = write_config(tmp_path, model, feishu, mode="callback", streamCards=False)
    async with gateway(config) as (_, channel):
        await push(feishu, channel, event("plan?"))
        [post] = await feishu.wait_for_sent(1)
        feishu.refuse_posts = True
        await push(feishu, channel, event("again?"))
        _, fallback = await feishu.wait_for_sent(2)
    assert post.msg_type == "post" and post.text == answer
    assert fallback.msg_type == "text" and fallback.text == answer


async def test_a_long_reply_is_split_into_replies_with_distinct_uuids(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    paragraphs = [f"Part {i}. " + "word " * 700 for i in range(3)]  # ~3,500 characters each
    model.script("\n\n".join(p.strip() for p in paragraphs))
    async with gateway(write_config(tmp_path, model, feishu, mode="callback")) as (_, channel):
        incoming = event("tell me everything")
        await push(feishu, channel, incoming)
        sent = await feishu.wait_for_sent(3)
    assert len(sent) == 3
    assert [s.text for s in sent] == [p.strip() for p in paragraphs]
    assert {s.target for s in sent} == {incoming["event"]["message"]["message_id"]}
    assert len({s.uuid for s in sent}) == 3
    assert all(len(s.text) <= 4000 for s in sent)


@pytest.mark.parametrize("mode", MODES)
async def test_shutdown_stops_intake_then_still_answers_what_was_taken_in(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, mode: str
) -> None:
    model.script(StubReply(content="answered while stopping", delay=1.0))
    config = write_config(tmp_path, model, feishu, mode=mode)
    runtime = await Runtime.open(config, enabled_channels(config))
    await runtime.start(schedule=False)
    channel = runtime.channels[0]
    assert isinstance(channel, FeishuChannel)
    assert await push(feishu, channel, event("one last question")) == 200  # acknowledged: ours to answer
    assert await runtime.shutdown(drain_timeout=30) == 0  # a ceiling: a drain returns when done
    assert [s.text for s in feishu.sent] == ["answered while stopping"]
    assert user_turns(model) == ["one last question"]
    if mode == "callback":  # new events are refused, so Feishu redelivers them to the next run
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", channel.callback_port or 0)) != 0
    else:
        await feishu.wait_disconnected()
