"""The terminal surface of ``bench.streaming``: ``tierclaw chat`` on a pseudo-terminal (its own database),
one person asking one question after another, the model the same stand-in as the gateway's.

Per reply: ``first_at`` — the reply's first word on the screen after the question (the words replace the
"thinking…" spinner as they come); ``full_at`` — the prompt back, after the reply was printed whole and
rendered; ``updates`` — how many times the words were drawn: the frames showing the reply's first three
words (the screen is made tall enough for a whole reply, so each frame shows them once), the rendered
reply included.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from bench.streaming.reply_text import reply_for
from bench.streaming.watch import Reply
from bench.stub_process import REPO, child_env
from localservers.openai_sse import tokens_of

PROMPT_READY = "\x1b[?2004h"  # prompt_toolkit turns bracketed paste on when the prompt is up
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ROWS, COLUMNS = 400, 200
WAIT_S = 120.0


def _take_terminal() -> None:
    """In the child: the pty becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Screen:
    """What ``tierclaw chat`` wrote to its terminal, with when each piece arrived."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.text = ""
        self.arrivals: list[tuple[int, float]] = []  # (end offset in text, when read)

    def wait_for(self, needle: str, start: int, timeout: float = WAIT_S) -> tuple[int, float]:
        """Read until ``needle`` is written after offset ``start``; (where it ends, when it was read)."""
        deadline = time.monotonic() + timeout
        while (found := self.text.find(needle, start)) < 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{needle!r} did not appear")
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                self.text += os.read(self.master, 65536).decode("utf-8", "replace")
                self.arrivals.append((len(self.text), time.monotonic()))
        end = found + len(needle)
        return end, next(at for offset, at in self.arrivals if offset >= end)


def terminal_replies(model_url: str, workdir: Path, replies: int, tokens: int) -> tuple[list[Reply], int]:
    """Ask ``replies`` questions one after another; every ``Reply`` and how many errors were seen."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "config.json"
    config.write_text(
        json.dumps(
            {
                "provider": {"apiKey": "sk-bench-0000", "baseUrl": model_url, "timeoutSeconds": 60},
                "memory": {"dbPath": str(workdir / "memory.db"), "embedding": {"provider": "none"}},
            }
        ),
        encoding="utf-8",
    )
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {**child_env(), "HOME": str(workdir), "TIERCLAW_CONFIG": str(config), "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "chat"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=REPO,
        env={**env, "PROMPT_TOOLKIT_NO_CPR": "1"},
        start_new_session=True,
        preexec_fn=_take_terminal,
    )
    os.close(slave)
    screen = Screen(master)
    out: list[Reply] = []
    errors = 0
    try:
        start, _ = screen.wait_for(PROMPT_READY, 0)
        for n in range(replies):
            question = f"Round {n}: what is the plan for the terminal trip?"
            words = tokens_of(reply_for(question, tokens))
            first_word, opening = words[0].strip(), "".join(words[:3]).strip()
            reply = Reply("terminal", "local", str(n), first_word, time.monotonic())
            os.write(master, (question + "\r").encode())
            try:
                thinking, _ = screen.wait_for("thinking", start)
                shown, reply.first_at = screen.wait_for(first_word, thinking)
                start, reply.full_at = screen.wait_for(PROMPT_READY, shown)
            except TimeoutError:
                errors += 1
                out.append(reply)
                break
            reply.updates = ANSI.sub("", screen.text[thinking:start]).count(opening)  # once a frame
            out.append(reply)
        os.write(master, b"/quit\r")
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(master)
    errors += screen.text.count("Traceback") + (proc.returncode not in (0, None))
    return out, errors
