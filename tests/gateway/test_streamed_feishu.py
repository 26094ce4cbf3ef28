"""Streamed replies on Feishu, end to end: the real gateway → lark-oapi → the local Feishu server's CardKit
(localservers/feishu_cardkit.py), with a streaming model on the local OpenAI server
(channels/feishu/cardkit.py).

The model is held after a few tokens (``StubReply.hold``) until the test has seen the card show them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from channels.feishu.events import message_uuid
from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.config import Config, load_config
from localservers.feishu_cardkit import CARDKIT_PATH, SCOPE_MISSING
from localservers.feishu_server import FeishuStub, message_event, post_callback
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace
from localservers.telegram_server import free_port

pytestmark = pytest.mark.usefixtures("close_stub_clients")

ALICE = "ou_alice"
TOKEN = "verify-token"
ENCRYPT_KEY = "encrypt-key-streaming"
ANSWER = "**Plan**: pack the bags, check the tickets,\nand leave before noon."


def feishu_config(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, memory_url: str = "", stream_every: str = "0.1s"
) -> Config:
    raw = {
        "provider": {
            "apiKey": "sk-test-0000",
            "baseUrl": model.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": memory_url,
            "extraction": {"quietGap": "1h"},
            "embedding": {"provider": "none"},
        },
        "channels": {
            "feishu": {
                "enabled": True,
                "appId": f"cli_{uuid.uuid4().hex[:12]}",  # lark caches tokens per app id
                "appSecret": "secret",
                "verificationToken": TOKEN,
                "encryptKey": ENCRYPT_KEY,
                "allowFrom": [ALICE],
                "mode": "callback",
                "domain": feishu.domain,
                "timeoutSeconds": 30,
                "callback": {"listen": "127.0.0.1", "port": free_port(), "path": "/feishu/events"},
                "streamEvery": stream_every,
            }
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


@asynccontextmanager
async def gateway(config: Config) -> AsyncIterator[Runtime]:
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        yield runtime
    finally:
        await runtime.close()


async def say(runtime: Runtime, text: str) -> dict:
    """Post a message event from Alice to the gateway's callback; returns the event."""
    channel = runtime.channels[0]
    event = message_event(text, token=TOKEN, sender=ALICE)
    url = f"http://127.0.0.1:{channel.callback_port}/feishu/events"  # type: ignore[attr-defined]
    status, _ = await post_callback(url, event, encrypt_key=ENCRYPT_KEY)
    assert status == 200
    return event


def held(content: str, after: int) -> tuple[StubReply, threading.Event]:
    go_on = threading.Event()
    return StubReply(content=content, hold=(after, go_on)), go_on


@pytest.fixture
def model() -> OpenAIStub:
    with OpenAIStub(pace=StreamPace(tokens_per_second=200)) as stub:
        yield stub


def card_calls(feishu: FeishuStub, what: str) -> list:
    """The CardKit requests of one kind ("content" or "settings"), in order."""
    return [r for r in feishu.requests if r.path.startswith(CARDKIT_PATH) and r.path.endswith(what)]


async def assistant_turns(runtime: Runtime, chat_key: str) -> list[str]:
    """The chat's assistant turns in history, once every reply of the loop is sent."""
    async with asyncio.timeout(60):
        while runtime.loop.pending:
            await asyncio.sleep(0.02)
    return [c for role, c in await runtime.assistant.sessions.history(chat_key, 50) if role == "assistant"]


