"""A round-robin HTTP forwarder: the load balancer in front of several gateway replicas, on 127.0.0.1.

    python -m localservers round-robin --listen 8080 --to http://127.0.0.1:8443 --to http://127.0.0.1:8444

Each request goes to the next backend in turn, with its method, path, query, headers and body as they
came (hop-by-hop headers aside), and the backend's status, headers and body go back as they came. A
backend that refuses the connection (a replica killed or not yet started) is skipped for the next one,
so a dead replica costs no request while another is up; when every backend refuses, the answer is 502
— a webhook sender such as Telegram retries a non-2xx answer. A request that reached a backend is never
sent to a second one (it may have been acted on): a backend that fails after the connection was made
is a 502 too. That is what a real load balancer in front of the webhook does (docs/scale-out.md).

It runs its own event loop in a daemon thread, like the other local servers (localservers/http.py), so
a test's or a benchmark's loop never shares it:

    with RoundRobin(["http://127.0.0.1:8443", "http://127.0.0.1:8444"]) as lb:
        post(lb.url + "/telegram", ...)
        lb.forwarded  # [(backend, status), …] in arrival order
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

# Headers that describe one connection, not the message (RFC 9110 §7.6.1), and those aiohttp sets.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
BACKEND_TIMEOUT = 60.0  # seconds for one backend's whole answer


def _end_to_end(headers: object) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers.items() if k.lower() not in HOP_BY_HOP]  # type: ignore[attr-defined]


class RoundRobin:
    """The forwarder (see the module docstring). ``port`` 0 listens on a free port."""

    def __init__(self, backends: list[str], port: int = 0) -> None:
        if not backends:
            raise ValueError("at least one backend (--to URL) is needed")
        for url in backends:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(
                    f"a backend must be an http(s) URL such as http://127.0.0.1:8443, not {url!r}"
                )
        self.backends = [url.rstrip("/") for url in backends]
        self.forwarded: list[tuple[str, int]] = []  # (backend, status) of each forwarded request
        self.refused: list[str] = []  # the backend of each refused connection attempt
        self._port = port
        self._turn = itertools.cycle(range(len(self.backends)))
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> RoundRobin:
        """Listen (in a daemon thread) and return once it does; OSError when the port is taken."""
        self._thread = threading.Thread(target=self._run, name="round-robin", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> RoundRobin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        timeout = aiohttp.ClientTimeout(total=BACKEND_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as session:
            self._session = session
            try:
                site = web.TCPSite(runner, "127.0.0.1", self._port)
                await site.start()
                self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
            except BaseException as exc:
                self._error = exc
                self._ready.set()
                await runner.cleanup()
                return
            self._ready.set()
            try:
                await self._stopped.wait()
            finally:
                await runner.cleanup()

    # --- forwarding ----------------------------------------------------------------------------------

    def _order(self) -> list[str]:
        """The backends, starting with the next one in turn."""
        with self._lock:
            first = next(self._turn)
        return self.backends[first:] + self.backends[:first]

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = _end_to_end(request.headers)
        assert self._session is not None  # set before the site listens
        for backend in self._order():
            try:
                async with self._session.request(
                    request.method,
                    backend + request.rel_url.raw_path_qs,
                    headers=headers,
                    data=body,
                    allow_redirects=False,
                ) as answer:
                    content = await answer.read()
                    status = answer.status
                    reply_headers = _end_to_end(answer.headers)
            except aiohttp.ClientConnectorError:  # refused (or unreachable): it never got the request
                with self._lock:
                    self.refused.append(backend)
                continue
            except (aiohttp.ClientError, TimeoutError) as exc:
                with self._lock:
                    self.forwarded.append((backend, 502))
                return web.Response(status=502, text=f"backend {backend} failed: {type(exc).__name__}\n")
            with self._lock:
                self.forwarded.append((backend, status))
            return web.Response(status=status, headers=reply_headers, body=content)
        return web.Response(status=502, text="no backend accepted the connection\n")


def serve(listen: int, backends: list[str], stopped: threading.Event) -> int:
    """``python -m localservers round-robin``: forward until ``stopped`` is set; prints its URL first."""
    try:
        forwarder = RoundRobin(backends, listen).start()
    except (ValueError, OSError) as exc:
        print(f"round-robin: {exc}", flush=True)
        return 2
    try:
        print(forwarder.url, flush=True)
        print("forwarding to " + ", ".join(forwarder.backends) + " in turn; Ctrl-C stops it.", flush=True)
        stopped.wait()
    finally:
        forwarder.stop()
    return 0
