"""An event loop whose clock moves only when the test moves it, for tests of deadlines against each other.

A test of "b waited less than the deadline, c waited more" on the real clock needs margins (release b's
blocker 4 s in, expect c told at 8 s), and a machine stalled longer than the margin fails it. On
``SteppedLoop`` the clock (``loop.time()``: ``asyncio.timeout``, ``asyncio.sleep``, ``call_later``) stands
still until ``advance``; ``settle`` then runs everything the step made due, in deadline order, until
nothing is left to run. However slow the machine, a timer fires at the step that passes it and never
because time went by. Only for code that waits on timers and on other tasks, not on sockets or threads:
``settle`` cannot see work in flight outside the loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from tests.support.waiting import CEILING

T = TypeVar("T")


class SteppedLoop(asyncio.SelectorEventLoop):
    """``time()`` is a counter from 0 that ``advance`` moves."""

    def __init__(self) -> None:
        super().__init__()
        self._now = 0.0

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock on; what comes due runs at the next ``settle``."""
        self._now += seconds

    def _busy(self) -> bool:
        # asyncio's own queues (BaseEventLoop._ready, ._scheduled): a callback ready to run, or a timer
        # due that the loop has not moved to the ready queue yet.
        if self._ready:  # type: ignore[attr-defined]
            return True
        scheduled = self._scheduled  # type: ignore[attr-defined]
        return any(not h.cancelled() and h.when() <= self._now for h in scheduled)

    async def settle(self) -> None:
        """Return once every task is waiting (on an event, a lock, a timer not yet due); fails the test
        after ``CEILING`` seconds of real time."""
        deadline = time.monotonic() + CEILING
        await asyncio.sleep(0)
        while self._busy():
            if time.monotonic() > deadline:
                raise AssertionError(f"the loop kept running for {CEILING} s")
            await asyncio.sleep(0)


def run_stepped(main: Callable[[SteppedLoop], Coroutine[Any, Any, T]]) -> T:
    """Run ``main(loop)`` to the end on a fresh ``SteppedLoop`` (a plain, not an async, test calls this)."""
    loop = SteppedLoop()
    try:
        return loop.run_until_complete(main(loop))
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
