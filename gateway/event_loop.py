"""The event loop a tierclaw process runs on: uvloop's when it is installed, else asyncio's own.

uvloop (libuv under the asyncio API) spends less of the event loop's own CPU on each wake-up, socket read
and callback than asyncio's pure-Python loop, and the gateway's loop wakes ~20–35 times a message (the
model's HTTP exchange, aiosqlite's hand-offs, the channel): bench/README.md, "Gateway CPU", stop 53. It is
a dependency, but a gateway without it (a platform with no wheel, a trimmed install) still starts, on
asyncio's loop, and says so in one INFO line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("tierclaw.gateway")

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's ``new_event_loop`` when uvloop imports, else None (asyncio's default loop)."""
    try:
        import uvloop
    except ImportError as exc:
        log.info("[gateway] uvloop is not installed (%s): running on asyncio's own event loop", exc)
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop ``loop_factory`` gives: the same runner (the main task
    cancelled on Ctrl-C, async generators and the default executor shut down at the end)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """Which loop ``loop`` is, "uvloop" or "asyncio" (for a bench's JSON and a test): its class's module."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
