"""The terminal as a person at a keyboard sees it: prompt_toolkit for typing, rich for what is printed.

Typing: line editing (arrows, Home/End, Ctrl-A/E/K/W…), history kept across sessions in a file (↑/↓,
Ctrl-R to search), a paste of several lines becomes one message (bracketed paste), Esc then Enter (or
Alt-Enter) starts a new line, Ctrl-C clears the line, Ctrl-D on an empty line leaves. Printing: a small
"thinking…" spinner runs while the model works; a streamed reply replaces it with the words as they come
(plain, the last screenful: ``ReplyView``), and the whole reply is then printed rendered as Markdown. Both
libraries are imported when the terminal chat starts, never for piped input (``channels/console.py``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from rich.console import Console
    from rich.live import Live

PROMPT = "> "
CONTINUATION = "… "
THINKING = "thinking…  (Ctrl-C cancels)"


class TerminalUI:
    """Reads messages and prints replies on an interactive terminal.

    ``pt_input``/``pt_output`` replace the real terminal (tests type into a pipe; prompt_toolkit's own
    ``create_pipe_input`` and ``DummyOutput``). ``history_path``: where earlier messages are kept (the
    caller creates it readable by its owner alone); None keeps them for this session only.
    """

    def __init__(
        self,
        stdout: TextIO,
        *,
        history_path: Path | None = None,
        pt_input: Any = None,
        pt_output: Any = None,
    ) -> None:
        self.console: Console = _console(stdout)
        self.session: PromptSession[str] = _session(history_path, pt_input, pt_output)
        self._thinking = False

    async def read(self) -> str | None:
        """The next message (several lines when pasted); None when the person leaves (Ctrl-D)."""
        while True:
            try:
                return await self.session.prompt_async(PROMPT)
            except KeyboardInterrupt:  # Ctrl-C at the prompt: the line is dropped, the chat goes on
                continue
            except EOFError:
                return None

    def show(self, text: str) -> None:
        """A reply, rendered as Markdown (its line breaks kept), then a blank line."""
        from rich.markdown import Markdown

        self.console.print(Markdown(keep_line_breaks(text)))
        self.console.print()

    def say(self, text: str) -> None:
        """A line of the terminal's own (notices, "cancelled"), dimmed so it is not mistaken for a reply."""
        self.console.print(text, style="dim", markup=False, highlight=False)

    @contextlib.contextmanager
    def thinking(self) -> Iterator[ReplyView]:
        """A spinner while the model works, then the reply's words as they come; gone before the reply
        is printed."""
        self._thinking = True
        view = ReplyView(self.console)
        try:
            with view:
                yield view
        finally:
            self._thinking = False

    def print_log(self, line: str) -> None:
        """A log line, above the spinner or the prompt, never into them: through rich while the spinner
        runs (its live display reprints itself below), through prompt_toolkit while the prompt is open
        (it redraws the prompt after), else as a plain dim line."""
        if not self._thinking and self.session.app.is_running:
            from prompt_toolkit import print_formatted_text

            print_formatted_text(line, output=self.session.output)
            return
        self.console.print(line, style="dim", markup=False, highlight=False)

    @contextlib.contextmanager
    def logs_above(self) -> Iterator[None]:
        """While open, the root logger's stream handlers print through ``print_log`` (same format)."""
        root = logging.getLogger()
        streams = [h for h in root.handlers if type(h) is logging.StreamHandler]
        handler = UILogHandler(self)
        handler.setFormatter(streams[0].formatter if streams else None)
        for stream in streams:
            root.removeHandler(stream)
        root.addHandler(handler)
        try:
            yield
        finally:
            root.removeHandler(handler)
            for stream in streams:
                root.addHandler(stream)


class ReplyView:
    """Where a reply being made shows: a spinner (a live display redrawn 12.5 times a second), then — a
    streamed reply — its words, redrawn only when they change."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._live: Live | None = None
        self._spinning = False

    def __enter__(self) -> ReplyView:
        from rich.live import Live
        from rich.spinner import Spinner

        spinner = Spinner("dots", THINKING, style="status.spinner")
        self._live = Live(spinner, console=self._console, transient=True, refresh_per_second=12.5)
        self._live.start()
        self._spinning = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def partial(self, text: str) -> None:
        """Show ``text`` (the reply so far, plain) instead of the spinner: its last screenful, so the live
        display never grows past the terminal (it could not be cleared then)."""
        from rich.live import Live
        from rich.text import Text

        if self._live is None:
            return
        if self._spinning:  # words from now on: no more redrawing on a timer
            self._live.stop()
            self._live = Live(console=self._console, transient=True, auto_refresh=False)
            self._live.start()
            self._spinning = False
        room = max(self._console.height - 2, 3)
        # Each line wraps to one screen line or more: the last ``room`` lines hold the last screenful, and
        # only they are wrapped (not the whole reply, ten times a second).
        tail = "\n".join(text.rsplit("\n", room)[-room:])
        lines = Text(tail).wrap(self._console, max(self._console.width, 20))
        self._live.update(Text("\n").join(lines[-room:]), refresh=True)


class UILogHandler(logging.Handler):
    """Hands each record, formatted, to ``TerminalUI.print_log``."""

    def __init__(self, ui: TerminalUI) -> None:
        super().__init__()
        self.ui = ui

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.ui.print_log(self.format(record))
        except Exception:
            self.handleError(record)


def keep_line_breaks(text: str) -> str:
    """``text`` with each line break outside code blocks made a hard break (two trailing spaces).

    Chat replies (and the commands' lists) mean their single line breaks, which Markdown would join
    into one paragraph.
    """
    lines = text.split("\n")
    fence = ""
    for i, line in enumerate(lines[:-1]):
        marker = line.lstrip()[:3]
        if marker in ("```", "~~~"):
            fence = "" if fence and marker == fence else (fence or marker)
            continue
        if not fence and line.strip() and lines[i + 1].strip():
            lines[i] = line.rstrip() + "  "
    return "\n".join(lines)


def _console(stdout: TextIO) -> Console:
    from rich.console import Console

    return Console(file=stdout, highlight=False, soft_wrap=False)


def _session(history_path: Path | None, pt_input: Any, pt_output: Any) -> PromptSession[str]:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        """Esc then Enter (Alt-Enter in most terminals): a new line inside the message."""
        event.current_buffer.insert_text("\n")

    history = FileHistory(str(history_path)) if history_path is not None else InMemoryHistory()
    return PromptSession(
        history=history,
        key_bindings=bindings,
        prompt_continuation=lambda width, _line, _soft: CONTINUATION.rjust(width),
        enable_history_search=False,
        input=pt_input,
        output=pt_output,
    )
