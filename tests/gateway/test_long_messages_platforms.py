"""A 40,000-character message on Telegram and on Feishu, through the real clients and the local servers: the
person is told it is too long and that none of it was kept; the model is never asked, and nothing of it is
buffered, kept as a turn or a memory (issue 37, item 11; the terminal: tests/gateway/test_long_messages.py).
Telegram's own apps split such a text before sending, but a bot or a forwarded message may not; Feishu
takes texts this long as they are."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.config import load_config
from localservers.feishu_server import FeishuStub, message_event
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub, check_html
from tests.gateway.test_long_messages import long_list

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")

TEXT = long_list(40_000)
TOKEN = "verify-token-long-Kp4"


def write_config(tmp_path: Path, model: OpenAIStub, channels: dict) -> Path:
    raw = {
        "provider": {"apiKey": "sk-test-0000", "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "model": "memory-model",
            "embedding": {"provider": "none"},
            "extraction": {"quietGap": "1h"},
        },
        "channels": channels,
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


async def nothing_kept(runtime: Runtime, model: OpenAIStub, owner: str) -> None:
    assert model.chat_requests() == []  # refused before the model is asked
    await asyncio.wait_for(runtime.loop.drain(), 30)  # an exchange would be written after the send
    assert await runtime.engine.conversation.count(owner) == 0
    assert await runtime.assistant.extraction.buffer.pending_turns(owner) == 0
    assert await runtime.assistant.extraction.flush_now(owner, 30.0)  # finished: the list below is final
    assert await runtime.engine.list(owner) == []


def said_too_long(reply: str) -> None:
    assert "too long" in reply and "kept none of it" in reply, reply[:300]
    assert "thing0" not in reply and len(reply) < 1_000


async def test_telegram(tmp_path: Path, model: OpenAIStub, tg: TelegramStub) -> None:
    telegram = {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["42"]}
    config = load_config(write_config(tmp_path, model, {"telegram": telegram}), env={})
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        tg.push(tg.message(TEXT, sender=tg.user(42)))
        (sent,) = await tg.wait_sent(1)
        text, error = check_html(str(sent.params["text"]))
        assert error == ""
        said_too_long(text)
        await nothing_kept(runtime, model, "telegram:42")
        tg.push(tg.message("I live in Lyon", sender=tg.user(42)))  # the next message is taken as usual
        await tg.wait_sent(2)
        await asyncio.wait_for(runtime.loop.drain(), 30)  # the exchange is written after the send
        assert await runtime.engine.conversation.count("telegram:42") == 2  # (the owner checked is theirs)
    finally:
        await runtime.close()


async def test_feishu(tmp_path: Path, model: OpenAIStub, feishu: FeishuStub) -> None:
    settings = {
        "enabled": True,
        "appId": f"cli_{uuid.uuid4().hex[:12]}",  # lark caches tenant tokens per app_id
        "appSecret": "app-secret-long-Rt2",
        "verificationToken": TOKEN,
        "allowFrom": ["ou_alice"],
        "mode": "websocket",
        "domain": feishu.domain,
    }
    config = load_config(write_config(tmp_path, model, {"feishu": settings}), env={})
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        await feishu.wait_for_ack(await feishu.push_event(message_event(TEXT, token=TOKEN)))
        (sent,) = await feishu.wait_for_sent(1)
        said_too_long(sent.text)
        await nothing_kept(runtime, model, "feishu:ou_alice")
        await feishu.wait_for_ack(await feishu.push_event(message_event("I live in Lyon", token=TOKEN)))
        await feishu.wait_for_sent(2)
        await asyncio.wait_for(runtime.loop.drain(), 30)  # the exchange is written after the send
        assert await runtime.engine.conversation.count("feishu:ou_alice") == 2
    finally:
        await runtime.close()
