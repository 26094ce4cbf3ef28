"""The gateway processes of a trial: each replica's config (its own directory, ports and log) and its
life — start, wait until ready, SIGKILL, SIGTERM (bench/replicas/__init__.py)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.stub_process import REPO, child_env
from localservers.telegram_server import free_port

READY_TIMEOUT = 300.0  # a ceiling: under load (a suite beside another) importing took 43 s


@dataclass
class Replica:
    """One gateway process: its ports, config file and log."""

    index: int
    channel_port: int  # the Telegram webhook's or the Feishu callback's port (unused when polling)
    ops_port: int
    config: Path
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def name(self) -> str:
        """Its ``gateway.replicaId``."""
        return f"r{self.index}"

    @property
    def ready_url(self) -> str:
        return f"http://127.0.0.1:{self.ops_port}/readyz"

    def start(self) -> None:
        env = {k: v for k, v in child_env().items() if not k.startswith("TIERCLAW_")}
        argv = [sys.executable, "-m", "gateway.cli", "gateway", "--log-level", "INFO", "--config"]
        self.proc = subprocess.Popen(
            [*argv, str(self.config)],
            cwd=REPO,
            env={**env, "HOME": str(self.config.parent)},
            stdout=self.log.open("a", encoding="utf-8"),
            stderr=subprocess.STDOUT,
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def pause(self) -> None:
        """SIGSTOP: the process stalls (a long GC pause, a frozen VM) — nothing of it runs until
        ``resume``, its connections and leases untouched."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after ``pause``."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> int | None:
        """SIGTERM (the gateway drains), then wait; the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a stopped process would not hear the SIGTERM
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    async def wait_ready(self, http: aiohttp.ClientSession) -> None:
        """Until /readyz answers 200 (the gateway's channels started, its database answers)."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(
                    f"replica {self.index} exited ({self.proc.returncode}):\n{self.log_text()[-2000:]}"
                )
            try:
                async with http.get(self.ready_url) as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {self.index} was not ready within {READY_TIMEOUT:.0f} s")
            await asyncio.sleep(0.1)


def make_replica(
    base: Path, index: int, database: str, model_url: str, jobs_every: float | None
) -> tuple[Replica, dict[str, Any]]:
    """Replica ``index`` (its own directory and ports, not started) and its config without channels;
    ``write_config`` writes it once the trial added its channel section."""
    home = base / f"replica-{index}"
    home.mkdir(parents=True, exist_ok=True)
    replica = Replica(index, free_port(), free_port(), home / "config.json", base / f"replica-{index}.log")
    memory: dict[str, Any] = {
        "dbPath": str(base / "memory.db"),
        "embedding": {"provider": "none"},
        "extraction": {"quietGap": "2s"},
        "scratchpad": False,
    }
    if database.startswith(("postgresql://", "postgres://")):
        memory["databaseUrl"] = database
    else:
        memory["dbPath"] = database
    gateway: dict[str, Any] = {"replicaId": replica.name, "http": {"port": replica.ops_port}}
    if jobs_every is not None:
        gateway["jobsEvery"] = f"{jobs_every:g}s"
    config = {
        "provider": {"apiKey": "sk-bench", "baseUrl": model_url, "maxRetries": 0, "timeoutSeconds": 30},
        "agent": {"model": "stub", "workspace": str(base / "workspace"), "tools": False},
        "memory": memory,
        "channels": {},
        "gateway": gateway,
        "timezone": "UTC",
    }
    return replica, config


def write_config(replica: Replica, config: dict[str, Any]) -> None:
    replica.config.write_text(json.dumps(config), encoding="utf-8")


async def start_all(replicas: list[Replica], http: aiohttp.ClientSession) -> None:
    """Start every replica, then wait until each is ready."""
    for r in replicas:
        r.start()
    for r in replicas:
        await r.wait_ready(http)


def stop_all(replicas: list[Replica]) -> None:
    for r in replicas:
        r.stop()
