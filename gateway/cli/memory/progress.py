"""A progress bar for the long memory commands (import, migrate, flush, reindex), drawn with rich.

The bar goes to stderr and only when stderr is a terminal: piped output and tests see just the final
summary line, so scripts keep parsing what they parsed before. ``rich`` is imported when a bar starts.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO


class ProgressBar:
    """``bar(done, total)`` updates the bar; use it as a context manager so the bar's line is closed.

    ``done``, ``total`` and ``rate()`` stay readable after the bar ends (for "interrupted after N of M").
    """

    def __init__(self, description: str, unit: str, stream: TextIO | None = None) -> None:
        self.description = description
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.done = 0
        self.total = 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressBar:
        if self.tty:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(self.unit),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self._progress is not None:
            self._progress.update(self._task, completed=done, total=total or None)

    def note(self, line: str) -> None:
        """Print ``line`` on the stream (above the bar while it is drawn)."""
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.stream, flush=True)

    def rate(self) -> float:
        """Units per second since the bar was made."""
        return self.done / max(time.monotonic() - self.started, 1e-6)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
