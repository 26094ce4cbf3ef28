"""What the three local servers share: a threaded HTTP server on 127.0.0.1 and a JSON request handler.

Each server (``telegram_api``, ``open_api``, ``openai_api``) subclasses these two and adds its routes.
Threads, not asyncio: a test's own event loop runs the real client (python-telegram-bot, lark-oapi,
openai) while the server answers from its threads, so neither can block the other.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


class ServerState(Protocol):
    """The object a server serves for (the ``…Stub``); ``track`` is told of every connection."""

    def track(self, conn: socket.socket, *, add: bool) -> None: ...


class OpenConnections:
    """The connections a server has open, so that a stop can cut them: a client waiting in a long poll
    would otherwise keep its handler thread (and the port) busy. ``lock`` is the stub's own lock."""

    def __init__(self, lock: threading.Lock | threading.Condition) -> None:
        self._lock = lock
        self._open: set[socket.socket] = set()

    def track(self, conn: socket.socket, *, add: bool) -> None:
        """Called by the handler when a connection opens (``add``) and closes."""
        with self._lock:
            if add:
                self._open.add(conn)
            else:
                self._open.discard(conn)

    def cut_all(self) -> None:
        """Shut every open connection down (the clients see the connection end)."""
        with self._lock:
            connections = list(self._open)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class LocalHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server on 127.0.0.1 (``port`` 0: a free one) that holds its stub as ``stub``."""

    daemon_threads = True
    allow_reuse_address = True
    # The default 5 drops SYNs under concurrent clients (1 s retransmit stalls).
    request_queue_size = 128

    def __init__(self, handler: type[BaseHTTPRequestHandler], stub: Any, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), handler)
        self.stub = stub

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (a cancelled long poll, a timeout) is not the server's problem

    def serve_in_thread(self) -> threading.Thread:
        """Serve on a daemon thread (polling for shutdown every 50 ms, so a stop is quick)."""
        thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        return thread

    def close(self, connections: OpenConnections) -> None:
        """Stop serving, release the port, and cut the connections still open."""
        self.shutdown()
        self.server_close()
        connections.cut_all()

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.server_address[1])


class JSONHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no Nagle delay, no access log; JSON bodies in and out."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, each request waits ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True
    server: LocalHTTPServer
    timeout = 60  # an idle kept-alive connection is dropped after this many seconds

    def setup(self) -> None:
        super().setup()
        track = getattr(self.server.stub, "track", None)
        if track is not None:
            track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            track = getattr(self.server.stub, "track", None)
            if track is not None:
                track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_body(self) -> bytes:
        """The request body (``Content-Length`` or chunked)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send_body(
        self,
        status: int,
        body: str | bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        """Send one response; a client that already hung up only closes the connection."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        try:
            self.send_response(status)
            extra = dict(headers or {})
            given = next((v for k, v in extra.items() if k.lower() == "content-type"), None)
            self.send_header("Content-Type", given or content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                if name.lower() not in ("content-length", "content-type"):
                    self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout, cancelled long poll) and closed the connection
            self.close_connection = True

    def send_json(
        self,
        status: int,
        obj: Any,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        """``obj`` as JSON (UTF-8, not ASCII-escaped; text UTF-8 cannot encode — a lone surrogate — goes
        as a ``\\u`` escape, as Telegram and Feishu send it)."""
        text = json.dumps(obj, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(obj)
        self.send_body(status, text, headers, content_type)


def free_port() -> int:
    """A port nothing listens on right now (for a webhook server in a test)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
