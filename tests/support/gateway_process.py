"""A real ``tierclaw gateway`` process for the crash and outage trials, and waiting on it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING


def start_gateway(config_path: Path, home: Path, log: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(config_path)],
        cwd=REPO,
        env={**env, "HOME": str(home)},
        stdout=log.open("a", encoding="utf-8"),
        stderr=subprocess.STDOUT,
    )


async def wait_until(
    predicate: Callable[[], bool], proc: subprocess.Popen, what: str, timeout: float = PROCESS_CEILING
) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
