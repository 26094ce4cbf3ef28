"""A head file in place of the shipped one, for tools that compare head files in one process (issue 35,
stop 63: ``bench.keep_screen``).

Why: a round tries several head files; ``bench.everyday`` measures one per run and embeds every text again
each time. Inside ``head_file(path)``, ``load_head`` and ``asking.load_question`` read ``path`` (their
caches are emptied on the way in and out), so one process with one embedder and its caches can put the same
messages to each head in turn. The gateway never enters it; it is not for threads that read the head
meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.head import model
from memory.head.asking import load_question


@contextmanager
def head_file(path: str | Path) -> Iterator[None]:
    """Read ``path`` as the head file until the block ends (refused at once if it is not a file)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no head file at {file}")
    model.IN_PLACE.append(file)
    _forget()
    try:
        yield
    finally:
        model.IN_PLACE.pop()
        _forget()


def _forget() -> None:
    model.load_head.cache_clear()
    load_question.cache_clear()
