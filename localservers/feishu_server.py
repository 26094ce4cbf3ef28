"""A local Feishu open platform for tests: the HTTP API, the websocket event push and an event client.

On 127.0.0.1, in daemon threads, so lark-oapi (sync ``requests``, its own websocket thread) and async tests
can both talk to it:

    from localservers.feishu_server import FeishuStub, message_event, post_callback

    with FeishuStub() as feishu:
        ...  # point the channel's domain at feishu.domain
        frame_id = await feishu.push_event(message_event("hello"))       # websocket mode
        status, body = await post_callback(url, message_event("hi"), encrypt_key=KEY)   # callback mode
        sent = await feishu.wait_for_sent(1)

HTTP API (JSON, ``{"code": 0, ...}`` like Feishu): the tenant token (``t-<app_id>``), the bot info
(``bot_info_code`` != 0 fails it), messages: create, reply, update (PUT), delete and CardKit
(``feishu_cardkit.py``); ``POST /callback/ws/endpoint`` → the websocket URL (``ws_endpoint_code`` != 0
refuses the app; ``ws_endpoint_hangs = True`` never answers, until the stub stops); message resources and
uploads (``feishu_media.py``).

Sends honour ``uuid`` like Feishu: a second request with a uuid already sent within an hour answers with the
first message and posts nothing. Scripted failures (``fail_sends(ApiError...)``) answer the next sends in
order; ``delay_sends(seconds...)`` makes the next sends post their message and answer only that much
later (a client timeout after Feishu accepted); ``refuse_posts = True`` refuses every ``post`` with a
content error (``POST_REFUSED``). ``sent`` holds the messages really posted, ``requests`` every request.

The websocket server speaks lark's protobuf ``Frame``: pongs to pings, ``await push_event(...)`` sends a
data frame (``type=event``, plaintext JSON) and ``wait_for_ack`` returns the client's ``{"code": 200}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
import uuid as uuid_module
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from lark_oapi.ws.pb.pbbp2_pb2 import Frame
from websockets.protocol import State
from websockets.sync.server import Server, ServerConnection, serve

from localservers.feishu_cardkit import CARDKIT_PATH, CardKit
from localservers.feishu_failures import ChatRefusals
from localservers.feishu_media import FILES_PATH, IMAGES_PATH, RESOURCE_MARK, FeishuMedia
from localservers.feishu_payloads import BOT_NAME as BOT_NAME
from localservers.feishu_payloads import BOT_OPEN_ID as BOT_OPEN_ID

# Re-exported: tests and bench build events and post callbacks with these beside the stub.
from localservers.feishu_payloads import encrypt as encrypt
from localservers.feishu_payloads import mention as mention
from localservers.feishu_payloads import message_event as message_event
from localservers.feishu_payloads import post_callback as post_callback
from localservers.feishu_payloads import signed_body as signed_body
from localservers.feishu_payloads import url_verification as url_verification
from localservers.feishu_records import (  # re-exported: tests script errors and read sends through here
    BOT_NOT_IN_CHAT as BOT_NOT_IN_CHAT,
)
from localservers.feishu_records import (
    POST_REFUSED as POST_REFUSED,
)
from localservers.feishu_records import (
    RATE_LIMITED as RATE_LIMITED,
)
from localservers.feishu_records import (
    SERVER_ERROR as SERVER_ERROR,
)
from localservers.feishu_records import (
    ApiError as ApiError,
)
from localservers.feishu_records import (
    Sent as Sent,
)
from localservers.feishu_records import (
    StubRequest as StubRequest,
)
from localservers.http import JSONHandler, LocalHTTPServer

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
BOT_INFO_PATH = "/open-apis/bot/v3/info"
MESSAGES_PATH = "/open-apis/im/v1/messages"
WS_ENDPOINT_PATH = "/callback/ws/endpoint"
SAY_PATH = "/local/say"
UUID_WINDOW_SECONDS = 3600


class _Server(LocalHTTPServer):
    request_queue_size = 64

    def __init__(self, stub: FeishuStub, port: int = 0) -> None:
        super().__init__(_Handler, stub, port)


class _Handler(JSONHandler):
    timeout = 30

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        raw = self.read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:  # not JSON (an upload's multipart body), or not text at all
            body = None
        request = StubRequest(
            method=self.command,
            path=parts.path,
            query={k: v[0] for k, v in parse_qs(parts.query).items()},
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
        )
        status, obj, headers = self.server.stub._route(request)
        if isinstance(obj, bytes):  # a message resource (feishu_media.py)
            self.send_body(status, obj, headers, content_type="application/octet-stream")
            return
        self.send_json(status, obj, headers, content_type="application/json; charset=utf-8")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


class FeishuStub:
    """The local Feishu server; see the module docstring."""

    def __init__(self) -> None:
        self.requests: list[StubRequest] = []
        self.sent: list[Sent] = []
        self.acks: dict[str, dict[str, Any]] = {}  # websocket frame message_id -> the client's echo payload
        self.pings = 0
        self.refuse_posts = False
        self.bot_info_code = 0
        self.token_code = 0  # != 0: the tenant token request is refused with that code
        self.ws_endpoint_code = 0
        self.ws_endpoint_hangs = False
        self.reconnect_nonce = 30  # the websocket URL's ClientConfig: max random wait before a reconnect
        self._failures: deque[ApiError] = deque()
        self.chat_refusals = ChatRefusals()  # chats refused on every send (feishu_failures.py)
        self._delays: deque[float] = deque()
        self._stopping = threading.Event()  # releases requests held by ws_endpoint_hangs / delay_sends
        self._by_uuid: dict[str, tuple[float, dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.cardkit = CardKit(self._lock)
        self._changed = threading.Condition(self._lock)
        self._http: _Server | None = None
        self._refused_port: int | None = None  # the HTTP API's port while refuse_connections() holds it
        self._ws: Server | None = None
        self._threads: list[threading.Thread] = []
        self._connections: list[ServerConnection] = []
        self.media = FeishuMedia()  # message resources and uploads

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> FeishuStub:
        self._http = _Server(self)
        self._ws = serve(self._ws_session, "127.0.0.1", 0, compression=None, ping_interval=None)
        for target, kwargs in (
            (self._http.serve_forever, {"poll_interval": 0.05}),
            (self._ws.serve_forever, {}),
        ):
            thread = threading.Thread(target=target, kwargs=kwargs, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._ws is not None:
            self._ws.shutdown()
            self._ws = None
        for conn in self.connections():
            with contextlib.suppress(Exception):
                conn.close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def refuse_connections(self, seconds: float | None = None) -> None:
        """As if Feishu went away: stop the HTTP API (connections are refused) and drop the websocket
        connections now; listen on the same port again after ``seconds`` — or, with ``None``, only when
        ``accept_connections()`` is called, so a test can first wait to see the client meet the outage
        (a fixed window a slow client may never try inside)."""
        assert self._http is not None, "FeishuStub is not started"
        self._refused_port = self._http.server_address[1]
        self._http.shutdown()
        self._http.server_close()
        self.drop_connections()
        if seconds is None:
            return

        def reopen() -> None:
            if not self._stopping.wait(seconds):
                self.accept_connections()

        thread = threading.Thread(target=reopen, daemon=True)
        thread.start()
        self._threads.append(thread)

    def accept_connections(self) -> None:
        """End a ``refuse_connections`` outage now: the HTTP API listens on its port again."""
        port, self._refused_port = self._refused_port, None
        if port is None or self._stopping.is_set():
            return
        server = self._http = _Server(self, port)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        self._threads.append(thread)

    def __enter__(self) -> FeishuStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def domain(self) -> str:
        """``http://127.0.0.1:PORT``: the channel's ``domain``."""
        assert self._http is not None, "FeishuStub is not started"
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def ws_port(self) -> int:
        assert self._ws is not None, "FeishuStub is not started"
        return int(self._ws.socket.getsockname()[1])

    # --- scripting and inspection --------------------------------------------------------------------

    def fail_sends(self, *errors: ApiError) -> None:
        """The next sends (create/reply) answer with these errors, in order."""
        with self._lock:
            self._failures.extend(errors)

    def delay_sends(self, *seconds: float) -> None:
        """The next sends (create/reply) post their message at once but answer only after these delays."""
        with self._lock:
            self._delays.extend(seconds)

    def endpoint_requests(self) -> list[StubRequest]:
        """Every websocket bootstrap request (``POST /callback/ws/endpoint``)."""
        with self._lock:
            return [r for r in self.requests if r.path == WS_ENDPOINT_PATH]

    def send_requests(self) -> list[StubRequest]:
        """Every create/reply request, refused or not, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.startswith(MESSAGES_PATH)]

    def token_requests(self) -> list[StubRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == TOKEN_PATH]

    async def wait_for_sent(self, count: int, timeout: float = 30.0) -> list[Sent]:
        """Wait until at least ``count`` messages were posted; returns them all."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if len(self.sent) >= count:
                    return list(self.sent)
            if time.monotonic() >= deadline:
                raise AssertionError(f"only {len(self.sent)} messages sent, expected {count}: {self.sent}")
            await asyncio.sleep(0.01)

    async def wait_for(self, predicate: Callable[[FeishuStub], bool], timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate(self):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    # --- HTTP API ------------------------------------------------------------------------------------

    def _route(self, req: StubRequest) -> tuple[int, Any, dict[str, str] | None]:
        with self._lock:
            self.requests.append(req)
        if req.method == "POST" and req.path == TOKEN_PATH:
            app_id = (req.body or {}).get("app_id", "")
            if self.token_code:  # scripted: the app id or secret is wrong
                return 200, {"code": self.token_code, "msg": "app secret invalid"}, None
            return (
                200,
                {"code": 0, "msg": "ok", "tenant_access_token": f"t-stubtoken-{app_id}", "expire": 7200},
                None,
            )
        if req.method == "POST" and req.path == WS_ENDPOINT_PATH:
            return self._ws_endpoint(req)
        if req.method == "POST" and req.path == SAY_PATH:
            said = req.body if isinstance(req.body, dict) else {}
            try:
                frame_id = self.say(str(said.get("text", "")), sender=str(said.get("sender") or "ou_alice"))
            except AssertionError as exc:
                return 409, {"code": 1, "msg": str(exc)}, None
            return 200, {"code": 0, "msg": "ok", "frame_id": frame_id}, None
        if req.method == "POST" and req.path == "/local/send-file":
            return self.media.send_local_file(self, req.body)
        if not req.headers.get("authorization", "").startswith("Bearer t-"):
            return 400, {"code": 99991661, "msg": "Missing access token for authorization."}, None
        if req.method == "GET" and RESOURCE_MARK in req.path:
            return self.media.get_resource(req.path, req.query)
        if req.method == "POST" and req.path in (IMAGES_PATH, FILES_PATH):
            return self.media.upload(req.path, req.raw, req.headers.get("content-type", ""))
        if req.method == "GET" and req.path == BOT_INFO_PATH:
            if self.bot_info_code:
                return 400, {"code": self.bot_info_code, "msg": "bot info unavailable"}, None
            bot = {"activate_status": 2, "app_name": BOT_NAME, "avatar_url": "", "open_id": BOT_OPEN_ID}
            return 200, {"code": 0, "msg": "ok", "bot": bot}, None
        if req.path == MESSAGES_PATH and req.method == "POST":
            return self._send(
                "create", req.query.get("receive_id_type", "") + ":" + req.body["receive_id"], req
            )
        if req.path.startswith(MESSAGES_PATH + "/"):
            rest = req.path[len(MESSAGES_PATH) + 1 :]
            if req.method == "POST" and rest.endswith("/reply"):
                return self._send("reply", rest[: -len("/reply")], req)
            if req.method == "PUT" and "/" not in rest:
                return self._send("update", rest, req)
        if req.path.startswith(CARDKIT_PATH) or req.method == "DELETE":
            return self.cardkit.route(req.method, req.path, req.body)
        return 404, {"code": 404, "msg": f"no route {req.method} {req.path}"}, None

    def _send(self, kind: str, target: str, req: StubRequest) -> tuple[int, Any, dict[str, str] | None]:
        with self._lock:
            delay = self._delays.popleft() if kind != "update" and self._delays else 0.0
        answer = self._post(kind, target, req)
        if delay:
            self._stopping.wait(delay)
        return answer

    def _post(self, kind: str, target: str, req: StubRequest) -> tuple[int, Any, dict[str, str] | None]:
        body = req.body or {}
        msg_type = body.get("msg_type", "")
        with self._lock:
            if kind != "update" and self._failures:
                error = self._failures.popleft()
                return error.status, {"code": error.code, "msg": error.msg}, error.headers
            refused = self.chat_refusals.refusal(kind, target)
            if refused is not None:
                return refused[0], {"code": refused[1], "msg": refused[2]}, None
            card, card_refused = (
                self.cardkit.card_message(body) if msg_type == "interactive" else (None, None)
            )
            if card_refused is not None:
                return card_refused
            if msg_type == "post" and self.refuse_posts:
                return POST_REFUSED.status, {"code": POST_REFUSED.code, "msg": POST_REFUSED.msg}, None
            uuid = body.get("uuid") or ""
            if len(uuid) > 50:
                return 400, {"code": 230001, "msg": "invalid uuid: longer than 50 characters"}, None
            now = time.monotonic()
            earlier = self._by_uuid.get(f"{kind}:{target}:{uuid}") if uuid else None
            if earlier is not None and now - earlier[0] < UUID_WINDOW_SECONDS:
                return 200, {"code": 0, "msg": "success", "data": earlier[1]}, None
            message_id = f"om_stub_{next(self._ids)}"
            content = json.loads(body.get("content") or "{}")
            chat_id = target.split(":", 1)[1] if kind == "create" else "oc_stub_chat"
            posted = Sent(kind, target.split(":", 1)[-1], msg_type, content, uuid, message_id, now, card)
            self.sent.append(posted)
            data = {
                "message_id": message_id,
                "root_id": target if kind == "reply" else "",
                "parent_id": target if kind == "reply" else "",
                "msg_type": msg_type,
                "create_time": str(int(time.time() * 1000)),
                "update_time": str(int(time.time() * 1000)),
                "deleted": False,
                "updated": kind == "update",
                "chat_id": chat_id,
                "sender": {"id": "cli_stub", "id_type": "app_id", "sender_type": "app", "tenant_key": "tk"},
                "body": {"content": body.get("content", "")},
            }
            if uuid:
                self._by_uuid[f"{kind}:{target}:{uuid}"] = (now, data)
            return 200, {"code": 0, "msg": "success", "data": data}, None

    def _ws_endpoint(self, req: StubRequest) -> tuple[int, Any, dict[str, str] | None]:
        if self.ws_endpoint_hangs:
            self._stopping.wait()
            return 503, {"code": 1, "msg": "stub stopped"}, None
        if self.ws_endpoint_code:
            return 200, {"code": self.ws_endpoint_code, "msg": "app id or app secret is invalid"}, None
        device = uuid_module.uuid4().hex[:12]
        url = f"ws://127.0.0.1:{self.ws_port}/ws?device_id={device}&service_id=1"
        config = {
            "ReconnectCount": -1,
            "ReconnectInterval": 1,
            "ReconnectNonce": self.reconnect_nonce,
            "PingInterval": 120,
        }
        return 200, {"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": config}}, None

    # --- websocket -----------------------------------------------------------------------------------

    def connections(self) -> list[ServerConnection]:
        with self._lock:
            return list(self._connections)

    async def wait_disconnected(self, timeout: float = 30.0) -> None:
        """Wait until no websocket client is connected (the channel closed its connection)."""
        if not await self.wait_for(lambda s: not s.connections(), timeout):
            raise AssertionError(f"{len(self.connections())} websocket connections still open")

    def _ws_session(self, conn: ServerConnection) -> None:
        with self._lock:
            self._connections.append(conn)
        try:
            for raw in conn:
                frame = Frame()
                frame.ParseFromString(raw if isinstance(raw, bytes) else raw.encode())
                headers = {h.key: h.value for h in frame.headers}
                if frame.method == 0 and headers.get("type") == "ping":
                    with self._lock:
                        self.pings += 1
                    conn.send(_frame(0, {"type": "pong"}, b"", service=frame.service).SerializeToString())
                elif frame.method == 1:  # the client's echo of an event frame
                    with self._changed:
                        self.acks[headers.get("message_id", "")] = json.loads(frame.payload or b"{}")
                        self._changed.notify_all()
        except Exception:  # the client went away
            pass
        finally:
            with self._lock:
                if conn in self._connections:
                    self._connections.remove(conn)

    def drop_connections(self) -> None:
        """Close every websocket connection from the server side (as a Feishu restart would)."""
        for conn in self.connections():
            with contextlib.suppress(Exception):
                conn.close()

    def open_connections(self) -> list[ServerConnection]:
        """Connections still open, oldest first (a closed one may linger in ``connections`` briefly)."""
        return [c for c in self.connections() if c.protocol.state is State.OPEN]

    async def push_event(
        self, event: dict[str, Any], timeout: float = 30.0, connection: int | None = None
    ) -> str:
        """Send ``event`` (plaintext, as Feishu does on this path) on the newest open connection, waiting
        for one if needed; returns the frame's message_id for ``wait_for_ack``. ``connection``: the
        index of the open connection to use instead (oldest first) — Feishu hands each event of an app
        to one of its connections, so several gateways each get some (docs/scale-out.md)."""
        if not await self.wait_for(lambda s: bool(s.open_connections()), timeout):
            raise AssertionError("no websocket client connected")
        return self.send_event(event, connection)

    def send_event(self, event: dict[str, Any], connection: int | None = None) -> str:
        """Send ``event`` on the newest open connection now (any thread), or on the ``connection``-th
        (oldest first); its frame id. Text UTF-8 cannot encode (a lone surrogate) goes as a JSON ``\\u``
        escape, as Feishu would send it."""
        open_now = self.open_connections()
        if not open_now:
            raise AssertionError("no websocket client connected (is `tierclaw gateway` running?)")
        frame_id = uuid_module.uuid4().hex
        headers = {"type": "event", "message_id": frame_id, "sum": "1", "seq": "0", "trace_id": frame_id[:8]}
        try:
            payload = json.dumps(event, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            payload = json.dumps(event).encode("ascii")
        target = open_now[-1] if connection is None else open_now[connection]
        target.send(_frame(1, headers, payload, service=1).SerializeToString())
        return frame_id

    def say(self, text: str, sender: str = "ou_alice") -> str:
        """A p2p text message from ``sender``, now (``python -m localservers feishu`` and ``POST
        /local/say``); its frame id. AssertionError when no client is connected."""
        return self.send_event(message_event(text, sender=sender, chat_id=f"oc_chat_{sender}"))

    async def wait_for_ack(self, frame_id: str, timeout: float = 30.0) -> dict[str, Any]:
        if not await self.wait_for(lambda s: frame_id in s.acks, timeout):
            raise AssertionError(f"no ack for websocket frame {frame_id}")
        return self.acks[frame_id]


def _frame(method: int, headers: dict[str, str], payload: bytes, *, service: int) -> Frame:
    frame = Frame()
    frame.SeqID = 0
    frame.LogID = 0
    frame.service = service
    frame.method = method
    for key, value in headers.items():
        header = frame.headers.add()
        header.key = key
        header.value = value
    frame.payload = payload
    return frame


# --- events ------------------------------------------------------------------------------------------
