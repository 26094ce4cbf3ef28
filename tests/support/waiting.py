"""Waiting in tests: on a condition, with a generous ceiling, never for a fixed time (tests/README.md).

A test that sleeps "long enough" for something to happen fails on a loaded machine, and one that sleeps and
then asserts that nothing happened passes there without testing anything. ``until`` polls a condition (a
plain or an async callable) and fails the test, naming what it waited for, when the ceiling passes; the
ceiling is far above what the condition takes, so it only decides how long a broken test takes to fail.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

CEILING = 30.0  # seconds: far above any wait these tests make on a loaded 2-core machine
# A child process (a gateway, ``tierclaw chat``, a local server) first imports its libraries: at load 12,
# under ``nice``, importing gateway.cli and both channels took 43 s of wall time for 3.5 s of CPU.
PROCESS_CEILING = 300.0


async def until(
    condition: Callable[[], bool] | Callable[[], Awaitable[bool]],
    *,
    timeout: float = CEILING,
    what: str = "",
    every: float = 0.01,
) -> None:
    """Return once ``condition()`` is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        held = condition()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
        await asyncio.sleep(every)
