"""What an operator sees (issue 27, items 1, 2 and 6): the log of a real ``tierclaw gateway`` process
against the local servers at the default level — one ready line, one line when Telegram goes and one when
it is back, a poisoned update answered like the next one, no secret and no library chatter — plus Feishu's
websocket outage in-process, the model deadline's hint, and the log levels."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from channels.base import InboundMessage
from channels.feishu.channel import FeishuChannel, FeishuSettings
from gateway.config import load_config
from gateway.loop import ProcessLoop
from gateway.providers import no_answer_hint
from localservers.feishu_server import FeishuStub
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

KEY = "sk-gateway-log-secret-0000"


async def until(predicate: Callable[[], bool], what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + PROCESS_CEILING
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the gateway exited ({proc.returncode}) while waiting for {what}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def gateway_config(tmp_path: Path, model: OpenAIStub, tg: TelegramStub) -> Path:
    raw = {
        "provider": {"apiKey": KEY, "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "data" / "memory.db"), "embedding": {"provider": "none"}},
        "channels": {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["42"]}
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


async def test_a_real_gateway_says_ready_once_per_outage_and_never_a_secret(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    log = tmp_path / "gateway.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERCLAW_", "OPENAI_"))}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gateway.cli",
            "gateway",
            "--config",
            str(gateway_config(tmp_path, model, tg)),
        ],
        cwd=REPO,
        env={**env, "HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=log.open("w", encoding="utf-8"),
    )
    try:
        await until(lambda: "[gateway] ready:" in log.read_text(encoding="utf-8"), "the ready line", proc)
        tg.push(tg.message("before \ud800 the outage", entities=[]))  # a poisoned update…
        tg.push(tg.message("and a normal one", entities=[]))  # …then one that must be answered too
        await until(lambda: len(tg.sent()) >= 2, "both answers", proc)
        tg.refuse_connections()  # until told: the gateway must meet the outage, however slow it is
        await until(lambda: "lost the Bot API" in log.read_text(encoding="utf-8"), "the outage line", proc)
        tg.accept_connections()
        await until(lambda: "reconnected to" in log.read_text(encoding="utf-8"), "the recovery line", proc)
        tg.push(tg.message("after the outage", entities=[]))
        await until(lambda: len(tg.sent()) >= 3, "the answer after the outage", proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    lines = log.read_text(encoding="utf-8").splitlines()
    texts = [call.params.get("text", "") for call in tg.sent()]
    assert texts == ["stub reply: before \ufffd the outage", "stub reply: and a normal one",
                     "stub reply: after the outage"]  # fmt: skip
    ready = [line for line in lines if line.startswith("[gateway] ready:")]
    assert ready == [
        "[gateway] ready: telegram @stub_bot (polling), model openai:main-model, memory sqlite "
        "~/data/memory.db"  # HOME is tmp_path
    ]
    lost = [line for line in lines if "lost the Bot API" in line]
    back = [line for line in lines if "reconnected to the Bot API" in line]
    # The long poll in flight is cut (connection lost), then every retry is refused: said once.
    assert len(lost) == 1 and ("connection lost" in lost[0] or "connection refused" in lost[0]), lines
    assert len(back) == 1 and " after " in back[0], lines
    assert not [line for line in lines if tg.token in line or KEY in line]
    assert not [line for line in lines if " INFO " in line or " DEBUG " in line]  # the default level
    # Only tierclaw speaks: no library line (PTB, httpx, apscheduler, aiosqlite) during the outage either.
    assert all(line.startswith("[gateway] ready:") or " tierclaw." in line for line in lines), lines
    assert proc.returncode == 0


async def test_feishu_websocket_outage_is_one_line_going_and_one_back_without_lark_lines(
    tmp_path: Path, feishu: FeishuStub, caplog: pytest.LogCaptureFixture
) -> None:
    feishu.reconnect_nonce = 0  # lark's random wait before reconnecting (ClientConfig)
    settings = FeishuSettings(
        app_id="cli_outage", app_secret="outage-secret-77", allow_from=("ou_alice",),
        domain=feishu.domain, mode="websocket", timeout_seconds=30.0,
    )  # fmt: skip
    channel = FeishuChannel(settings)

    async def deliver(message: InboundMessage) -> None:
        return None

    with caplog.at_level(logging.INFO):
        await channel.start(deliver)
        try:
            feishu.refuse_connections()  # until told: lark must meet the refusal, however slow it is
            await until(lambda: "lost the Feishu websocket" in caplog.text, "the outage line")
            feishu.accept_connections()
            await until(lambda: "reconnected to the Feishu websocket" in caplog.text, "the recovery line")
            await until(lambda: bool(feishu.open_connections()), "a new connection")
        finally:
            await channel.stop()
    ours = [r.getMessage() for r in caplog.records if r.name == "tierclaw.channels"]
    lost = [m for m in ours if "lost the Feishu websocket" in m]
    assert len(lost) == 1 and "connection refused" in lost[0], ours
    assert len([m for m in ours if "reconnected to the Feishu websocket" in m]) == 1
    lark = [r.getMessage() for r in caplog.records if r.name == "Lark"]
    assert not [m for m in lark if "connect failed" in m or "trying to reconnect" in m]
    assert "outage-secret-77" not in caplog.text


async def test_a_missed_reply_deadline_names_the_url_the_model_and_both_settings(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(gateway_config(tmp_path, model, tg), env={})
    hung = asyncio.Event()

    async def handler(message: InboundMessage) -> str:
        await hung.wait()
        return "never"

    loop = ProcessLoop(handler, deadline=0.2, deadline_hint=no_answer_hint(config))
    loop.start()
    try:
        with caplog.at_level(logging.ERROR, logger="tierclaw.gateway"):
            await loop.deliver(InboundMessage("console", "local", "local", "hello"))
            await until(lambda: "no answer for" in caplog.text, "the deadline line")
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    line = next(r.getMessage() for r in caplog.records if "no answer for" in r.getMessage())
    assert model.base_url in line and "'main-model'" in line
    assert "provider.timeoutSeconds" in line and "agent.replyDeadline" in line and KEY not in line


def _memory_add(tmp_path: Path, *options: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERCLAW_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "memory", "add", "I live in Lyon",
         "--db", str(tmp_path / "m.db"), *options],
        capture_output=True, text=True, env={**env, "HOME": str(tmp_path)}, cwd=REPO, timeout=PROCESS_CEILING,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_debug_shows_tierclaw_detail_and_the_libraries_only_when_asked(tmp_path: Path) -> None:
    quiet = _memory_add(tmp_path)
    assert " DEBUG " not in quiet and " INFO " not in quiet
    ours = _memory_add(tmp_path, "--log-level", "DEBUG")
    assert " DEBUG tierclaw" in ours or " INFO tierclaw" in ours
    assert "aiosqlite" not in ours
    everything = _memory_add(tmp_path, "--log-level", "DEBUG", "--debug-libraries")
    assert " DEBUG aiosqlite" in everything
