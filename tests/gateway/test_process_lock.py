"""One gateway per SQLite file (gateway/process_lock.py): a second real gateway process is refused with
one line, a killed one leaves no stale lock, and the memory commands and the terminal chat keep working
beside a running gateway."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from channels.base import Deliver, InboundMessage, OutboundMessage
from gateway.app import Runtime
from gateway.config import load_config
from gateway.inbox import DurableInbox
from gateway.process_lock import GatewayAlreadyRunning, gateway_running, hold_gateway_lock, lock_path
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub
from memory.engine import MemoryEngine
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    return {**env, "HOME": str(home)}


def _gateway(config: Path, home: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(config)],
        cwd=REPO,
        env=_env(home),
        stdout=log.open("a", encoding="utf-8"),
        stderr=subprocess.STDOUT,
    )


def _write_config(tmp_path: Path, tg: TelegramStub, model: OpenAIStub) -> Path:
    config = {
        "provider": {"apiKey": "sk-test-0000", "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"model": "m", "workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "data" / "memory.db"), "embedding": {"provider": "none"}},
        "channels": {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["*"]}
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def _until_polling(tg: TelegramStub, proc: subprocess.Popen, log: Path, after: int = 0) -> None:
    deadline = time.monotonic() + PROCESS_CEILING
    while len(tg.requests("getUpdates")) <= after:
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited ({proc.returncode}): {log.read_text()}")
        if time.monotonic() > deadline:
            raise AssertionError("the gateway did not start polling")
        await asyncio.sleep(0.05)


async def test_a_second_gateway_on_the_same_file_is_refused_and_a_killed_one_leaves_no_lock(
    tmp_path: Path, tg: TelegramStub, model: OpenAIStub
) -> None:
    config = _write_config(tmp_path, tg, model)
    database = tmp_path / "data" / "memory.db"
    first = _gateway(config, tmp_path, tmp_path / "first.log")
    try:
        await _until_polling(tg, first, tmp_path / "first.log")
        assert gateway_running(database)

        second = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(config)],
            cwd=REPO,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=PROCESS_CEILING,
        )
        assert second.returncode == 2
        assert second.stderr.splitlines() == [
            f"tierclaw: another tierclaw gateway (pid {first.pid}) is already running on {database}; "
            "SQLite is for one process — to run several gateways, put them on PostgreSQL "
            "(memory.databaseUrl)"
        ]

        # A memory command beside the running gateway works as before.
        stats = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "memory", "stats", "--json", "--config", str(config)],
            cwd=REPO,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=PROCESS_CEILING,
        )
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["database"] == str(database)

        # So does the terminal chat: it answers its own messages and leaves the jobs to the gateway.
        chat = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "chat", "--config", str(config)],
            cwd=REPO,
            env=_env(tmp_path),
            input="hello from the terminal\n",
            capture_output=True,
            text=True,
            timeout=PROCESS_CEILING,
        )
        assert chat.returncode == 0, chat.stderr
        assert "stub reply: hello from the terminal" in chat.stdout
        assert first.poll() is None  # the gateway runs on

        first.send_signal(signal.SIGKILL)
        first.wait(10)
        assert not gateway_running(database)  # the kernel dropped the lock with the process

        polls = len(tg.requests("getUpdates"))
        third = _gateway(config, tmp_path, tmp_path / "third.log")
        try:
            await _until_polling(tg, third, tmp_path / "third.log", after=polls)
            assert gateway_running(database)
        finally:
            third.terminate()
            assert third.wait(60) == 0
        assert not gateway_running(database)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)


def test_the_lock_is_exclusive_within_one_process_too_and_released_on_exit(tmp_path: Path) -> None:
    database = tmp_path / "new" / "memory.db"
    assert not gateway_running(database)
    assert not lock_path(database).exists()  # looking never creates the file
    with hold_gateway_lock(database) as lock:
        assert lock.path == lock_path(database)
        assert oct(lock.path.stat().st_mode & 0o777) == "0o600"
        assert lock.path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(GatewayAlreadyRunning, match=r"memory\.databaseUrl"):
            hold_gateway_lock(database)  # flock locks belong to the open file: a second open conflicts
    assert not gateway_running(database)
    hold_gateway_lock(database).release()


class Recorder:
    name = "console"

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []
        self.deliver: Deliver | None = None

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)

    async def stop(self) -> None:
        pass


async def test_a_runtime_answers_at_start_only_what_its_own_channels_can_answer(
    tmp_path: Path, model: OpenAIStub
) -> None:
    # `tierclaw chat` beside a gateway: the gateway's Telegram message waiting in the inbox is the
    # gateway's to answer (the terminal cannot send to Telegram), the terminal's own is answered.
    engine = await MemoryEngine.open(tmp_path / "memory.db")
    inbox = DurableInbox(engine.store)
    await inbox.accept(InboundMessage("telegram", "7", "7", "for the gateway", delivery_id="u1"))
    await inbox.accept(InboundMessage("console", "local", "local", "for the terminal", delivery_id="c1"))
    await engine.close()
    raw = {
        "provider": {"apiKey": "sk-test-0000", "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"workspace": str(tmp_path / "ws"), "tools": False},
        "memory": {"dbPath": str(tmp_path / "memory.db"), "embedding": {"provider": "none"}},
        "timezone": "UTC",
    }
    (tmp_path / "config.json").write_text(json.dumps(raw), encoding="utf-8")
    console = Recorder()
    runtime = await Runtime.open(load_config(tmp_path / "config.json", env={}), [console])
    try:
        await runtime.start(schedule=False)
        await asyncio.wait_for(runtime.loop.drain(), 60)
        waiting = await DurableInbox(runtime.engine.store).unanswered()
    finally:
        await runtime.close()
    assert len(console.sent) == 1
    assert [m.text for m in waiting] == ["for the gateway"]