@pytest.mark.both_stores
async def test_a_reply_is_a_streaming_card_written_then_closed(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    async with gateway(feishu_config(tmp_path, model, feishu, memory_url)) as runtime:
        event = await say(runtime, "plan?")
        (message,) = await feishu.wait_for_sent(1)
        assert message.msg_type == "interactive" and message.card is not None
        card = message.card
        assert card.streaming and "noon" not in card.text  # shown while it is written
        go_on.set()
        assert await feishu.wait_for(lambda _: card.closed_at is not None)
        turns = await assistant_turns(runtime, f"feishu:{event['event']['message']['chat_id']}")
    assert message.target == event["event"]["message"]["message_id"]  # a reply to the person's message
    assert message.content == {"type": "card", "data": {"card_id": card.card_id}}
    assert card.text == ANSWER and not card.streaming  # the whole reply, streaming mode off
    assert card.config["summary"] == {"content": "**Plan**: pack the bags, check the tickets,"}
    full = [r for r in feishu.requests if r.method == "PUT" and r.path == f"{CARDKIT_PATH}/{card.card_id}"]
    content, settings = card_calls(feishu, "content"), card_calls(feishu, "settings")
    sequences = [r.body["sequence"] for r in content + full + settings]
    assert sequences == sorted(set(sequences))  # strictly rising
    if content and content[-1].body["content"] == ANSWER:
        # A frame showed the whole reply before the final text went (the stream was read late, beside
        # a second suite): the card only needs closing, its settings in one call (cardkit.py, "close").
        assert full == [] and len(settings) == 1
    else:
        assert len(full) == 1 and settings == []  # the final text and streaming off: one call
    assert card.closed_at >= card.history[-1][0]  # closed after the final text
    assert len(feishu.sent) == 1 and turns == [ANSWER]


@pytest.mark.both_stores
async def test_where_a_full_update_is_refused_the_card_is_closed_in_two_steps(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, memory_url: str
) -> None:
    feishu.cardkit.refuse_update = 10002
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    # One frame (the card, at once), then none for 60 s: the final text is never shown by a frame first,
    # which would close the card the other two-step way (cardkit.py) without trying the full update —
    # as a stream read late beside a second suite did with frames every 0.1 s.
    config = feishu_config(tmp_path, model, feishu, memory_url, stream_every="60s")
    async with gateway(config) as runtime:
        event = await say(runtime, "plan?")
        (message,) = await feishu.wait_for_sent(1)
        card = message.card
        assert card is not None and card.streaming
        go_on.set()
        assert await feishu.wait_for(lambda _: card.closed_at is not None)
        turns = await assistant_turns(runtime, f"feishu:{event['event']['message']['chat_id']}")
    assert card.text == ANSWER and not card.streaming
    assert card.config["summary"] == {"content": "**Plan**: pack the bags, check the tickets,"}
    assert len(card_calls(feishu, "settings")) == 1 and card.closed_at >= card.history[-1][0]
    assert (("PUT", f"{CARDKIT_PATH}/{card.card_id}", 10002)) in feishu.cardkit.answers
    assert len(feishu.sent) == 1 and turns == [ANSWER]


@pytest.mark.both_stores
async def test_without_the_card_scope_the_reply_comes_whole_and_the_log_says_so_once(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, caplog: pytest.LogCaptureFixture, memory_url: str
) -> None:
    feishu.cardkit.refuse_code = SCOPE_MISSING
    model.script(ANSWER, "Second answer.")
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with gateway(feishu_config(tmp_path, model, feishu, memory_url)) as runtime:
            await say(runtime, "plan?")
            first, *_ = await feishu.wait_for_sent(1)
            await say(runtime, "and then?")
            _, second = await feishu.wait_for_sent(2)
    assert first.msg_type == "post" and first.text == ANSWER  # whole, as without streaming
    assert second.msg_type == "text" and second.text == "Second answer."
    # Keyed by the message answered, not the text: a replica answering again after a crash posts once.
    assert first.uuid == message_uuid(first.target, 0, "", "answer:1")
    assert second.uuid == message_uuid(second.target, 0, "", "answer:2")
    creates = [r for r in feishu.requests if r.method == "POST" and r.path == CARDKIT_PATH]
    assert len(creates) == 1  # CardKit is left off after the refusal
    refusals = [r for r in caplog.records if "streaming cards refused" in r.getMessage()]
    assert len(refusals) == 1 and "99991672" in refusals[0].getMessage()


@pytest.mark.both_stores
async def test_a_card_half_written_at_a_crash_is_completed_not_sent_twice(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    config = feishu_config(tmp_path, model, feishu, memory_url)
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        await say(runtime, "plan?")
        (message,) = await feishu.wait_for_sent(1)
        (stored,) = await runtime.inbox.unanswered()
        async with asyncio.timeout(30):
            while '"message": "om_' not in await runtime.inbox.reply_handle(stored):  # card and message
                await asyncio.sleep(0.02)
        await asyncio.wait_for(runtime.loop.stop(hand_over=False), 60)  # as if the process died mid-stream
    finally:
        await runtime.close()
        go_on.set()
    card = message.card
    assert card is not None and card.streaming and "noon" not in card.text
    model.script("The whole answer, written again after the restart.")
    async with gateway(config) as restarted:
        assert await feishu.wait_for(lambda _: card.closed_at is not None)
        async with asyncio.timeout(30):
            while restarted.loop.pending:  # marked answered once the final text is sent
                await asyncio.sleep(0.02)
        unanswered = await restarted.inbox.unanswered()
    assert card.text == "The whole answer, written again after the restart."
    assert len(feishu.sent) == 1 and unanswered == []  # the same card, no second reply
    assert all(code == 0 for _, _, code in feishu.cardkit.answers)  # every sequence rose, restart or not


@pytest.mark.both_stores
async def test_a_card_whose_sequence_ran_ahead_still_gets_its_final_text(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, memory_url: str
) -> None:
    """Resumed by a gateway whose clock is behind the one that started the card: its first updates are
    refused (300317), the final text leaps past and lands."""
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    config = feishu_config(tmp_path, model, feishu, memory_url)
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        await say(runtime, "plan?")
        (message,) = await feishu.wait_for_sent(1)
        (stored,) = await runtime.inbox.unanswered()
        async with asyncio.timeout(30):
            while '"message": "om_' not in await runtime.inbox.reply_handle(stored):
                await asyncio.sleep(0.02)
        await asyncio.wait_for(runtime.loop.stop(hand_over=False), 60)
    finally:
        await runtime.close()
        go_on.set()
    card = message.card
    assert card is not None
    card.sequence += 100_000  # as if a gateway with a clock 100 s ahead had written it last
    model.script("Written past the other clock.")
    async with gateway(config) as _:
        assert await feishu.wait_for(lambda _: card.closed_at is not None)
    assert card.text == "Written past the other clock." and len(feishu.sent) == 1
    assert any(code == 300317 for _, _, code in feishu.cardkit.answers)
