"""The converters' inputs: a missing one is a one-line message and exit code 1, never a traceback (benchmarks
run on machines without the shared data, and a traceback there would look like a bug).

A module of its own so that ``python -m bench.datasets`` (which runs as ``__main__``) and the modules it
imports raise and catch the same ``MissingInputError``.
"""

from __future__ import annotations

import sys
from pathlib import Path

SHARED_DATA_HINT = "the benchmark data lives in ../shared/data (relative to the project root)"


class MissingInputError(FileNotFoundError):
    """An input file or folder does not exist; ``main`` turns it into a one-line message and exit code 1."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"missing input: {path} does not exist; {SHARED_DATA_HINT}")
        self.path = path


def require_input(path: str | Path) -> Path:
    """Return ``path`` if it exists, else raise MissingInputError naming it (not a bare FileNotFoundError)."""
    path = Path(path)
    if not path.exists():
        raise MissingInputError(path)
    return path


def note(message: str) -> None:
    """Report a count or oddity on stderr so stdout stays free for pipes."""
    print(message, file=sys.stderr)
