"""Feishu's websocket mode on several gateways (docs/scale-out.md, "Channels"): every gateway process keeps
its own long connection, Feishu hands each event of the app to one of them, and one chat's messages —
arriving on different gateways, one of them delivered again on the other — are answered once each, in
order, by whichever gateway holds the chat. Real processes on one PostgreSQL, the real lark-oapi client."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from pathlib import Path

from localservers.feishu_server import FeishuStub, message_event
from localservers.openai_server import OpenAIStub
from tests.support.gateway_process import start_gateway
from tests.support.waiting import PROCESS_CEILING

SECRET = "app-secret-ws-Rk4"
TOKEN = "verify-token-ws-Pz7"


def _config(tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, database_url: str) -> Path:
    config = {
        "provider": {"apiKey": "sk-test-0000", "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"model": "m", "workspace": str(tmp_path / "ws"), "tools": False},
        "memory": {
            "dbPath": str(tmp_path / "data" / "memory.db"),
            "databaseUrl": database_url,
            "embedding": {"provider": "none"},
            "extraction": {"quietGap": "1h"},
        },
        "channels": {
            "feishu": {
                "enabled": True,
                "appId": f"cli_{uuid.uuid4().hex[:12]}",
                "appSecret": SECRET,
                "verificationToken": TOKEN,
                "allowFrom": ["ou_alice"],
                "mode": "websocket",
                "domain": feishu.domain,
                "timeoutSeconds": 30,
            }
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def _two_connections(feishu: FeishuStub, procs: list[subprocess.Popen], logs: list[Path]) -> None:
    deadline = time.monotonic() + PROCESS_CEILING
    while len(feishu.open_connections()) < 2:
        for proc, log in zip(procs, logs, strict=True):
            if proc.poll() is not None:
                raise AssertionError(f"a gateway exited ({proc.returncode}): {log.read_text()}")
        if time.monotonic() > deadline:
            raise AssertionError("the two gateways did not both connect: " + logs[0].read_text())
        await asyncio.sleep(0.1)


async def test_one_chat_over_two_gateways_is_answered_once_each_in_order(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, postgres_url: str
) -> None:
    config = _config(tmp_path, model, feishu, postgres_url)
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    procs = [start_gateway(config, tmp_path, log) for log in logs]
    try:
        await _two_connections(feishu, procs, logs)
        events = [message_event(f"message {n}", token=TOKEN) for n in range(5)]
        # Each event to one connection, alternating; event 2 also delivered again on the other one
        # (same event id and message id, as Feishu redelivers an event it saw no ack for).
        plan = [(0, 0), (1, 1), (2, 0), (2, 1), (3, 1), (4, 0)]
        for index, connection in plan:
            frame = await feishu.push_event(events[index], connection=connection)
            assert (await feishu.wait_for_ack(frame, timeout=30))["code"] == 200  # stored before the ack
        await feishu.wait_for_sent(5, timeout=60)
    finally:  # a stop drains: whatever either gateway had taken in is answered before it exits
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(60)
    assert [s.text for s in feishu.sent] == [f"stub reply: message {n}" for n in range(5)]
    # each answered by one Reply API call (a second, with the message's uuid, would be dropped by Feishu
    # and not show in ``sent``)
    assert len([r for r in feishu.send_requests() if r.path.endswith("/reply")]) == 5
    assert [s.target for s in feishu.sent] == [e["event"]["message"]["message_id"] for e in events]
