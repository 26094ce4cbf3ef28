"""Reminders in the terminal (``tierclaw chat``, a real process fed by a pipe): one asked for while the chat
runs is printed when due; one that fell due while no chat ran is printed at the next start, late
(README "Reminders")."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from memory.engine import MemoryEngine
from tests.gateway.reminders.support import add, ago, due_row
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING


def chat(home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env["HOME"] = str(home)
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def read_until(proc: subprocess.Popen[str], needle: str, timeout: float = PROCESS_CEILING) -> str:
    """stdout until a line holding ``needle`` (the chat keeps running)."""
    assert proc.stdout is not None
    seen, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen += line
        if needle in line:
            return seen
    raise AssertionError(f"{needle!r} not printed: {seen!r}")


def test_asked_while_the_chat_runs_and_printed_when_due(tmp_path: Path) -> None:
    proc = chat(tmp_path)
    try:
        assert proc.stdin is not None
        proc.stdin.write("remind me in 2 seconds to stand up\n")
        proc.stdin.flush()
        # Both lines, in either order: the reminder is due 2 s after it is made, and on a loaded machine
        # the reply saying so can be printed later than that.
        printed = read_until(proc, "⏰ Reminder:")
        if "I'll remind you" not in printed:
            printed += read_until(proc, "I'll remind you")
        lines = printed.splitlines()
        assert any("I'll remind you" in line and "stand up" in line for line in lines), printed
        assert "⏰ Reminder: stand up" in printed
        proc.stdin.close()
        assert proc.wait(PROCESS_CEILING) == 0  # a ceiling: leaving saves memories, then exits
    finally:
        if proc.poll() is None:
            proc.kill()


def test_due_while_no_chat_ran_is_printed_at_the_next_start(tmp_path: Path) -> None:
    db = tmp_path / ".tierclaw" / "data" / "memory.db"

    async def seed() -> None:
        engine = await MemoryEngine.open(db)
        try:
            await add(engine, due_row("console:local", "console", "local", "feed the fish", ago(2 * 3600)))
        finally:
            await engine.close()

    asyncio.run(seed())
    proc = chat(tmp_path)
    try:
        assert proc.stdin is not None
        printed = read_until(proc, "⏰ Reminder:")
        assert "⏰ Reminder: feed the fish (late: due " in printed
        proc.stdin.write("/reminders\n")
        proc.stdin.close()
        rest = proc.stdout.read() if proc.stdout else ""
        assert proc.wait(PROCESS_CEILING) == 0
        assert "no reminders waiting" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
