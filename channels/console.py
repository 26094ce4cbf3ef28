"""The terminal channel: messages typed (or piped) in, replies printed out.

One chat (``console:local``) with one sender (``local``), so its owner is ``console:local`` unless the
``users`` map in the config assigns it to a person. Two ways in:

- a person at a terminal (stdin is a TTY): ``channels/terminal_ui.py`` reads with line editing and
  history and prints replies as Markdown; while a reply is being made a spinner runs — or, streamed
  (``open_stream``), the reply's words as they come — and Ctrl-C cancels that reply (``on_cancel``)
  without leaving the chat.
- piped input (``printf 'hi\\n/memory\\n' | tierclaw chat``): one message per line, replies printed as
  plain text, nothing else on stdout — scripts and tests read it.

At end of input, Ctrl-D or ``/quit`` (``/exit``), ``finished`` is set and the runner waits for the
pending replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from channels.base import Deliver, InboundMessage, OutboundMessage, RememberHandle

if TYPE_CHECKING:
    from channels.terminal_ui import ReplyView, TerminalUI

CHAT_ID = "local"
SENDER_ID = "local"
# Lines that end the chat like end of input does (then memories are saved and the process exits).
QUIT_COMMANDS = frozenset({"/quit", "/exit"})
# How long the terminal waits for a reply before letting the person type again.
REPLY_WAIT_SECONDS = 300.0
CANCELLED = "(cancelled)"
FRAME_SECONDS = 0.1  # a streamed reply's words are redrawn at most this often


class ConsoleChannel:
    """The terminal chat; ``interactive`` (default: stdin is a TTY) picks the way in (module doc).

    ``on_cancel(chat_key)`` is called when the person cancels a reply with Ctrl-C (the runner points it
    at the process loop's ``cancel``). ``history_path``, ``pt_input`` and ``pt_output`` go to
    ``TerminalUI``.
    """

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        interactive: bool | None = None,
        history_path: Path | None = None,
        pt_input: Any = None,
        pt_output: Any = None,
    ) -> None:
        self._stdin = stdin if stdin is not None else sys.stdin
        self._stdout = stdout if stdout is not None else sys.stdout
        self._interactive = self._stdin.isatty() if interactive is None else interactive
        self._terminal_options = {"history_path": history_path, "pt_input": pt_input, "pt_output": pt_output}
        self._ui: TerminalUI | None = None
        self._reader: asyncio.Task | None = None
        self._counter = 0
        self._awaited: str | None = None  # id of the message whose reply the terminal waits for
        self._reply: str | None = None
        self._replied = asyncio.Event()
        self._cancel = asyncio.Event()
        self._dropped: set[str] = set()  # ids of messages whose reply was cancelled
        self.on_cancel: Callable[[str], object] | None = None
        self.on_stopped: Callable[[str], object] | None = None  # base.StreamsReplies (Ctrl-C: on_cancel)
        self.finished = asyncio.Event()
        self._view: ReplyView | None = None  # where the awaited reply's words show while it is written

    @property
    def name(self) -> str:
        return "console"

    @property
    def interactive(self) -> bool:
        """True when a person types (a TTY): line editing, Markdown, spinner; False for piped input."""
        return self._interactive

    async def start(self, deliver: Deliver) -> None:
        """Start taking messages in the background."""
        if self._interactive:
            from channels.terminal_ui import TerminalUI

            self._ui = TerminalUI(self._stdout, **self._terminal_options)
            self._reader = asyncio.create_task(self._converse(deliver), name="console-terminal")
            return
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        # A daemon thread, not asyncio.to_thread: a readline blocked on a pipe must not keep the process
        # alive at exit (the default executor is joined when the loop closes).
        threading.Thread(
            target=self._read_stdin, args=(loop, lines), name="console-stdin", daemon=True
        ).start()
        self._reader = asyncio.create_task(self._deliver_lines(lines, deliver), name="console-reader")

    # ------------------------------------------------------------------ a person at a terminal

    async def _converse(self, deliver: Deliver) -> None:
        assert self._ui is not None
        try:
            with self._ui.logs_above():  # a log line never lands inside the spinner or the prompt
                await self._turns(deliver)
        finally:
            self.finished.set()

    async def _turns(self, deliver: Deliver) -> None:
        """Read, deliver and wait for the reply, until the person leaves."""
        assert self._ui is not None
        while True:
            text = await self._ui.read()
            if text is None:  # Ctrl-D
                break
            if not text.strip():
                continue
            if text.strip().lower() in QUIT_COMMANDS:
                break
            message = self._message(text)
            self._awaited, self._reply = message.message_id, None
            self._replied.clear()
            self._cancel.clear()
            await deliver(message)
            await self._wait_for_reply(message)

    async def _wait_for_reply(self, message: InboundMessage) -> None:
        """Spin until the reply comes (then print it) or Ctrl-C cancels it (then say so)."""
        assert self._ui is not None
        loop = asyncio.get_running_loop()
        with self._sigint_cancels(loop), self._ui.thinking() as self._view:
            waits = {
                asyncio.ensure_future(self._replied.wait()),
                asyncio.ensure_future(self._cancel.wait()),
            }
            try:
                await asyncio.wait(waits, timeout=REPLY_WAIT_SECONDS, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
                self._view = None
        self._awaited = None
        if self._reply is not None:
            self._ui.show(self._reply)
        elif self._cancel.is_set():
            self._dropped.add(message.message_id)
            if self.on_cancel is not None:
                self.on_cancel(message.chat_key)
            self._ui.say(CANCELLED)

    @contextlib.contextmanager
    def _sigint_cancels(self, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
        """While a reply is awaited the terminal is not in raw mode, so Ctrl-C is SIGINT: make it cancel
        the reply instead of ending the program (where signals can be handled: the main thread)."""
        installed = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, self.cancel_reply)
            installed = True
        try:
            yield
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)

    def cancel_reply(self) -> None:
        """Cancel the reply being waited for (Ctrl-C); nothing when none is."""
        if self._awaited is not None:
            self._cancel.set()

    # ------------------------------------------------------------------ piped input

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
                line = await lines.get()
                if line is None:  # end of input
                    break
                text = line.rstrip("\r\n")
                if not text.strip():
                    continue
                if text.strip().lower() in QUIT_COMMANDS:
                    break
                await deliver(self._message(text))
        finally:
            self.finished.set()

    # ------------------------------------------------------------------ both

    def _message(self, text: str) -> InboundMessage:
        self._counter += 1
        return InboundMessage(
            channel=self.name,
            chat_id=CHAT_ID,
            sender_id=SENDER_ID,
            text=text,
            message_id=str(self._counter),
        )

    async def send(self, message: OutboundMessage) -> None:
        """Print a reply: plain text and a blank line when piped; Markdown on a terminal."""
        if self._ui is None:
            self.write(message.text + "\n")
            return
        if message.reply_to in self._dropped:
            return  # its reply was cancelled: it came anyway (it was already made)
        if message.reply_to == self._awaited and self._reply is None:
            self._reply = message.text  # printed once the spinner is gone
            self._replied.set()
            return
        self._ui.show(message.text)

    def open_stream(
        self, message: InboundMessage, *, resume: str, remember: RememberHandle
    ) -> TerminalStream | None:
        """On a terminal the reply's words show as they come (``TerminalStream``); piped, it is printed
        whole (None)."""
        return TerminalStream(self, message) if self._ui is not None else None

    def show_partial(self, message: InboundMessage, text: str) -> None:
        """The reply to ``message`` so far, where the spinner was (if the terminal still waits for it)."""
        if self._view is not None and message.message_id == self._awaited:
            self._view.partial(text)

    def write(self, text: str, end: str = "\n") -> None:
        """Print a line of the channel's own (notices) as is."""
        self._stdout.write(text + end)
        self._stdout.flush()

    async def stop(self) -> None:
        """Stop taking messages (a reader thread blocked in readline ends with the process)."""
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


class TerminalStream:
    """A reply in the terminal while it is written: its plain words redrawn at most every
    ``FRAME_SECONDS``, then the whole reply printed as Markdown by ``send``."""

    def __init__(self, console: ConsoleChannel, message: InboundMessage) -> None:
        self._console = console
        self._message = message
        self._last = float("-inf")

    def next_update_in(self) -> float:
        return max(FRAME_SECONDS - (time.monotonic() - self._last), 0.0)

    async def update(self, text: str) -> None:
        self._last = time.monotonic()
        self._console.show_partial(self._message, text)

    async def finish(self, text: str) -> None:
        reply = OutboundMessage(self._console.name, CHAT_ID, text, reply_to=self._message.message_id)
        await self._console.send(reply)

    async def cancel(self) -> None:
        return None  # Ctrl-C: the terminal says "(cancelled)" itself
