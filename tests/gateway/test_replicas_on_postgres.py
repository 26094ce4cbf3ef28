"""Several ``tierclaw gateway`` processes on one PostgreSQL database (docs/scale-out.md): the SQLite
file lock (gateway/process_lock.py) is not taken there, so a second gateway starts beside the first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from gateway.process_lock import gateway_running
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    return {**env, "HOME": str(home)}


def _config(tmp_path: Path, tg: TelegramStub, model: OpenAIStub, database_url: str) -> Path:
    config = {
        "provider": {"apiKey": "sk-test-0000", "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"model": "m", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "data" / "memory.db"),
            "databaseUrl": database_url,
            "embedding": {"provider": "none"},
        },
        "channels": {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["*"]}
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _start(config: Path, home: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(config)],
        cwd=REPO,
        env=_env(home),
        stdout=log.open("a", encoding="utf-8"),
        stderr=subprocess.STDOUT,
    )


def _until_ready(proc: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + PROCESS_CEILING
    while True:
        for line in log.read_text(encoding="utf-8").splitlines():
            if "[gateway] ready: " in line:
                return line
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited ({proc.returncode}): {log.read_text()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"the gateway did not get ready: {log.read_text()}")
        time.sleep(0.1)


def test_two_gateways_on_one_postgresql_both_start(
    tmp_path: Path, tg: TelegramStub, model: OpenAIStub, postgres_url: str
) -> None:
    config = _config(tmp_path, tg, model, postgres_url)
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    procs = [_start(config, tmp_path, log) for log in logs]
    try:
        ready = [_until_ready(proc, log) for proc, log in zip(procs, logs, strict=True)]
        assert all("memory postgresql postgresql://" in line for line in ready)
        assert all(proc.poll() is None for proc in procs)
        assert not gateway_running(tmp_path / "data" / "memory.db")  # no SQLite lock was taken
    finally:
        for proc in procs:
            proc.terminate()
        codes = [proc.wait(60) for proc in procs]
    assert codes == [0, 0]
