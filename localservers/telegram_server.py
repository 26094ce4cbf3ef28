"""A local Telegram Bot API server for tests (stdlib only), for the real python-telegram-bot to talk to.

PTB posts ``{base_url}{token}/{method}`` form-encoded (strings raw, everything else JSON), which is what
the handler below parses. It runs in a daemon thread: it serves the event loop under test, not on it.

    with TelegramStub() as tg:
        settings = TelegramSettings(token=tg.token, allow_from=("42",), base_url=tg.base_url)
        tg.push(tg.message("hello"))                # a private message from user 42 in chat 42
        sent = await tg.wait_sent(1)                # the bot's sendMessage calls
        assert sent[0].params["chat_id"] == "42"

Behaviour worth knowing:
- ``getUpdates`` blocks up to its ``timeout`` while there is nothing to return (PTB expects a long poll);
  an ``offset`` confirms (drops) every earlier update, as Telegram does.
- ``sendMessage`` checks what Telegram checks: ``parse_mode=HTML`` text must use only Telegram's tags
  and entities, balanced (else 400 "can't parse entities"), and the visible text, counted in UTF-16
  units after entity parsing, must be 1..4096 long (else 400 "message is too long" / "text is empty").
- ``getUpdates`` answers 409 "can't use getUpdates method while webhook is active" while a webhook is set
  (``setWebhook``, or ``set_webhook()`` playing another deployment), until ``deleteWebhook``.
- ``fail(method, *faults)`` scripts the answers to that method's next calls; ``None`` in the list means
  "answer normally", so ``fail("sendMessage", None, cant_parse())`` breaks only the second call.
  ``slow(s)`` carries a call out (a sendMessage is sent) but answers only after ``s`` seconds.
- ``refuse_connections(s)`` closes the port for ``s`` seconds (connection refused), then listens again;
  ``refuse_connections()`` until ``accept_connections()``.
- Streamed replies — ``sendMessageDraft``, ``editMessageText``, ``deleteMessage`` and the per-chat limits
  that answer 429 ``retry_after`` — are ``writes`` (``localservers/telegram_streaming.py``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from localservers.http import JSONHandler, LocalHTTPServer, OpenConnections
from localservers.http import free_port as free_port  # re-exported: tests import it from here
from localservers.multipart import Upload, form_params
from localservers.telegram_entities import check_html, entities_for, media_payload, utf16_len
from localservers.telegram_failures import ChatRefusals
from localservers.telegram_faults import (  # re-exported: tests script faults through this module
    Fault as Fault,
)
from localservers.telegram_faults import (
    cant_parse as cant_parse,
)
from localservers.telegram_faults import (
    conflict as conflict,
)
from localservers.telegram_faults import (
    rate_limited as rate_limited,
)
from localservers.telegram_faults import (
    slow as slow,
)
from localservers.telegram_faults import (
    unauthorized as unauthorized,
)
from localservers.telegram_faults import (
    webhook_active as webhook_active,
)
from localservers.telegram_media import FILE_METHODS, TelegramFiles
from localservers.telegram_streaming import ChatWrites

TOKEN = "123456:AAH-stub-secret-token_never-in-logs"
BOT_ID = 123456
BOT_USERNAME = "stub_bot"
MAX_TEXT = 4096


@dataclass
class ApiCall:
    """One Bot API request as the stub saw it (``at`` is ``time.monotonic()`` on arrival)."""

    at: float
    method: str
    params: dict[str, str]
    status: int = 200
    result: Any = None  # what a successful call returned (the sent Message for sendMessage)
    files: dict[str, Upload] = field(default_factory=dict)  # uploaded files (sendPhoto, sendDocument…)

    def json(self, name: str) -> Any:
        """A JSON-encoded field (``reply_parameters``, ``allowed_updates``…), or None when absent."""
        value = self.params.get(name)
        return None if value is None else json.loads(value)


class _Server(LocalHTTPServer):
    def __init__(self, stub: TelegramStub, port: int = 0) -> None:
        super().__init__(_Handler, stub, port)


class _Handler(JSONHandler):
    def do_POST(self) -> None:
        raw = self.read_body()
        stub = self.server.stub
        prefix = f"/bot{stub.token}/"
        if urllib.parse.unquote(self.path).startswith(f"/file{prefix}"):  # a download (telegram_media.py)
            status, data = stub.files.download(urllib.parse.unquote(self.path)[len(prefix) + 5 :])
            self.send_body(status, data, content_type="application/octet-stream")
            return
        if self.path == "/local/send-file":  # by hand: a message carrying a file from disk (user 42)
            self.send_json(*stub.files.send_local_file(stub, json.loads(raw or b"{}")))
            return
        if not self.path.startswith(prefix):
            self.send_json(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        method = self.path[len(prefix) :].split("?", 1)[0]
        params, files = form_params(raw, self.headers.get("Content-Type") or "")
        call = ApiCall(time.monotonic(), method, params, files=files)
        fault = stub._record(call)
        if fault is not None and not fault.delay:
            self._fault(fault, call)
            return
        status, body = stub._answer(call)
        call.status, call.result = status, body.get("result")
        if fault is not None and stub._stopping.wait(fault.delay):
            self.close_connection = True
            return
        self.send_json(status, body)

    do_GET = do_POST

    def _fault(self, fault: Fault, call: ApiCall) -> None:
        stub = self.server.stub
        if fault.hang:
            stub._stopping.wait(fault.hang)
            self.close_connection = True
            return
        if fault.trickle:
            body = json.dumps({"ok": True, "result": []}).encode()
            pad = max(1, int(fault.trickle / 0.2))
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(pad + len(body)))
                self.end_headers()
                for _ in range(pad):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    if stub._stopping.wait(0.2):
                        break
                self.wfile.write(body)
            except OSError:
                pass
            self.close_connection = True
            return
        call.status = fault.status
        error: dict[str, Any] = {"ok": False, "error_code": fault.status, "description": fault.description}
        if fault.retry_after is not None:
            error["parameters"] = {"retry_after": fault.retry_after}
        self.send_json(fault.status, error)


class TelegramStub:
    """A Bot API server on 127.0.0.1; see the module docstring."""

    def __init__(self, token: str = TOKEN, bot_username: str = BOT_USERNAME) -> None:
        self.token = token
        self.bot = {"id": BOT_ID, "is_bot": True, "first_name": "Stub", "username": bot_username}
        self.calls: list[ApiCall] = []
        self.webhook: dict[str, str] = {}  # the last setWebhook parameters ({} after deleteWebhook)
        self.webhook_trouble: dict[str, object] = {}  # more getWebhookInfo fields: {"last_error_message": …}
        self.chat_refusals = ChatRefusals()  # chats refused on every call (telegram_failures.py)
        self._cond = threading.Condition()
        self._updates: list[dict] = []
        self.handed: dict[int, float] = {}  # message id -> when a getUpdates answer first carried it
        self._next_update = 1
        self._next_message = 1
        self._chats: dict[int, dict] = {}
        self._known: set[tuple[int, int]] = set()  # (chat id, message id) of every message
        self._faults: dict[str, deque[Fault | None]] = defaultdict(deque)
        self.writes = ChatWrites(self)  # sends, edits, drafts, deletes and per-chat limits
        self._stopping = threading.Event()
        self._connections = OpenConnections(self._cond)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._refused_port: int | None = None  # the port while refuse_connections() holds it
        self.files = TelegramFiles()  # voice, photos, documents: getFile, downloads, sends

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> TelegramStub:
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            self._thread = self._server.serve_in_thread()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        server.close(self._connections)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def refuse_connections(self, seconds: float | None = None) -> None:
        """Stop listening and cut open connections now; listen on the same port again after ``seconds`` —
        or, with ``None``, when ``accept_connections()`` is called, so a test can first wait to see the
        client meet the outage (a fixed window a slow client may never try inside, or outlast).

        Meanwhile every connection attempt is refused (a request that certainly never arrived).
        """
        server = self._server
        if server is None:
            raise RuntimeError("TelegramStub is not started")
        self._refused_port = server.server_address[1]
        server.close(self._connections)
        if seconds is not None:
            threading.Thread(target=self._accept_after, args=(seconds,), daemon=True).start()

    def _accept_after(self, seconds: float) -> None:
        if not self._stopping.wait(seconds):
            self.accept_connections()

    def accept_connections(self) -> None:
        """End a ``refuse_connections`` outage now: listen on the same port again."""
        port, self._refused_port = self._refused_port, None
        if port is None or self._stopping.is_set():
            return
        server = self._server = _Server(self, port)
        if self._stopping.is_set():  # stop() ran meanwhile
            server.server_close()
            return
        self._thread = server.serve_in_thread()

    def __enter__(self) -> TelegramStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/bot`` — PTB appends the token."""
        if self._server is None:
            raise RuntimeError("TelegramStub is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/bot"

    # --- building and pushing updates ----------------------------------------------------------------

    def user(self, user_id: int = 42, username: str | None = None, first_name: str = "Ann") -> dict:
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            user["username"] = username
        return user

    def group(self, chat_id: int = -1001, kind: str = "supergroup") -> dict:
        return {"id": chat_id, "type": kind, "title": "Stub group"}

    def message(
        self,
        text: str | None = None,
        *,
        sender: dict | None = None,
        chat: dict | None = None,
        caption: str | None = None,
        media: str = "",
        entities: list[dict] | None = None,
        reply_to: dict | None = None,
    ) -> dict:
        """A Message from ``sender`` (default user 42) in ``chat`` (default their private chat).

        ``entities`` default to what Telegram adds (mentions, a leading command). ``media`` ("photo",
        "voice", "document", "sticker"…) attaches a stub file of that kind, with ``caption``.
        """
        sender = sender or self.user()
        chat = chat or {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}
        msg: dict[str, Any] = {
            "message_id": self._new_message_id(chat),
            "date": int(time.time()),
            "chat": chat,
            "from": sender,
        }
        if text is not None:
            msg["text"] = text
            msg["entities"] = entities_for(text) if entities is None else entities
        if media:
            msg[media] = media_payload(media)
            if caption is not None:
                msg["caption"] = caption
                msg["caption_entities"] = entities_for(caption) if entities is None else entities
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        return msg

    def bot_message(self, chat: dict, text: str = "an earlier reply") -> dict:
        """A message the bot sent in ``chat`` earlier (for reply-to-the-bot updates)."""
        return {
            "message_id": self._new_message_id(chat),
            "date": int(time.time()),
            "chat": chat,
            "from": self.bot,
            "text": text,
        }

    def update(self, message: dict, kind: str = "message") -> dict:
        """An Update carrying ``message`` as ``kind`` ("message", "edited_message", "channel_post"…)."""
        with self._cond:
            update_id = self._next_update
            self._next_update += 1
        return {"update_id": update_id, kind: message}

    def push(self, message: dict, kind: str = "message") -> int:
        """Queue an update for getUpdates; returns the message id."""
        update = self.update(message, kind)
        with self._cond:
            self._updates.append(update)
            self._cond.notify_all()
        return int(message["message_id"])

    def push_update(self, update: dict) -> int:
        """Queue an update made with ``update`` for getUpdates; returns its update id (gone from
        ``pending_updates`` once a poller confirmed it)."""
        with self._cond:
            self._updates.append(update)
            self._cond.notify_all()
        return int(update["update_id"])

    def set_webhook(self, url: str) -> None:
        """A webhook set from elsewhere (another deployment): getUpdates now answers 409."""
        with self._cond:
            self.webhook = {"url": url}
            self._cond.notify_all()

    def pending_updates(self) -> list[int]:
        """Update ids not yet confirmed by a getUpdates offset."""
        with self._cond:
            return [u["update_id"] for u in self._updates]

    def _new_message_id(self, chat: dict) -> int:
        with self._cond:
            message_id = self._next_message
            self._next_message += 1
            self._chats[int(chat["id"])] = chat
            self._known.add((int(chat["id"]), message_id))
        return message_id

    # --- scripting and inspection --------------------------------------------------------------------

    def fail(self, method: str, *faults: Fault | None) -> None:
        """Answer the next calls of ``method`` with these faults (``None``: answer that call normally)."""
        with self._cond:
            self._faults[method].extend(faults)

    def requests(self, method: str | None = None) -> list[ApiCall]:
        """Every call (or every call of ``method``), in arrival order, failed ones included."""
        with self._cond:
            return [c for c in self.calls if method is None or c.method == method]

    def sent(self) -> list[ApiCall]:
        """The sendMessage calls that succeeded."""
        return [c for c in self.requests("sendMessage") if c.status == 200]

    async def wait_sent(self, count: int, timeout: float = 30.0) -> list[ApiCall]:
        """Wait until ``count`` messages were sent; returns them (fails the test on timeout)."""
        await self.wait_until(lambda: len(self.sent()) >= count, timeout, f"{count} sent messages")
        return self.sent()

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 30.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                methods = [(c.method, c.status) for c in self.requests()]
                raise AssertionError(f"timed out waiting for {what or predicate}; calls: {methods}")
            await asyncio.sleep(0.01)

    def _record(self, call: ApiCall) -> Fault | None:
        with self._cond:
            self.calls.append(call)
            queue = self._faults.get(call.method)
            if queue:
                return queue.popleft()
        refused = self.chat_refusals.refusal(call.method, call.params)
        return Fault(*refused) if refused else None

    def track(self, conn: socket.socket, *, add: bool) -> None:
        """A connection opened or closed (the handler says; ``stop`` cuts those still open)."""
        self._connections.track(conn, add=add)

    # --- the methods ---------------------------------------------------------------------------------

    def _answer(self, call: ApiCall) -> tuple[int, dict]:
        p = call.params
        if call.method == "getMe":
            return _ok(self.bot)
        if call.method == "getWebhookInfo":
            info = {"url": self.webhook.get("url", ""), "pending_update_count": len(self.pending_updates())}
            return _ok({**info, **self.webhook_trouble})
        if call.method == "getUpdates":
            if self.webhook:
                fault = webhook_active()
                return fault.status, {"ok": False, "error_code": 409, "description": fault.description}
            return _ok(self._get_updates(int(p.get("offset") or 0), float(p.get("timeout") or 0)))
        if call.method in ChatWrites.METHODS:  # telegram_streaming.py
            return self.writes.answer(call)
        if call.method in FILE_METHODS:
            return self.files.answer(call, self)
        if call.method in ("sendChatAction", "deleteWebhook", "setWebhook"):
            with self._cond:
                if call.method == "setWebhook":
                    self.webhook = dict(p)
                elif call.method == "deleteWebhook":
                    self.webhook = {}
            return _ok(True)
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def _get_updates(self, offset: int, timeout: float) -> list[dict]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if offset:
                    self._updates = [u for u in self._updates if u["update_id"] >= offset]
                if self._updates or self._stopping.is_set() or self.webhook:  # setWebhook ends a long poll
                    now = time.monotonic()
                    for update in self._updates[:100]:
                        message_id = (update.get("message") or {}).get("message_id")
                        if isinstance(message_id, int):
                            self.handed.setdefault(message_id, now)
                    return list(self._updates[:100])
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                self._cond.wait(left)

    def _send_message(self, p: dict[str, str]) -> tuple[int, dict]:
        text = p.get("text", "")
        if p.get("parse_mode") == "HTML":
            text, error = check_html(text)
            if error:
                return _bad(f"Bad Request: can't parse entities: {error}")
        if not text.strip():
            return _bad("Bad Request: message text is empty")
        if utf16_len(text) > MAX_TEXT:
            return _bad("Bad Request: message is too long")
        chat = self._chat(p.get("chat_id", "0"))
        if "reply_parameters" in p:
            target = json.loads(p["reply_parameters"])
            known = (int(chat["id"]), int(target.get("message_id", 0))) in self._known
            if not known and not target.get("allow_sending_without_reply"):
                return _bad("Bad Request: message to be replied not found")
        return _ok(self._message(chat, text))

    def _chat(self, chat_id: str) -> dict:
        with self._cond:
            return self._chats.get(int(chat_id), {"id": int(chat_id), "type": "private"})

    def _message(self, chat: dict, text: str) -> dict:
        return {
            "message_id": self._new_message_id(chat),
            "date": int(time.time()),
            "chat": chat,
            "from": self.bot,
            "text": text,
        }


def _ok(result: Any) -> tuple[int, dict]:
    return 200, {"ok": True, "result": result}


def _bad(description: str) -> tuple[int, dict]:
    return 400, {"ok": False, "error_code": 400, "description": description}


async def post_webhook(
    url: str, update: dict, secret: str | None = None, content_type: str = "application/json"
) -> int:
    """POST an update to a webhook as Telegram does; returns the HTTP status (run off the event loop)."""

    def post() -> int:
        headers = {"Content-Type": content_type}
        if secret is not None:
            headers["X-Telegram-Bot-Api-Secret-Token"] = secret
        request = urllib.request.Request(url, json.dumps(update).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # a ceiling (a loaded machine)
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    return await asyncio.to_thread(post)
