"""The objects a started gateway keeps for its whole life, out of the garbage collector's way.

Once ``Runtime.start`` has run, most of the process's objects live as long as it does: every imported
module, class and function (openai, pydantic, httpx, jieba, the channels' libraries), the config, the
store's and the engine's parts. CPython's full (oldest-generation) collection walks every one of them
each time it runs, and in a gateway answering messages it runs every few hundred messages: in
bench.gateway_throughput three full collections of ~300k objects cost ~0.4 ms of the event loop's CPU a
message (bench/README.md, "Gateway CPU", stop 51). ``freeze_startup_heap`` collects what is garbage at
that moment, then moves everything still alive into the collector's permanent generation
(``gc.freeze``), which no later collection walks; objects made afterwards are collected as before.

The cost: one full collection when it is called, and a frozen object that becomes garbage later is never
freed (its memory stays, its ``__del__`` never runs) — fine for what a process keeps to its end, which is
why only the long-running commands (``tierclaw gateway``, ``tierclaw chat``) and the benchmarks that
measure them ask for it (``Runtime.start(freeze_heap=True)``), not a test that starts and closes
runtimes one after another.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("tierclaw.gateway")


def freeze_startup_heap() -> int:
    """Collect the garbage there is now, then freeze every object still alive (``gc.freeze``) so later
    collections skip them; returns how many objects are frozen in all."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.debug("[gateway] %d objects alive after start frozen out of the garbage collector's walks", frozen)
    return frozen
