"""The HTTP client under the models' ``AsyncOpenAI`` clients: the SDK's own aiohttp transport.

``openai.DefaultAioHttpClient`` is the SDK's documented choice of HTTP client for concurrent use: the same
``AsyncOpenAI`` (its request building, retries, errors and streams), with aiohttp's connection pool and
its C HTTP parser under it instead of httpx's pure-Python one (httpcore's pool probes every idle
connection's socket on each request and again on each response; h11 parses in Python). In
bench.gateway_throughput that was ~0.5 ms less of the event loop's CPU a message (bench/README.md,
"Gateway CPU", stop 53). aiohttp is a dependency already (the operations endpoint, the memory page).

One difference the callers make up for: the SDK's aiohttp transport reports *every* aiohttp connection
error — a refused connection, a server that hung up midway — as httpx's ``ConnectTimeout`` (its map keeps
the first class that matches), so the SDK raises ``APITimeoutError`` for them; ``hung_up`` tells those
apart from a real timeout, so a refused connection is still "couldn't reach", not "no answer" (it lives with
``describe_openai_error`` in memory/model/openai_model.py, which the memory model's log lines use too).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger("tierclaw.gateway")


def http_client() -> httpx2.AsyncClient | None:
    """A new ``DefaultAioHttpClient`` for one ``AsyncOpenAI`` (the SDK's defaults: connection limits,
    redirects; its timeout is the ``AsyncOpenAI`` client's, set on each request), or None — the SDK's
    default httpx client — with an SDK too old to have it or without its aiohttp part (openai 1.x needs
    the ``openai[aiohttp]`` extra; 3.x carries it)."""
    try:
        from openai import DefaultAioHttpClient

        return DefaultAioHttpClient()
    except (ImportError, RuntimeError) as exc:
        log.info("[gateway] the model client stays on httpx: %s", exc)
        return None
