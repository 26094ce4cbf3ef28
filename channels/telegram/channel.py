"""The Telegram channel: python-telegram-bot (PTB) for the Bot API, long polling by default or a webhook.

What this module decides, and why:

- **Polling is our own small loop** over ``bot.get_updates`` rather than PTB's ``Updater.start_polling``.
  PTB's loop logs every failure and has no stall detection; here one loop owns the backoff, logs one
  line per outage and one when it is back (``channels/outage.py``) or per kind of 409 (a webhook is set:
  deleted again; another process polls: back off), and bounds every ``getUpdates`` by ``poll_timeout +
  timeout_seconds + stall_margin_seconds`` (a watchdog for a connection that trickles bytes). An update
  is confirmed only once handed to the gateway, or skipped with one line when it can never be stored
  (``Undeliverable``). Webhook mode is our own server too (``webhook.py``): an update is answered 200
  only once stored, which PTB's ``Updater.start_webhook`` does not wait for.
- **Several replicas**: one polls at a time, asked before each poll (``may_poll``, ``poll_turn.py``).
- **Shutting down** is two steps: ``stop_receiving`` ends intake (the poll loop, or the webhook server)
  and confirms exactly the updates already handed to the gateway, while ``send`` and ``working`` keep
  working so the gateway can drain its replies; ``stop`` then closes everything.
- **Who is answered** is decided before anything is sent or delivered (``inbound.py``):
  ``allowFrom`` first (a stranger gets no typing, no reply, no memory row), then group gating (a
  @mention, a reply to the bot or ``/command@this_bot`` unless ``group_policy`` is "open").
- **Replies** are cut with ``split_text(text, 4096)`` and rendered to Telegram HTML per chunk; a chunk
  Telegram cannot parse is resent as plain text (that chunk only), a chunk Telegram finds too long
  (it counts UTF-16 units after parsing) is cut smaller. sendMessage is not idempotent:
  ``sending.call`` says which failures are retried, so a person sees at most one duplicate of a chunk.
- **Streamed replies** (``open_stream``): a draft in a private chat, an edited message in a group, at
  most one edit per ``stream_every`` seconds per chat, a 429 pausing the whole chat (``streaming.py``,
  ``pace.py``); a "stop" on a draft (``stopped_message_generation``) cancels the reply (``on_stopped``).
- **The token is a secret** (in every request URL PTB and httpx log): a redacting filter runs meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import httpx
from telegram import Bot, Update
from telegram.error import RetryAfter, TelegramError
from telegram.ext import Application, ContextTypes

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
from channels.outage import Outage
from channels.telegram.application import build_application, connect
from channels.telegram.failures import (
    CONFLICTS,
    parse_each,
    pause,
    polling_trouble,
    retry_after,
    trouble_kind,
    unless_set,
)
from channels.telegram.inbound import addressed_message, lane_of
from channels.telegram.log_redaction import Redact
from channels.telegram.media import TelegramMedia
from channels.telegram.pace import ChatPace
from channels.telegram.poll_turn import MayPoll, PollTurn
from channels.telegram.sending import Outbox, Retries
from channels.telegram.streaming import STOPPED_UPDATE, TelegramStreams
from channels.telegram.typing_sign import typing_while
from channels.telegram.webhook import WebhookServer

log = logging.getLogger("tierclaw.channels")

ALLOWED_UPDATES = ("message", STOPPED_UPDATE)


@dataclass(frozen=True)
class TelegramSettings:
    """What ``TelegramChannel`` needs from ``channels.telegram`` in the config."""

    token: str
    allow_from: tuple[str, ...]
    base_url: str = "https://api.telegram.org/bot"  # PTB appends the token
    mode: str = "polling"  # or "webhook"
    group_policy: str = "mention"  # or "open"
    timeout_seconds: float = 30.0  # HTTP timeouts for API calls
    webhook_url: str = ""  # public URL Telegram posts to (setWebhook)
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = 8443
    webhook_path: str = "telegram"
    webhook_secret: str = ""  # empty: a random one per start (set via setWebhook and checked)
    poll_timeout: int = 10  # getUpdates long-poll seconds
    stream_every: float = 1.5  # seconds between edits of a streamed reply in a chat (streaming.py)
    draft_every: float = 1.5  # seconds between drafts of a streamed reply in a private chat


class TelegramChannel(TelegramMedia):
    """A Telegram bot as a gateway channel (``Channel``, ``working`` for the typing indicator, and the
    media parts of ``media.TelegramMedia``).

    The class attributes are the retry and timing knobs; tests shorten them on an instance.
    """

    name = "telegram"
    typing_every_seconds = 4.0  # Telegram shows "typing" for 5 s per sendChatAction
    typing_grace_seconds = 1.0  # where replies are streamed, the first sign waits this for their words
    retry_base_seconds = 1.0  # first backoff after a failure; doubles per failure up to retry_max_seconds
    retry_max_seconds = 30.0
    send_attempts = 4  # tries per chunk on 429s and on requests that never reached Telegram
    ambiguous_retries = 1  # retries after a failure that may have delivered the chunk (see _call)
    max_retry_after_seconds = 60.0  # a longer flood wait is not slept through: the send fails instead
    stall_margin_seconds = 5.0
    standby_seconds = 5.0  # a replica not polling asks again this often (poll_turn.py)

    def __init__(self, settings: TelegramSettings) -> None:
        if settings.mode not in ("polling", "webhook"):
            raise ValueError(f"telegram mode must be 'polling' or 'webhook', not {settings.mode!r}")
        if settings.group_policy not in ("mention", "open"):
            raise ValueError(
                f"telegram group_policy must be 'mention' or 'open', not {settings.group_policy!r}"
            )
        self.settings = settings
        self.allow = AllowList(self.name, settings.allow_from)
        self._app: Application | None = None
        self._deliver: Deliver | None = None
        self._poller: asyncio.Task | None = None
        self._stopped = asyncio.Event()  # stop(): typing ends too
        self._intake_stopped = asyncio.Event()  # stop_receiving(): no new updates, replies still go out
        self._offset = 0  # update_id + 1 of the last update handed to the gateway
        self._confirmed = 0  # the offset Telegram was last told (getUpdates offset)
        self._typing: set[asyncio.Task] = set()
        self._redact: Redact | None = None
        self._bot_id = 0
        self._bot_username = ""
        self._undelivered: dict[int, Exception] = {}  # update id -> why the gateway could not store it
        self._webhook: WebhookServer | None = None
        self.may_poll: MayPoll | None = None  # set by the gateway with several replicas (poll_turn.py)
        self.pace = ChatPace()  # per chat: the last send or edit, a 429's pause (pace.py)
        self.streams = TelegramStreams(settings.stream_every, settings.draft_every)
        self.on_stopped: Callable[[str], object] | None = None  # "stop" on a draft: the gateway cancels

    # --- lifecycle -----------------------------------------------------------------------------------

    async def start(self, deliver: Deliver) -> None:
        """Connect (getMe), then start receiving in the background; returns once receiving has started."""
        s = self.settings
        self._deliver = deliver
        self._stopped, self._intake_stopped = asyncio.Event(), asyncio.Event()
        self.allow.warn_if_empty()
        secret = s.webhook_secret or secrets.token_urlsafe(32)
        self._redact = Redact((s.token, secret))
        self._redact.install()
        # Polling is our loop and the webhook our server (module doc): PTB's Updater is never built.
        app = build_application(s.token, s.base_url, s.timeout_seconds, handle=self._on_update)
        app.add_error_handler(self._on_error)
        await connect(app, s.base_url, self._redact)
        self._app = app
        self._bot_id = app.bot.id
        self._bot_username = app.bot.username or ""
        await self._begin_receiving(app, secret)

    async def _begin_receiving(self, app: Application, secret: str) -> None:
        """Start PTB and the webhook or our polling loop; on failure everything is stopped again."""
        s = self.settings
        redact = self._redact
        assert redact is not None  # set by start
        try:
            await app.start()
            if s.mode == "webhook":
                self._webhook = WebhookServer(
                    self._webhook_update,
                    app.bot,
                    listen=s.webhook_listen,
                    port=s.webhook_port,
                    path=s.webhook_path,
                    secret=secret,
                )
                await self._webhook.start()
                if s.webhook_url:
                    await app.bot.set_webhook(
                        s.webhook_url, secret_token=secret, allowed_updates=list(ALLOWED_UPDATES)
                    )
            else:
                self._poller = asyncio.create_task(self._poll(app), name="telegram-poll")
        except OSError as exc:  # the webhook port is taken, or the address is not this machine's
            await self.stop()
            raise ChannelError(
                f"[telegram] cannot listen for the webhook on {s.webhook_listen}:{s.webhook_port}: {exc}"
            ) from None
        except TelegramError as exc:  # setWebhook (the only API call start_webhook makes) failed
            clean = redact.clean(str(exc))
            await self.stop()
            # A transport failure has an httpx cause (a 400 is a NetworkError too in PTB, so not isinstance).
            if isinstance(exc.__cause__, httpx.HTTPError):
                raise ChannelError(
                    f"[telegram] setWebhook failed, the Bot API at {s.base_url} did not answer: {clean}"
                ) from None
            raise ChannelError(
                f"[telegram] setWebhook refused: {clean} (check channels.telegram.webhook.url)"
            ) from None
        except BaseException:
            await self.stop()
            raise

    async def stop_receiving(self) -> None:
        """Stop taking in updates; ``send`` and ``working`` keep working (the gateway drains, then ``stop``).

        Polling: the loop ends (a long poll in flight is abandoned and whatever it returns is never
        confirmed, so Telegram delivers it again on the next start), then the offset of every update
        already handed to the gateway is confirmed. Webhook: the webhook server closes (Telegram keeps
        the webhook and queues updates until the next start); updates it already accepted are handed
        over first. Idempotent; bounded by ``timeout_seconds``.
        """
        self._intake_stopped.set()
        webhook, self._webhook = self._webhook, None
        if webhook is not None:  # the updates it is storing are stored before it closes
            await webhook.stop()
        poller, self._poller = self._poller, None
        if poller is not None:
            done, _ = await asyncio.wait({poller}, timeout=self.settings.timeout_seconds)
            if not done:  # the loop is stuck in a hand-over: give up on it
                poller.cancel()
                await asyncio.wait({poller}, timeout=self.settings.timeout_seconds)
        app = self._app
        if app is None:
            return
        await self._confirm(app)
        try:
            if app.updater is not None and app.updater.running:
                await app.updater.stop()
            if app.running:  # hands queued webhook updates to the gateway, then stops PTB's fetcher
                await app.stop()
        except Exception as exc:
            log.warning("[telegram] stopping intake failed: %s", exc)

    async def stop(self) -> None:
        """Stop receiving, confirm the last polled update, close connections (fast; safe to call twice)."""
        try:
            await self.stop_receiving()
        finally:
            app, self._app = self._app, None
            tasks = list(self._typing)
            self._typing.clear()
            # The flag as well as cancel(): on Python 3.11 a cancel that lands as a request completes can
            # be swallowed inside the HTTP stack, and a loop that only relies on it would run on.
            self._stopped.set()
            for task in tasks:
                task.cancel()
            try:
                if tasks:
                    await asyncio.wait(tasks, timeout=self.settings.timeout_seconds)
                if app is not None:
                    await app.shutdown()
            finally:
                if self._redact is not None:
                    self._redact.remove()
                    self._redact = None

    @property
    def ready_label(self) -> str:
        """What the gateway's ready line says of this channel (never the token)."""
        return f"telegram @{self._bot_username} ({self.settings.mode})"

    @property
    def delivers_in_order(self) -> bool:
        """Polling hands a chat's updates over one at a time, each stored before the next
        (``_hand_over``): a chat's messages need no reorder window. Webhook requests come concurrently:
        they do."""
        return self.settings.mode == "polling"

    @property
    def holds_resources(self) -> bool:
        """Whether anything ``start`` made is still held (the PTB application, the poller, the webhook
        server); False after ``stop``, and after a failed ``start`` (it cleans up after itself)."""
        return self._app is not None or self._poller is not None or self._webhook is not None

    async def _confirm(self, app: Application) -> None:
        """Tell Telegram (getUpdates ``offset``) that every update handed to the gateway was read."""
        offset = self._offset
        if not offset or offset <= self._confirmed:
            return
        try:
            async with asyncio.timeout(self.settings.timeout_seconds):
                await app.bot.get_updates(offset=offset, timeout=0, allowed_updates=ALLOWED_UPDATES)
            self._confirmed = offset
        except Exception as exc:  # they come back on the next start; the gateway sees them twice
            log.warning("[telegram] could not confirm the last handled updates: %s", exc)

    # --- receiving -----------------------------------------------------------------------------------

    async def _poll(self, app: Application) -> None:
        """Long-poll getUpdates until intake stops; every failure backs off, one log line per kind."""
        s, bot, stopped = self.settings, app.bot, self._intake_stopped
        limit = s.poll_timeout + s.timeout_seconds + self.stall_margin_seconds
        failures, trouble, webhook_cleared = 0, "", False
        outage = Outage(self.name, f"the Bot API at {s.base_url}", log)
        turn = PollTurn(self.may_poll, self.standby_seconds)

        async def fetch() -> tuple[Update, ...]:
            nonlocal webhook_cleared
            async with asyncio.timeout(limit):  # the stall watchdog (asyncio.wait_for can eat a cancel)
                if not webhook_cleared:  # getUpdates answers 409 while a webhook is set
                    await bot.delete_webhook()
                    webhook_cleared = True
                return await bot.get_updates(
                    offset=self._offset or None, timeout=s.poll_timeout, allowed_updates=ALLOWED_UPDATES
                )

        while not stopped.is_set():
            if not await turn.mine(stopped):  # another replica polls (poll_turn.py)
                continue
            skip_to = 0  # past the last update that did not parse, if any
            try:
                updates = await unless_set(stopped, fetch())
            except asyncio.CancelledError:
                raise
            except RetryAfter as exc:
                await pause(stopped, retry_after(exc))
                continue
            except (KeyError, TypeError, ValueError, AttributeError):
                # An update PTB cannot parse fails the whole batch, and the offset would never move:
                # fetch the batch raw and take its updates one by one, skipping the poisonous ones.
                updates, skip_to = await parse_each(bot, self._offset, ALLOWED_UPDATES)
            except Exception as exc:
                failures += 1
                kind = trouble_kind(exc)
                if kind == "webhook-active":
                    webhook_cleared = False  # someone set a webhook meanwhile: delete it again
                if kind not in CONFLICTS:  # the server is unreachable or refuses: one line per outage
                    outage.failed(exc, polling_trouble(exc, limit))
                elif kind != trouble:
                    trouble = kind
                    log.warning("[telegram] %s", polling_trouble(exc, limit))
                await pause(stopped, self._backoff(failures))
                continue
            if updates is None:  # intake stopped during the long poll: its updates stay unconfirmed
                return
            if trouble or outage.down:
                if trouble:
                    log.info("[telegram] receiving messages again")
                outage.recovered()
                trouble, failures = "", 0
            handed = await self._hand_over(app, updates)
            if handed == "stopped":
                return
            if handed == "unstored":  # fetched again after a pause
                failures += 1
                await pause(stopped, self._backoff(failures))
            elif skip_to and not stopped.is_set():
                self._offset = max(self._offset, skip_to)

    async def _hand_over(self, app: Application, updates: tuple[Update, ...]) -> str:
        """Each update to PTB's handler (and so to the gateway), the offset moved past each one stored:
        "done", "stopped" (intake stopped: the rest is neither handed over nor confirmed), or "unstored"
        (the gateway could not store one: it stays unconfirmed and comes again).

        The chats of a batch are handed over at once, each chat's updates one after another in their
        order (``lane_of``): storing a message waits for the database, and fifty people writing at once
        must not each wait for the forty-nine before them (bench/README.md, "Streaming"). The offset
        moves past the updates stored without a gap in the platform's order; one stored after a gap comes
        again and the inbox answers it once."""
        lanes: dict[str, list[Update]] = {}
        for update in updates:
            lanes.setdefault(lane_of(update), []).append(update)
        outcomes: dict[int, str] = {}

        async def lane(batch: list[Update]) -> None:
            for update in batch:  # a chat's next update waits for its previous one, and after a failure
                outcome = await self._hand_over_one(app, update)
                outcomes[update.update_id] = outcome
                if outcome != "done":
                    return

        await asyncio.gather(*(lane(batch) for batch in lanes.values()))
        for update in updates:
            outcome = outcomes.get(update.update_id, "stopped")  # none: its chat's earlier one failed
            if outcome != "done":
                return outcome
            self._offset = update.update_id + 1  # never fetch a poisonous update again
        return "done"

    async def _hand_over_one(self, app: Application, update: Update) -> str:
        """One update to PTB's handler: "done" (stored, or nothing to store), "stopped", "unstored"."""
        if self._intake_stopped.is_set():
            return "stopped"
        try:
            await app.process_update(update)  # handler errors go to _on_error; this is a backstop
        except Exception as exc:
            log.error("[telegram] update %s could not be handled: %s", update.update_id, exc)
        undelivered = self._undelivered.pop(update.update_id, None)
        if undelivered is not None:
            log.warning(
                "[telegram] update %s not stored (%s); it stays unconfirmed and comes again",
                update.update_id,
                type(undelivered).__name__,
            )
            return "unstored"
        return "done"

    async def _on_update(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        if self._stopped_reply(update):
            return
        inbound = self.inbound(update)
        if inbound is not None and self._deliver is not None:
            try:
                await self._deliver(inbound)
            except Undeliverable as exc:  # would fail at every redelivery: confirmed, so polling goes on
                log.warning(
                    "[telegram] skipped update %s: it can never be stored (%s)", update.update_id, exc
                )
            except Exception as exc:  # not stored: _poll leaves it unconfirmed, Telegram sends it again
                self._undelivered[update.update_id] = exc
                raise

    async def _webhook_update(self, update: Update) -> None:
        """Hand a webhook update to the gateway (webhook.py answers only after); raises if not stored."""
        if self._stopped_reply(update):
            return
        inbound = self.inbound(update)
        if inbound is None or self._deliver is None:
            return
        try:
            await self._deliver(inbound)
        except Undeliverable as exc:  # would fail at every resend: answered 200, as polling confirms it
            log.warning("[telegram] skipped update %s: it can never be stored (%s)", update.update_id, exc)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        update_id = update.update_id if isinstance(update, Update) else None
        if update_id is None or context.error is not self._undelivered.get(update_id):  # _poll reports that
            log.error("[telegram] handling an update failed: %s", context.error)

    def _stopped_reply(self, update: Update) -> bool:
        """A "stop" on a draft (not a message): the reply being made is cancelled, like Ctrl-C."""
        if not self.streams.is_stop(update):
            return False
        chat_key = self.streams.stopped(update)
        if chat_key is not None and self.on_stopped is not None:
            self.on_stopped(chat_key)
        return True

    def inbound(self, update: Update) -> InboundMessage | None:
        """The message to deliver for ``update``, or None when it is not for the gateway
        (``inbound.addressed_message`` decides; see the module doc)."""
        return addressed_message(
            update,
            channel=self.name,
            allow=self.allow,
            group_policy=self.settings.group_policy,
            bot_username=self._bot_username,
            bot_id=self._bot_id,
        )

    # --- sending -------------------------------------------------------------------------------------

    async def send(self, message: OutboundMessage) -> None:
        """Send a reply as ≤4096-character HTML chunks; the first one replies to ``reply_to``."""
        await self._outbox(message.chat_id).send_text(message.text, message.reply_to)

    def open_stream(
        self, message: InboundMessage, *, resume: str, remember: RememberHandle
    ) -> ReplyStream | None:
        """The reply shown while it is written: a draft in a private chat, an edited message in a group
        (``streaming.py``)."""
        return self.streams.open(self._outbox(message.chat_id), message, resume, remember)

    def _outbox(self, chat_id: str) -> Outbox:
        """Where the chat's messages go, with the channel's retry knobs (``sending.call``)."""
        retries = Retries(
            self.send_attempts, self.ambiguous_retries, self.max_retry_after_seconds, self._backoff
        )
        return Outbox(self._bot, chat_id, retries, self.pace)

    def working(self, message: InboundMessage) -> AbstractAsyncContextManager[None]:
        """Show "typing…" in the message's chat now (where replies are streamed: unless their first words
        show within a moment, ``typing_sign.py``) and every few seconds until the context exits. Never
        raises and never delays the reply: it runs in its own task, errors are logged at debug level."""
        app = self._app
        if app is None:
            return contextlib.nullcontext()
        return typing_while(
            app.bot,
            message.chat_id,
            every=self.typing_every_seconds,
            stopped=self._stopped,
            tasks=self._typing,
            shown=lambda: self.streams.shown(message.chat_id),
            grace=self.typing_grace_seconds if self.streams.streamed else 0.0,
        )

    def _bot(self) -> Bot:
        if self._app is None:
            raise RuntimeError("the telegram channel is not started")
        return self._app.bot

    def _backoff(self, failures: int) -> float:
        return min(self.retry_max_seconds, self.retry_base_seconds * 2 ** (failures - 1))
