"""The operations endpoints of ``tierclaw gateway``: ``/healthz``, ``/readyz``, ``/metrics``.

Served on ``gateway.http.host:port`` (off unless ``port`` is set; 0 = a free port) by aiohttp, on a port
of its own rather than the memory page's: the page answers nothing without its token and only to a
loopback ``Host`` (gateway/dashboard/access.py), which is right for memories and wrong for a load
balancer's health check or a Prometheus scrape from another machine. Nothing here shows memory content
or a secret: counts, timings and the replica id.

- ``GET /healthz``: 200 ``{"alive": true, "replica": …}`` while the process serves at all.
- ``GET /readyz``: 200 once the channels have started and the database answers a read; else 503 with a
  short JSON reason (``starting``, ``stopping``, ``database unreachable: …``) — a load balancer stops
  sending here at shutdown before intake stops (gateway/cli/run.py).
- ``GET /metrics``: gateway/metrics.py, backlogs read from the database at each scrape.

``start_operations`` also puts the replica id in front of every log line (gateway/replica.py), whether
or not the endpoints are served.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from aiohttp import web

from gateway.replica import replica_id, tag_log_lines

if TYPE_CHECKING:
    from gateway.app import Runtime
    from gateway.metrics import GatewayMetrics
    from memory.store.protocol import MemoryStore

log = logging.getLogger("tierclaw.gateway")

DATABASE_CHECK_SECONDS = 2.0  # a read slower than this counts as unreachable for /readyz


class Operations:
    """The state the endpoints report, and the server when one listens (``url`` is then set)."""

    def __init__(self, replica: str, store: MemoryStore, metrics: GatewayMetrics | None) -> None:
        self.replica = replica
        self.store = store
        self.metrics = metrics
        self.state = "starting"  # → "ready" → "stopping"
        self.url: str | None = None
        self._runner: web.AppRunner | None = None

    def ready(self) -> None:
        """The channels have started: /readyz may say yes (if the database answers)."""
        self.state = "ready"

    def stopping(self) -> None:
        """Shutdown began: /readyz says no from now on."""
        self.state = "stopping"

    async def listen(self, host: str, port: int) -> str:
        """Serve the endpoints on ``host:port``; returns the base URL (OSError if the port is taken)."""
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        actual = runner.addresses[0][1] if runner.addresses else port
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{actual}"
        return self.url

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def not_ready_reason(self) -> str | None:
        """Why this replica should not be sent work now; None when it should."""
        if self.state != "ready":
            return self.state
        try:
            await asyncio.wait_for(self.store.inbox.count(answered=False), DATABASE_CHECK_SECONDS)
        except TimeoutError:
            return f"database unreachable: no answer within {DATABASE_CHECK_SECONDS:.0f} s"
        except Exception as exc:
            return f"database unreachable: {type(exc).__name__}: {exc}"[:200]
        return None

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"alive": True, "replica": self.replica})

    async def _readyz(self, request: web.Request) -> web.Response:
        reason = await self.not_ready_reason()
        if reason is None:
            return web.json_response({"ready": True, "replica": self.replica})
        return web.json_response({"ready": False, "reason": reason, "replica": self.replica}, status=503)

    async def _metrics(self, request: web.Request) -> web.Response:
        if self.metrics is None:  # pragma: no cover - listen() is only called with metrics
            raise web.HTTPNotFound()
        from gateway.metrics import CONTENT_TYPE

        await self.metrics.refresh(self.store)
        response = web.Response(body=self.metrics.exposition())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response


async def start_operations(runtime: Runtime) -> Operations:
    """Tag log lines with the replica id; with ``gateway.http.port`` set, count into metrics and serve
    the endpoints. Call after ``Runtime.open`` and before ``start`` (so messages answered at start are
    counted and /healthz answers during start-up); OSError when the port cannot be taken."""
    settings = runtime.config.gateway
    replica = replica_id(settings.replica_id)
    tag_log_lines(replica)
    if settings.http.port is None:
        return Operations(replica, runtime.engine.store, None)
    from gateway.metrics import GatewayMetrics  # prometheus-client only when it is served

    metrics = GatewayMetrics(replica)
    runtime.loop.observer = metrics
    runtime.assistant.memory_timing.observer = metrics.memory_ms
    runtime.on_takeover = metrics.lease_takeovers_total.inc  # an inbox message of a dead replica
    if runtime.jobs is not None:  # a job run taken over from a dead replica (gateway/scheduler.py)
        runtime.jobs.on_takeover = metrics.lease_takeovers_total.inc
    if runtime.assistant.extraction is not None:  # an owner a dead replica was extracting
        runtime.assistant.extraction.due.on_takeover = metrics.lease_takeovers_total.inc
    ops = Operations(replica, runtime.engine.store, metrics)
    url = await ops.listen(settings.http.host, settings.http.port)
    log.info("[gateway] replica %s: /healthz, /readyz and /metrics on %s", replica, url)
    return ops
