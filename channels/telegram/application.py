"""Build python-telegram-bot's ``Application`` the way the channel needs it, and connect it (getMe).

Apart from ``channel.py`` because it is set-up only: every timeout is the channel's ``timeout_seconds``, no
job queue (PTB would start an APScheduler of its own), no ``Updater`` when polling (polling is the
channel's own loop, see its module docstring), and one handler for every update (PTB's
``CommandHandler`` would take /commands away from the gateway).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.error import InvalidToken, TelegramError
from telegram.ext import Application, ApplicationBuilder, TypeHandler

from channels.base import ChannelError
from channels.telegram.log_redaction import Redact


def build_application(
    token: str,
    base_url: str,
    timeout: float,
    *,
    handle: Callable[[Update, Any], Coroutine[Any, Any, None]],
) -> Application:
    """The PTB application: ``timeout`` everywhere, ``handle`` for every update."""
    builder = (
        ApplicationBuilder()
        .token(token)
        .base_url(base_url)
        .base_file_url(file_url(base_url))
        .connect_timeout(timeout)
        .read_timeout(timeout)
        .write_timeout(timeout)
        .pool_timeout(timeout)
        .get_updates_connect_timeout(timeout)
        .get_updates_read_timeout(timeout)  # PTB adds the long-poll timeout to this
        .get_updates_write_timeout(timeout)
        .get_updates_pool_timeout(timeout)
        .job_queue(None)
    )
    app = builder.updater(None).build()  # the channel polls and serves its webhook itself
    # One handler for every update: PTB's CommandHandler would take /commands away from the gateway.
    app.add_handler(TypeHandler(Update, handle))
    return app


def file_url(base_url: str) -> str:
    """Where files are downloaded from, beside the Bot API: ``…/bot`` → ``…/file/bot`` (Telegram's and a
    self-hosted Bot API server's layout); PTB appends the token."""
    head, sep, tail = base_url.rstrip("/").rpartition("/bot")
    return f"{head}/file/bot{tail}" if sep else base_url.rstrip("/") + "/file/bot"


async def connect(app: Application, base_url: str, redact: Redact) -> None:
    """getMe (``initialize``); a refused token or an unreachable Bot API is a ``ChannelError`` (and the
    log redaction is removed: the channel did not start)."""
    try:
        await app.initialize()
    except InvalidToken:  # PTB's message quotes the token: never let it reach a log or traceback
        redact.remove()
        raise ChannelError(
            "[telegram] the Bot API rejected the token: check channels.telegram.token"
        ) from None
    except TelegramError as exc:
        redact.remove()
        raise ChannelError(f"[telegram] could not reach the Bot API at {base_url}: {exc}") from None
