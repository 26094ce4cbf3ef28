"""One person, two channels, one memory: a fact told on Telegram is recalled on Feishu for the same mapped
person, and never for someone else. Both channels run in one gateway built from one config file, against
the local Telegram and Feishu servers and the local OpenAI-compatible model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.config import load_config
from localservers.feishu_server import FeishuStub, message_event, post_callback
from localservers.openai_server import OpenAIStub, StubReply
from localservers.telegram_server import TelegramStub, free_port

ENCRYPT_KEY = "cross-encrypt-key"
VERIFICATION = "cross-verification"
APP_ID = "cli_cross_channel"
FACT = "My favourite tea is a smoky lapsang souchong."


def extraction_reply(body: dict) -> StubReply | None:
    """Memory model: every user line that starts with "My favourite" is a fact; chat: the default."""
    if body.get("response_format", {}).get("type") != "json_object":
        return None
    facts = [
        {
            "content": line.split("user:", 1)[1].strip(),
            "project": "_global",
            "topic": "drinks",
            "category": "identity",
            "importance": 0.9,
        }
        for line in body["messages"][-1]["content"].splitlines()
        if "user:" in line and "My favourite" in line
    ]
    return StubReply(content=json.dumps({"facts": facts, "summary": "talked about tea"}))


async def test_fact_told_on_telegram_is_recalled_on_feishu_for_that_person_only(tmp_path: Path) -> None:
    port = free_port()
    with (
        OpenAIStub(responder=extraction_reply) as model,
        TelegramStub() as tg,
        FeishuStub() as feishu,
    ):
        raw = {
            "provider": {"apiKey": "sk-test-000000", "baseUrl": model.base_url, "maxRetries": 0},
            "agent": {"workspace": str(tmp_path / "ws")},
            "memory": {"dbPath": str(tmp_path / "memory.db"), "extraction": {"quietGap": 0.3}},
            "channels": {
                "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["42"]},
                "feishu": {
                    "enabled": True,
                    "appId": APP_ID,
                    "appSecret": "cross-secret",
                    "verificationToken": VERIFICATION,
                    "encryptKey": ENCRYPT_KEY,
                    "mode": "callback",
                    "domain": feishu.domain,
                    "allowFrom": ["ou_alice", "ou_bob"],
                    "callback": {"port": port},
                },
            },
            "users": {"alice": ["telegram:42", "feishu:ou_alice"], "bob": ["feishu:ou_bob"]},
            "timezone": "UTC",
        }
        path = tmp_path / "config.json"
        path.write_text(json.dumps(raw), encoding="utf-8")
        config = load_config(path, env={})
        runtime = await Runtime.open(config, enabled_channels(config))
        try:
            await runtime.start(schedule=False)
            tg.push(tg.message(FACT, sender=tg.user(42)))
            await tg.wait_sent(1)
            assert await model.await_for(lambda s: len(s.json_requests()) >= 1)  # extracted after the gap
            for _ in range(300):
                if [m.content for m in await runtime.engine.list("user:alice")] == [FACT]:
                    break
                await asyncio.sleep(0.01)
            assert [m.content for m in await runtime.engine.list("user:alice")] == [FACT]

            url = f"http://127.0.0.1:{port}/feishu/events"
            question = "What is my favourite tea?"
            for sender in ("ou_alice", "ou_bob"):
                event = message_event(
                    question, sender=sender, chat_id=f"oc_{sender}", token=VERIFICATION, app_id=APP_ID
                )
                status, _ = await post_callback(url, event, encrypt_key=ENCRYPT_KEY)
                assert status == 200
                await feishu.wait_for_sent(1 if sender == "ou_alice" else 2)

            alice_turn, bob_turn = (r["messages"][-1]["content"] for r in model.chat_requests()[-2:])
            assert alice_turn.endswith(question) and bob_turn.endswith(question)
            assert "lapsang" in alice_turn.split("</memory>")[0]  # Alice's memory, asked on Feishu
            assert "lapsang" not in bob_turn  # Bob never sees it
            assert await runtime.engine.list("user:bob") == []
            assert [s.kind for s in feishu.sent] == ["reply", "reply"]
        finally:
            await runtime.close()
