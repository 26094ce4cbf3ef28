"""The terminal chat as a person at a keyboard uses it: keys typed into prompt_toolkit's own pipe input
in-process, and `tierclaw chat` on a real pseudo-terminal against the local OpenAI server."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import logging
import os
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import termios
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from channels.base import InboundMessage, OutboundMessage
from channels.console import CANCELLED, ConsoleChannel
from channels.terminal_ui import keep_line_breaks
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace
from tests.support.waiting import PROCESS_CEILING, until

TIERCLAW = Path(sys.executable).with_name("tierclaw")
UP = "\x1b[A"
LEFT = "\x1b[D"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
CTRL_C, CTRL_D = "\x03", "\x04"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT_READY = "\x1b[?2004h"  # prompt_toolkit turns bracketed paste on when the prompt is up


class Terminal:
    """A ConsoleChannel on a pipe input; ``received`` holds what it delivered, ``answer`` replies."""

    def __init__(self, console: ConsoleChannel, keys) -> None:
        self.console = console
        self.keys = keys
        self.received: list[InboundMessage] = []
        self.arrived = asyncio.Event()
        self.answer: Callable[[InboundMessage], str | None] = lambda m: f"you said: {m.text}"

    async def deliver(self, message: InboundMessage) -> None:
        self.received.append(message)
        self.arrived.set()
        reply = self.answer(message)
        if reply is not None:
            await self.console.send(OutboundMessage("console", "local", reply, reply_to=message.message_id))

    def type(self, keys: str) -> None:
        self.keys.send_text(keys)

    async def wait_for(self, count: int) -> None:
        async with asyncio.timeout(30):
            while len(self.received) < count:
                self.arrived.clear()
                await self.arrived.wait()


def _history_loaded(term: Terminal) -> bool:
    """prompt_toolkit has put the history file's lines in the prompt's buffer (a background task)."""
    assert term.console._ui is not None
    loading = term.console._ui.session.default_buffer._load_history_task
    return loading is not None and loading.done()


@asynccontextmanager
async def terminal(tmp_path: Path, out: io.StringIO) -> AsyncIterator[Terminal]:
    with create_pipe_input() as keys:
        console = ConsoleChannel(
            io.StringIO(),
            out,
            interactive=True,
            history_path=tmp_path / "chat_history",
            pt_input=keys,
            pt_output=DummyOutput(),
        )
        term = Terminal(console, keys)
        await console.start(term.deliver)
        try:
            yield term
        finally:
            await console.stop()


async def test_line_editing_and_the_reply_rendered(tmp_path: Path) -> None:
    out = io.StringIO()
    async with terminal(tmp_path, out) as term:
        term.type(f"hello wrld{LEFT * 3}o\r")  # ← moves the cursor: no escape codes in the message
        await term.wait_for(1)
        term.type(CTRL_D)
        await asyncio.wait_for(term.console.finished.wait(), 30)
    assert [m.text for m in term.received] == ["hello world"]
    assert "you said: hello world" in out.getvalue()


async def test_history_is_kept_across_sessions(tmp_path: Path) -> None:
    async with terminal(tmp_path, io.StringIO()) as term:
        term.type("first session line\r")
        await term.wait_for(1)
        term.type("/quit\r")
        await asyncio.wait_for(term.console.finished.wait(), 30)
    assert "first session line" in (tmp_path / "chat_history").read_text(encoding="utf-8")
    async with terminal(tmp_path, io.StringIO()) as term:
        await until(lambda: _history_loaded(term), what="the history file loaded")  # in the background
        term.type(f"{UP}{UP}\r")  # ↑ ↑ recalls the last session's line before its /quit
        await term.wait_for(1)
    assert term.received[0].text == "first session line"


async def test_a_pasted_block_is_one_message(tmp_path: Path) -> None:
    async with terminal(tmp_path, io.StringIO()) as term:
        term.type(f"{PASTE_START}line one\r\nline two\nline three{PASTE_END}\r")
        await term.wait_for(1)
        term.type("one\x1b\rtwo\r")  # Esc Enter: a new line inside the message
        await term.wait_for(2)
    assert [m.text for m in term.received] == ["line one\nline two\nline three", "one\ntwo"]


async def test_ctrl_c_at_the_prompt_drops_the_line_and_ctrl_d_leaves(tmp_path: Path) -> None:
    async with terminal(tmp_path, io.StringIO()) as term:
        term.type(f"never mind{CTRL_C}kept\r")
        await term.wait_for(1)
        term.type(CTRL_D)
        await asyncio.wait_for(term.console.finished.wait(), 30)
    assert [m.text for m in term.received] == ["kept"]


@pytest.mark.usefixtures("ctrl_c_interrupts")  # the handling restored is checked against the default
async def test_ctrl_c_while_a_reply_is_made_cancels_it_and_the_chat_goes_on(tmp_path: Path) -> None:
    out = io.StringIO()
    cancelled: list[str] = []
    async with terminal(tmp_path, out) as term:
        term.console.on_cancel = cancelled.append
        term.answer = lambda m: None if m.text == "slow question" else f"you said: {m.text}"
        term.type("slow question\r")
        await term.wait_for(1)
        # the terminal now waits for the reply, out of raw mode, Ctrl-C handled (the spinner is up)
        await until(lambda: term.console._view is not None, what="the reply awaited")
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends then
        async with asyncio.timeout(30):
            while CANCELLED not in out.getvalue():
                await asyncio.sleep(0.02)
        # The cancelled reply may still arrive (it was already made): it is not shown.
        await term.console.send(OutboundMessage("console", "local", "too late", reply_to="1"))
        term.type("next\r")
        await term.wait_for(2)
        term.type(CTRL_D)
        await asyncio.wait_for(term.console.finished.wait(), 30)
    assert cancelled == ["console:local"]
    assert "too late" not in out.getvalue() and "you said: next" in out.getvalue()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C handling restored


def test_line_breaks_are_kept_outside_code() -> None:
    assert keep_line_breaks("a\nb\n\nc") == "a  \nb\n\nc"
    assert keep_line_breaks("```\nx\ny\n```\nz") == "```\nx\ny\n```\nz"


# ----------------------------------------------------------------------------- a real pseudo-terminal


def _take_terminal() -> None:
    """In the child: make its stdin (the pty) its controlling terminal, so that Ctrl-C there is SIGINT."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Pty:
    """``tierclaw chat`` with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(self, env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        self.master = master
        self.process = subprocess.Popen(
            [str(TIERCLAW), "chat"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,  # its own session: the pty is its controlling terminal
            preexec_fn=_take_terminal,
        )
        os.close(slave)
        self.output = ""
        self._consumed = 0  # how much of the output earlier read_until calls matched

    @property
    def visible(self) -> str:
        """The output without terminal control sequences (colours, cursor moves)."""
        return ANSI.sub("", self.output)

    def read_until(self, text: str, timeout: float = PROCESS_CEILING) -> None:
        """Read until ``text`` is written after what earlier calls matched (a control sequence as is,
        other text as seen on screen, without colours and cursor moves)."""
        end = time.monotonic() + timeout
        # The text as written, with colour and cursor sequences allowed between its characters.
        pattern = re.compile(f"(?:{ANSI.pattern})*".join(re.escape(ch) for ch in text))
        while True:
            found = pattern.search(self.output, self._consumed)
            if found is not None:
                self._consumed = found.end()
                return
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} did not appear; output so far:\n{self.output}")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.output += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    raise AssertionError(f"{text!r} did not appear before exit:\n{self.output}") from None

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        os.close(self.master)


def _pty_env(tmp_path: Path, stub: OpenAIStub) -> dict[str, str]:
    """The environment of ``tierclaw chat`` on a pseudo-terminal, with its model on ``stub``."""
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "provider": {"apiKey": "sk-test-terminal-0001", "baseUrl": stub.base_url},
                "memory": {"dbPath": str(tmp_path / "data" / "memory.db"), "embedding": {"provider": "none"}},
            }
        ),
        encoding="utf-8",
    )
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "TIERCLAW_CONFIG": str(config),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }


def test_tierclaw_chat_on_a_terminal(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.responder = lambda body: StubReply(content="**Noted**, and `kept`.")
        stub.script(StubReply(content="too slow", delay=3600))  # the first question: cancelled with Ctrl-C
        chat = Pty(_pty_env(tmp_path, stub))
        try:
            chat.read_until("/quit or Ctrl-D to leave")
            chat.read_until(PROMPT_READY)
            chat.type("What is the slowest animal?\r")
            chat.read_until("thinking")
            deadline = time.monotonic() + PROCESS_CEILING
            while not stub.chat_requests() and time.monotonic() < deadline:  # the model is being asked
                time.sleep(0.05)
            assert stub.chat_requests(), "the question never reached the model"
            # "thinking" was shown after the terminal left raw mode and Ctrl-C became the reply's cancel
            chat.type(CTRL_C)
            chat.read_until(CANCELLED)
            chat.type("My sloth is called Dot\r")
            chat.read_until("Noted, and kept.")  # Markdown rendered: no ** or ` left
            # /quit, not Ctrl-D: a line typed before the prompt is back waits in the terminal's buffer,
            # a Ctrl-D would end that buffer instead (Ctrl-D is covered in-process above).
            chat.type("/quit\r")
            chat.read_until("saving memories")
            assert chat.process.wait(timeout=PROCESS_CEILING) == 0
        finally:
            chat.close()
    assert "too slow" not in chat.visible
    # The reply's words showed plain while it was written; then it was printed rendered, no ** or ` left.
    assert any(line.strip() == "Noted, and kept." for line in chat.visible.splitlines())
    history = tmp_path / "data" / "chat_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert "My sloth is called Dot" in history.read_text(encoding="utf-8")


async def test_a_log_line_while_the_reply_is_awaited_goes_above_the_spinner(tmp_path: Path) -> None:
    err = io.StringIO()
    stream = logging.StreamHandler(err)
    stream.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(stream)
    out = io.StringIO()
    try:
        async with terminal(tmp_path, out) as term:
            term.answer = lambda m: None  # the reply comes later: the spinner runs meanwhile
            term.type("hello\r")
            await term.wait_for(1)
            logging.getLogger("tierclaw.gateway").warning("the model is slow today")
            await term.console.send(OutboundMessage("console", "local", "finally", reply_to="1"))
            term.type(CTRL_D)
            await asyncio.wait_for(term.console.finished.wait(), 30)
        logging.getLogger("tierclaw.gateway").warning("after the chat")
    finally:
        root.removeHandler(stream)
    printed = ANSI.sub("", out.getvalue())
    assert "WARNING tierclaw.gateway: the model is slow today\n" in printed  # a line of its own, same format
    assert printed.index("the model is slow today") < printed.index("finally")
    assert "slow today" not in err.getvalue()  # not written beside the terminal's own output
    assert "after the chat" in err.getvalue()  # the usual handler is back once the chat ends


def test_a_streamed_reply_shows_its_words_as_they_come_then_rendered(tmp_path: Path) -> None:
    go_on = threading.Event()
    with OpenAIStub(pace=StreamPace(tokens_per_second=100)) as stub:
        # The model stops after four tokens until the test has seen them on the terminal.
        stub.script(StubReply(content="First **half** of the answer, then the rest.", hold=(4, go_on)))
        chat = Pty(_pty_env(tmp_path, stub))
        try:
            chat.read_until(PROMPT_READY)
            chat.type("Tell me in two halves\r")
            chat.read_until("First **half** of the")  # plain, while the model is still writing
            assert "the rest" not in chat.visible
            go_on.set()
            chat.read_until("First half of the answer, then the rest.")  # then rendered, whole
            chat.type("/quit\r")
            chat.read_until("saving memories")
            assert chat.process.wait(timeout=PROCESS_CEILING) == 0
        finally:
            go_on.set()
            chat.close()
    assert stub.chat_requests()[0]["stream"] is True
