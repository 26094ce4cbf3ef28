"""Running lark's websocket client beside our event loop: its bootstrap request with a timeout, its own
thread and loop, and a clean stop.

``lark.ws.Client`` is built and runs in a daemon thread on its own event loop (built there,
after ``set_event_loop``, because its constructor starts a cache-clearing task on the current loop).
lark-oapi 1.7.5 keeps that loop in a module global (``lark_oapi.ws.client.loop``), so only one
websocket channel can run per process; ``start()`` blocks forever and has no stop, so ``stop`` cancels
every task on that loop (after turning auto-reconnect off) and closes the connection itself. lark's
bootstrap request (``POST /callback/ws/endpoint``, a sync ``requests.post`` without a timeout) would
hang the thread forever on a server that never answers; the ``requests`` name inside
``lark_oapi.ws.client`` only is bound to a thin wrapper whose ``post`` defaults ``timeout`` to the
channel's ``timeoutSeconds`` (see ``RequestsWithTimeout``), so a silent server costs one timeout per
attempt, lark keeps retrying, and ``stop`` ends the thread."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import lark_oapi as lark
import lark_oapi.ws.client as lark_ws_client

from channels.outage import Outage

DEFAULT_WS_BOOTSTRAP_TIMEOUT = 10.0  # for lark's endpoint request on a thread that is not ours

ws_owner_lock = threading.Lock()
log = logging.getLogger("tierclaw.channels")

ws_bootstrap = threading.local()  # .timeout: set by the websocket thread for lark's endpoint request


class RequestsWithTimeout:
    """Stands in for the ``requests`` module inside ``lark_oapi.ws.client`` (and nowhere else).

    That module's only use of it is ``requests.post(domain + "/callback/ws/endpoint", ...)`` in
    ``Client._get_conn_url``, without a timeout. ``post`` here adds ``timeout`` when the caller gave none:
    the running websocket thread's ``timeoutSeconds`` (a thread-local, so it is exact per thread), else
    ``DEFAULT_WS_BOOTSTRAP_TIMEOUT``. Everything else is the real module. Rebinding one name in one lark
    module is the least invasive fix: no copy of lark's code, and the process-wide ``requests`` module
    (used by the API client and everyone else) is untouched.
    """

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def post(self, url: str, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", getattr(ws_bootstrap, "timeout", DEFAULT_WS_BOOTSTRAP_TIMEOUT))
        return self._real.post(url, *args, **kwargs)


def bind_lark_bootstrap_requests() -> None:
    """Give lark's websocket module the ``requests`` wrapper (once; safe to call again)."""
    with ws_owner_lock:
        if not isinstance(lark_ws_client.requests, RequestsWithTimeout):
            lark_ws_client.requests = RequestsWithTimeout(lark_ws_client.requests)


class ReportingWsClient(lark.ws.Client):
    """lark's websocket client, reporting its connection through an ``Outage`` and backing off.

    lark retries every ``ReconnectInterval`` seconds (the server's setting; the local server's is 1 s)
    and logs each failure; the records are dropped (``lark_logs.py``) and this says it once per outage,
    in plain words, then once when it is back — waiting between attempts at least the outage's backoff
    (doubling up to a minute), never less than lark's own interval.
    """

    def __init__(self, *args: Any, outage: Outage, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outage = outage
        self.on_reconnecting = outage.lost

    async def _connect(self) -> None:
        try:
            await super()._connect()
        except Exception as exc:
            self.outage.failed(exc)
            raise
        if self._conn is not None:
            self.outage.recovered()

    async def _try_connect(self, cnt: int) -> bool:
        connected = await super()._try_connect(cnt)
        if not connected:  # lark sleeps its interval next: make the whole wait the backoff
            extra = self.outage.backoff() - self._reconnect_interval
            if extra > 0:
                await asyncio.sleep(extra)
        return connected


class WebsocketRun:
    """One run of the websocket thread: its loop, and the lark client once the thread has built it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.client: lark.ws.Client | None = None  # set by the thread
        self.error: BaseException | None = None  # why lark's start() gave up, set by the thread
        self.thread: threading.Thread | None = None
        self.stopping = False


def cancel_ws_tasks(run: WebsocketRun) -> None:
    """Runs on the websocket loop: no reconnect, then cancel everything (lark's ``start()`` returns)."""
    if run.client is not None:
        run.client._auto_reconnect = False  # lark-oapi 1.7.5 has no stop(); its reconnect loop reads this
    for task in asyncio.all_tasks(run.loop):
        task.cancel()


def close_ws_loop(client: lark.ws.Client | None, ws_loop: asyncio.AbstractEventLoop) -> None:
    """Runs on the websocket thread after ``start()`` ended: finish cancelled tasks, close the connection."""
    try:
        if client is not None:
            client._auto_reconnect = False
        pending = asyncio.all_tasks(ws_loop)
        for task in pending:
            task.cancel()
        if pending:
            ws_loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        conn = getattr(client, "_conn", None)
        if client is not None and conn is not None:
            with contextlib.suppress(Exception):
                ws_loop.run_until_complete(asyncio.wait_for(conn.close(), timeout=5))
            client._conn = None
        ws_loop.run_until_complete(ws_loop.shutdown_asyncgens())
    finally:
        ws_loop.close()


def run_websocket(run: WebsocketRun, new_client: Callable[[], lark.ws.Client], timeout: float) -> None:
    """The websocket thread: build lark's client (``new_client``, on this thread: its constructor starts a
    task on the current loop) and run its blocking ``start()`` on this thread's own loop until stopped."""
    ws_loop = run.loop
    asyncio.set_event_loop(ws_loop)
    lark_ws_client.loop = ws_loop  # lark schedules everything on this module global
    ws_bootstrap.timeout = timeout  # for lark's endpoint request (see the module doc)
    try:
        if run.stopping:
            return
        run.client = new_client()
        run.client.start()
    except asyncio.CancelledError:  # stop() cancelled the loop's tasks
        pass
    except Exception as exc:  # lark logged it; kept for wait_connected
        run.error = exc
    finally:
        close_ws_loop(run.client, ws_loop)


async def wait_connected(run: WebsocketRun, timeout: float, app_id: str) -> str | None:
    """Wait until connected: None then, or after ``timeout`` (with a warning; lark keeps retrying in the
    background); what went wrong when lark gave up (bad credentials)."""
    assert run.thread is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while getattr(run.client, "_conn", None) is None:
        if not run.thread.is_alive():
            return str(run.error or "stopped")
        if loop.time() >= deadline:
            log.warning("[feishu] websocket not connected yet; lark keeps retrying in the background")
            return None
        await asyncio.sleep(0.02)
    log.info("[feishu] websocket connected (app %s)", app_id)
    return None
