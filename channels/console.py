"""The terminal channel: read lines from standard input, print replies to standard output.

One chat (``console:local``) with one sender (``local``), so its owner is ``console:local`` unless the
``users`` map in the config assigns it to a person. Input can be piped (``printf 'hi\\n/memory\\n' |
tierclaw chat``): at end of input, or at ``/quit`` (``/exit``), ``finished`` is set and the runner waits
for the pending replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import TextIO

from channels.base import Deliver, InboundMessage, OutboundMessage

CHAT_ID = "local"
SENDER_ID = "local"
PROMPT = "> "
# Lines that end the chat like end of input does (then memories are saved and the process exits).
QUIT_COMMANDS = frozenset({"/quit", "/exit"})
# How long an interactive prompt waits for the reply before letting the person type again.
REPLY_WAIT_SECONDS = 300.0


class ConsoleChannel:
    """Line-oriented terminal chat. Lines are read in a worker thread so the event loop never blocks."""

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        interactive: bool | None = None,
    ) -> None:
        self._stdin = stdin if stdin is not None else sys.stdin
        self._stdout = stdout if stdout is not None else sys.stdout
        self._interactive = self._stdin.isatty() if interactive is None else interactive
        self._reader: asyncio.Task | None = None
        self._counter = 0
        self._replied = asyncio.Event()
        self.finished = asyncio.Event()

    @property
    def name(self) -> str:
        return "console"

    @property
    def interactive(self) -> bool:
        """True when a person types (a TTY): prompts and banners are shown; False for piped input."""
        return self._interactive

    async def start(self, deliver: Deliver) -> None:
        """Start reading lines in the background; each non-empty line becomes one InboundMessage."""
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        # A daemon thread, not asyncio.to_thread: a readline blocked on a terminal must not keep the
        # process alive at exit (the default executor is joined when the loop closes).
        threading.Thread(
            target=self._read_stdin, args=(loop, lines), name="console-stdin", daemon=True
        ).start()
        self._reader = asyncio.create_task(self._deliver_lines(lines, deliver), name="console-reader")

    def _read_stdin(self, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str | None]) -> None:
        """Runs in the reader thread: every line (then None at end of input) onto the loop's queue."""
        try:
            while True:
                line = self._stdin.readline()
                if not line:
                    break
                loop.call_soon_threadsafe(lines.put_nowait, line)
        except (OSError, ValueError):  # stdin closed under us
            pass
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(lines.put_nowait, None)

    async def _deliver_lines(self, lines: asyncio.Queue[str | None], deliver: Deliver) -> None:
        try:
            while True:
                if self._interactive:
                    self.write(PROMPT, end="")
                line = await lines.get()
                if line is None:  # end of input
                    break
                text = line.rstrip("\r\n")
                if not text.strip():
                    continue
                if text.strip().lower() in QUIT_COMMANDS:
                    break
                self._counter += 1
                await deliver(
                    InboundMessage(
                        channel=self.name,
                        chat_id=CHAT_ID,
                        sender_id=SENDER_ID,
                        text=text,
                        message_id=str(self._counter),
                    )
                )
                if self._interactive:  # show the next prompt after the reply, not before it
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._replied.wait(), timeout=REPLY_WAIT_SECONDS)
                    self._replied.clear()
        finally:
            self.finished.set()

    async def send(self, message: OutboundMessage) -> None:
        """Print a reply (one blank line after it, so a transcript stays readable)."""
        self.write(message.text + "\n")
        self._replied.set()

    def write(self, text: str, end: str = "\n") -> None:
        """Print a line of the channel's own (notices, prompts)."""
        self._stdout.write(text + end)
        self._stdout.flush()

    async def stop(self) -> None:
        """Stop delivering lines (a reader thread blocked in readline ends with the process)."""
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
