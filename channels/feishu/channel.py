"""Feishu / Lark: receive by websocket long connection or HTTP event callback, reply with the Reply API.

Receiving. Both modes hand the SDK's parsed ``im.message.receive_v1`` event to one intake queue on our
event loop and return at once, so Feishu gets its acknowledgement (callback: HTTP 200 within 3 s;
websocket: the ``{"code": 200}`` echo) however slow the model is — a late answer makes Feishu redeliver.
One intake task then checks, in order: the sender's open_id against ``allowFrom`` (a stranger leaves no
trace), group messages must @mention the bot, the event is new (``channels/seen.py``: its event_id or
message_id seen in the last 48 h, in the memory database: across restarts too), and only then delivers.

* websocket: ``lark.ws.Client`` on its own thread and loop (``websocket.py``: why, how it stops, and
  one log line per outage instead of lark's line per attempt).
* callback: a small aiohttp server feeds each POST to lark's ``EventDispatcherHandler``, which decrypts
  (``encryptKey``), checks the verification token and the ``X-Lark-Signature``, answers
  ``url_verification`` and dispatches. lark reads the signature headers with a case-sensitive
  ``dict.get``, so their exact spelling is restored first. Without ``encryptKey`` lark checks no
  signature (only the verification token): ``start`` warns. A port already in use is a ``FeishuError``.

Stopping. ``stop_receiving`` (called by the gateway before it drains) stops taking new events — the
websocket is closed and its thread ended, or the HTTP server stops listening, so Feishu redelivers what it
could not hand over (nothing unacknowledged is lost) — then waits until every event already acknowledged
is through the intake and handed to ``deliver``; ``send`` keeps working until ``stop``.

Groups: a message is answered only when a mention is the bot's open_id (``GET /open-apis/bot/v3/info``
at start, retried with backoff up to 5 minutes until it answers; meanwhile any @mention counts, with a
warning). The bot's placeholder (``@_user_1``) is cut and other people's become ``@Name``.

Sending (``sending.py``). Each reply is cut with ``split_text(text, 4000)``; every piece is a Reply API
call on the inbound message with a ``uuid`` (a retried send never posts twice), as a ``post`` when it has
Markdown; rate limits, 5xx and network errors are retried with backoff. A streamed reply is a CardKit
streaming card updated while the model writes (``cardkit.py``); where CardKit is refused, the reply is sent
whole at the end.

Secrets (app secret, encrypt key, verification token, tenant token) are never logged; the SDK's "Lark"
logger is kept at WARNING (``lark_logs.py``). An event that can never be stored is acknowledged and logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

import lark_oapi as lark
from aiohttp import web
from lark_oapi.api.im.v1 import P2ImMessageReceiveV1

from channels.access import AllowList
from channels.base import (
    ChannelError,
    Deliver,
    InboundMessage,
    OutboundMessage,
    RememberHandle,
    ReplyStream,
    Undeliverable,
)
from channels.encodable import encodable_fields
from channels.feishu.callback import listen, refusal
from channels.feishu.cardkit import FeishuCards
from channels.feishu.events import (
    CHANNEL_NAME,
    FeishuEvent,
    event_from_lark,
    inbound_message,
    lark_headers,
)
from channels.feishu.lark_logs import lark_level, route_lark_logs_through_ours
from channels.feishu.media import FeishuMedia
from channels.feishu.open_api import BOT_INFO_URI, read_bot_open_id
from channels.feishu.sending import Sender
from channels.feishu.websocket import (
    ReportingWsClient,
    WebsocketRun,
    bind_lark_bootstrap_requests,
    cancel_ws_tasks,
    run_websocket,
    wait_connected,
    ws_owner_lock,
)
from channels.outage import Outage
from channels.seen import ProcessSeenMarks, SeenMarks

log = logging.getLogger("tierclaw.channels")

BOT_INFO_RETRY_MAX_SECONDS = 300.0
# How long an event's receiver waits for the gateway to store it before leaving it unacknowledged.
STORE_WAIT_SECONDS = 30.0
_ws_owner: FeishuChannel | None = None  # lark-oapi's websocket loop is a module global: one user at a time


class FeishuError(ChannelError):
    """The channel cannot run (websocket refused, second websocket in one process)."""


@dataclass(frozen=True)
class FeishuSettings:
    """What the gateway passes in (see ``gateway/run_cli.py::enabled_channels``)."""

    app_id: str
    app_secret: str = field(repr=False)
    allow_from: tuple[str, ...]
    verification_token: str = field(default="", repr=False)
    encrypt_key: str = field(default="", repr=False)
    domain: str = "https://open.feishu.cn"
    mode: str = "websocket"  # or "callback"
    timeout_seconds: float = 10.0
    callback_listen: str = "127.0.0.1"
    callback_port: int = 9000  # 0 = any free port (FeishuChannel.callback_port has the bound one)
    callback_path: str = "/feishu/events"
    stream_cards: bool = True  # streamed replies as CardKit cards (cardkit.py); False: sent whole
    stream_every: float = 1.5  # seconds between updates of a streaming card


class FeishuChannel(FeishuMedia):
    """The Feishu/Lark channel; see the module doc (its media parts: ``media.FeishuMedia``)."""

    name = CHANNEL_NAME

    def __init__(self, settings: FeishuSettings) -> None:
        if settings.mode not in ("websocket", "callback"):
            raise ValueError(f"unknown Feishu mode {settings.mode!r} (websocket or callback)")
        self.settings = settings
        route_lark_logs_through_ours()
        self.allow = AllowList(self.name, settings.allow_from)
        self.client = (
            lark.Client.builder()
            .app_id(settings.app_id)
            .app_secret(settings.app_secret)
            .domain(settings.domain)
            .timeout(settings.timeout_seconds)
            .log_level(lark_level())
            .build()
        )
        self.bot_open_id = ""
        self.bot_info_retry_seconds = 5.0  # first wait before asking the bot info again; doubles each time
        self.callback_port: int | None = None
        self.retry_base_seconds = 0.5  # backoff: base, 2×base, 4×base … when Feishu gives no reset time
        self.ws_stop_grace_seconds = 5.0  # the stop waits for lark's thread timeoutSeconds + this
        self.seen: SeenMarks | None = None  # the gateway's (``use_seen_marks``), else this process's
        self._loop: asyncio.AbstractEventLoop | None = None
        self._deliver: Deliver | None = None
        # Each event with the future its receiver waits on: lark acknowledges an event when our handler
        # returns, so the handler returns only once the gateway has stored it (or failed to).
        self._intake: asyncio.Queue[tuple[FeishuEvent, Future[None]]] = asyncio.Queue()
        self._callback_waits: list[Future[None]] = []  # the events of the callback request being parsed
        self._worker: asyncio.Task | None = None
        self._bot_info_task: asyncio.Task | None = None
        self._runner: web.AppRunner | None = None
        self._dispatcher: lark.EventDispatcherHandler | None = None
        self._ws: WebsocketRun | None = None
        self.sender = Sender(self.client, lambda: self.retry_base_seconds)
        self.cards = FeishuCards(self.sender, enabled=settings.stream_cards, every=settings.stream_every)
        self.on_stopped: Callable[[str], object] | None = None  # Feishu has no "stop" (base.StreamsReplies)

    def use_seen_marks(self, marks: SeenMarks) -> None:
        """Recognise redeliveries by ``marks`` (the gateway's, in the memory database); before ``start``."""
        self.seen = marks

    async def start(self, deliver: Deliver) -> None:
        """Learn the bot's open_id, then connect (websocket) or listen (callback)."""
        self._loop = asyncio.get_running_loop()
        self._deliver = deliver
        self.allow.warn_if_empty()
        if self.settings.mode == "callback" and not self.settings.encrypt_key:
            log.warning(
                "[feishu] callback mode without encryptKey: the X-Lark-Signature of incoming events is "
                "not checked (only the verification token); set encryptKey"
            )
        self.seen = self.seen or ProcessSeenMarks()  # no gateway: duplicates known in this process only
        try:
            open_id, problem = await read_bot_open_id(self.client)
            self.bot_open_id = open_id
            if not open_id:
                log.warning(
                    "[feishu] could not read the bot's identity from %s: %s; retrying in the background, "
                    "until then in groups any @mention will count as addressing the bot",
                    BOT_INFO_URI,
                    problem,
                )
                self._bot_info_task = asyncio.create_task(self._retry_bot_info(), name="feishu-bot-info")
            self._dispatcher = self._event_dispatcher()
            self._worker = asyncio.create_task(self._consume(), name="feishu-intake")
            if self.settings.mode == "websocket":
                await self._start_websocket()
            else:
                await self._start_callback()
        except BaseException:
            await self.stop()
            raise

    async def stop_receiving(self) -> None:
        """Take in no new events, and return once every event already taken in is handed to ``deliver``.

        Websocket: the connection is closed and its thread ended. Callback: the HTTP server stops
        listening, so new POSTs are refused and Feishu redelivers them later (they were never
        acknowledged). ``send`` keeps working, so the gateway can still answer; ``stop`` finishes up.
        """
        await self._stop_websocket()
        await self._stop_callback()
        await self._drain_intake()

    async def stop(self) -> None:
        """Stop receiving (close the websocket and end its thread, or the HTTP server), then the store.

        Safe to call more than once, and after ``stop_receiving``.
        """
        await self._stop_websocket()
        await self._stop_callback()
        for name in ("_bot_info_task", "_worker"):
            task = getattr(self, name)
            if task is not None:
                setattr(self, name, None)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        while not self._intake.empty():  # never stored: their receivers stop waiting, unacknowledged
            _, stored = self._intake.get_nowait()
            stored.cancel()

    @property
    def ready_label(self) -> str:
        """What the gateway's ready line says of this channel (never a secret)."""
        s = self.settings
        where = f" http://{s.callback_listen}:{self.callback_port}{s.callback_path}" if self._runner else ""
        return f"feishu {s.app_id} ({s.mode}{where})"

    @property
    def drops_repeated_replies(self) -> bool:
        """Every reply to a message carries a ``uuid`` from the message it answers (``message_uuid``; a
        streamed card's from the card kept on the message's inbox row), and Feishu posts a repeat of one
        within an hour once: another replica answering the message again shows nothing twice."""
        return True

    @property
    def holds_resources(self) -> bool:
        """Whether anything ``start`` made is still held (intake, bot-info task, HTTP server).

        False after ``stop``, and after a ``start`` that failed: a failed start cleans up after itself."""
        return any(held is not None for held in (self._worker, self._bot_info_task, self._runner))

    async def _drain_intake(self) -> None:
        """Wait (bounded) until the intake task has handled every queued event."""
        if self._worker is None or self._worker.done():
            return
        await asyncio.sleep(0)  # puts scheduled by call_soon_threadsafe before this point run first
        try:
            await asyncio.wait_for(self._intake.join(), timeout=max(self.settings.timeout_seconds, 5.0))
        except TimeoutError:
            log.warning("[feishu] %d received event(s) not handed over yet", self._intake.qsize())

    # --- receiving -----------------------------------------------------------------------------------

    def _event_dispatcher(self) -> lark.EventDispatcherHandler:
        def ignore(_data: object) -> None:
            return None

        return (
            lark.EventDispatcherHandler.builder(
                self.settings.encrypt_key, self.settings.verification_token, lark_level()
            )
            .register_p2_im_message_receive_v1(self._on_receive)
            # Events an app commonly subscribes to as well: acknowledge them, or Feishu retries for hours.
            .register_p2_im_message_message_read_v1(ignore)
            .register_p2_im_message_recalled_v1(ignore)
            .register_p2_im_message_reaction_created_v1(ignore)
            .register_p2_im_message_reaction_deleted_v1(ignore)
            .register_p2_im_chat_member_bot_added_v1(ignore)
            .register_p2_im_chat_member_bot_deleted_v1(ignore)
            .register_p2_im_chat_access_event_bot_p2p_chat_entered_v1(ignore)
            .build()
        )

    def _on_receive(self, data: P2ImMessageReceiveV1) -> None:
        """Called by lark — in the websocket thread, or inside the callback handler on our loop — for each
        message event: queue it, and have it acknowledged only once it is stored.

        Websocket: wait here (lark acknowledges when this returns; an exception means no acknowledgement,
        so Feishu delivers it again). Callback: ``_on_callback`` waits before answering the request.
        """
        if self._loop is None:
            raise FeishuError("event received before start")
        stored: Future[None] = Future()
        self._loop.call_soon_threadsafe(self._intake.put_nowait, (event_from_lark(data), stored))
        if self._on_loop_thread():
            self._callback_waits.append(stored)
            return
        stored.result(timeout=STORE_WAIT_SECONDS)

    def _on_loop_thread(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    async def _consume(self) -> None:
        while True:
            event, stored = await self._intake.get()
            try:
                await self._accept(event)
            except asyncio.CancelledError:
                stored.cancel()
                raise
            except Undeliverable as exc:  # would fail at every redelivery: acknowledged, intake goes on
                log.warning("[feishu] skipped event %s: it can never be stored (%s)", event.event_id, exc)
                if not stored.done():
                    stored.set_result(None)
            except Exception as exc:  # not stored: not acknowledged, Feishu delivers it again
                log.error("[feishu] event %s not stored (%s); left unacknowledged", event.event_id, exc)
                if not stored.done():
                    stored.set_exception(exc)
            else:
                if not stored.done():  # its receiver may have given up waiting
                    stored.set_result(None)
            finally:
                self._intake.task_done()

    async def _accept(self, event: FeishuEvent) -> None:
        """allowFrom first, then group mention, then dedup, then deliver."""
        if not self.allow.allows([event.sender_open_id]):
            self.allow.refuse(event.sender_open_id)
            return
        if event.sender_type == "app":  # another bot: never answer (two bots could talk forever)
            return
        event = encodable_fields(event)  # its ids become seen marks (channels/encodable.py)
        message = inbound_message(event, self.bot_open_id)
        if message is None:
            return
        assert self.seen is not None and self._deliver is not None
        keys = [
            (kind, key) for kind, key in (("event", event.event_id), ("message", event.message_id)) if key
        ]
        if await self.seen.seen_before(keys):
            log.info("[feishu] event %s (message %s) already handled", event.event_id, event.message_id)
            return
        # Stored first, marked after: a crash in between leaves a redelivery that the gateway's inbox
        # recognises by its event id, never a mark for a message that was not stored.
        await self._deliver(message)
        await self.seen.mark(keys)

    async def _retry_bot_info(self) -> None:
        """Ask the bot info again with backoff until it answers; then group gating is exact."""
        delay = self.bot_info_retry_seconds
        while True:
            await asyncio.sleep(delay)
            open_id, problem = await read_bot_open_id(self.client)
            if open_id:
                self.bot_open_id = open_id
                log.info("[feishu] read the bot's identity; in groups only @mentions of the bot count now")
                return
            log.info("[feishu] bot identity still unavailable (%s); retrying in %.0f s", problem, delay)
            delay = min(delay * 2, BOT_INFO_RETRY_MAX_SECONDS)

    # --- websocket mode ------------------------------------------------------------------------------

    async def _start_websocket(self) -> None:
        global _ws_owner
        with ws_owner_lock:
            if _ws_owner is not None:
                raise FeishuError(
                    "another Feishu websocket channel is running in this process (lark-oapi keeps one "
                    "global loop); use mode callback for a second app"
                )
            _ws_owner = self
        bind_lark_bootstrap_requests()
        run = self._ws = WebsocketRun(asyncio.new_event_loop())
        run.thread = threading.Thread(
            target=run_websocket,
            args=(run, self._new_ws_client, self.settings.timeout_seconds),
            name="feishu-websocket",
            daemon=True,
        )
        run.thread.start()
        problem = await wait_connected(run, self.settings.timeout_seconds, self.settings.app_id)
        if problem is not None:
            raise FeishuError(f"Feishu websocket could not connect: {problem}")

    def _new_ws_client(self) -> lark.ws.Client:
        """Built on the websocket thread: its constructor starts a task on the current event loop."""
        return ReportingWsClient(
            self.settings.app_id,
            self.settings.app_secret,
            log_level=lark_level(),  # its constructor resets the shared "Lark" logger level
            event_handler=self._dispatcher,
            domain=self.settings.domain,
            auto_reconnect=True,
            outage=Outage(self.name, f"the Feishu websocket via {self.settings.domain}", log),
        )

    async def _stop_websocket(self) -> None:
        global _ws_owner
        run, self._ws = self._ws, None
        if run is not None and run.thread is not None:
            run.stopping = True
            with contextlib.suppress(RuntimeError):  # the loop is already closed: the thread has ended
                run.loop.call_soon_threadsafe(cancel_ws_tasks, run)
            # at worst the thread is inside lark's endpoint request, which ends within the timeout
            longest = self.settings.timeout_seconds + self.ws_stop_grace_seconds
            await asyncio.to_thread(run.thread.join, longest)
            if run.thread.is_alive():
                log.warning("[feishu] websocket thread did not end; it is a daemon and ends with the process")
        with ws_owner_lock:
            if _ws_owner is self:
                _ws_owner = None

    # --- callback mode -------------------------------------------------------------------------------

    async def _start_callback(self) -> None:
        s = self.settings
        try:
            self._runner, self.callback_port = await listen(
                self._on_callback, s.callback_listen, s.callback_port, s.callback_path
            )
        except ChannelError as exc:
            raise FeishuError(str(exc)) from None
        log.info(
            "[feishu] event callback listening on http://%s:%s%s",
            s.callback_listen,
            self.callback_port,
            s.callback_path,
        )

    async def _stop_callback(self) -> None:
        """Stop listening (new connections are refused), answer requests in flight, close the server."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def _on_callback(self, request: web.Request) -> web.Response:
        """Refuse a bad request cheaply; parse the rest with lark; answer once its events are stored."""
        assert self._dispatcher is not None
        body = await request.read()
        refused = refusal(
            body,
            request.headers,
            encrypt_key=self.settings.encrypt_key,
            verification_token=self.settings.verification_token,
        )
        if refused is not None:  # one line, no traceback, nothing of the library's in the answer
            log.warning("[feishu] refused a callback from %s: %s", request.remote or "?", refused.reason)
            return web.Response(status=refused.status, body=refused.body(), content_type="application/json")
        raw = lark.RawRequest()
        raw.uri = request.path_qs
        raw.body = body
        raw.headers = lark_headers(request.headers)
        resp = self._dispatcher.do(raw)
        waits, self._callback_waits = self._callback_waits, []  # do() ran without yielding: ours
        try:
            await asyncio.wait_for(
                asyncio.gather(*(asyncio.wrap_future(w) for w in waits)), timeout=STORE_WAIT_SECONDS
            )
        except Exception:  # not stored: a 500 makes Feishu deliver it again later
            return web.Response(status=500, body=b'{"msg":"not stored"}', content_type="application/json")
        return web.Response(
            status=resp.status_code or 500,
            body=resp.content or b"",
            content_type="application/json",
            charset="utf-8",
        )

    # --- sending -------------------------------------------------------------------------------------

    async def send(self, message: OutboundMessage) -> None:
        """Send the reply as one or more messages (``sending.py``); raise FeishuApiError on refusal."""
        await self.sender.send(message)

    def open_stream(
        self, message: InboundMessage, *, resume: str, remember: RememberHandle
    ) -> ReplyStream | None:
        """The reply as a CardKit streaming card (``cardkit.py``); None (sent whole) where CardKit is off
        or refused."""
        return self.cards.open(message, resume, remember)
