"""What a failed Bot API call means and how long to wait: error kinds, retry_after, pauses that a stop
can cut short, and the batch with an update that does not parse."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import Awaitable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

import httpx
from telegram import Bot, Update
from telegram.error import (
    Conflict,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)

from channels.outage import plain_reason

T = TypeVar("T")
log = logging.getLogger("tierclaw.channels")
CONFLICTS = ("webhook-active", "other-poller", "conflict")  # trouble kinds that are not an outage


def trouble_kind(exc: Exception) -> str:
    """What kind of polling failure ``exc`` is (one log line per streak of the same kind)."""
    if isinstance(exc, Conflict):
        reason = exc.message.casefold()
        if "webhook is active" in reason:
            return "webhook-active"
        if "other getupdates" in reason:
            return "other-poller"
        return "conflict"
    return type(exc).__name__


def polling_trouble(exc: Exception, limit: float) -> str:
    """One clear line per kind of polling failure (the loop logs it once per streak)."""
    kind = trouble_kind(exc)
    if kind == "webhook-active":
        return (
            "a webhook is set for this bot, so Telegram refuses getUpdates (409 Conflict); tierclaw "
            "deletes it and polls again (if another deployment runs this token in webhook mode, stop "
            "it or switch this one to webhook mode)"
        )
    if kind == "other-poller":
        return (
            "another bot instance is polling with this token (409 Conflict: terminated by other "
            "getUpdates request): stop the other one; retrying with backoff"
        )
    if isinstance(exc, Conflict):
        return f"Telegram answered 409 Conflict to getUpdates ({exc}); retrying with backoff"
    if isinstance(exc, InvalidToken):
        return "Telegram rejected the bot token while polling (401); check channels.telegram.token"
    if isinstance(exc, TimeoutError | TimedOut):
        return f"getUpdates stalled (no answer within {limit:.0f} s); restarting the long poll"
    return f"polling Telegram failed ({plain_reason(exc)})"


def may_have_arrived(exc: NetworkError) -> bool:
    """False only when the request certainly never reached Telegram (see ``TelegramChannel._call``).

    PTB raises ``TimedOut``/``NetworkError`` *from* the httpx exception for transport failures, and a
    plain ``NetworkError`` (no httpx cause) for an HTTP error status it has no class for (5xx).
    """
    cause = exc.__cause__
    return not isinstance(cause, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


async def unless_set(event: asyncio.Event, awaitable: Awaitable[T]) -> T | None:
    """``await awaitable``, or None as soon as ``event`` is set (the awaitable is then cancelled).

    A cancel that Python 3.11's HTTP stack swallows only lets the request finish: its result is
    dropped either way.
    """
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        task.add_done_callback(discard)
        raise
    finally:
        waiter.cancel()
    if task.done():
        return task.result()
    task.cancel()
    task.add_done_callback(discard)
    await asyncio.wait((task,), timeout=1.0)  # let httpx release the connection before shutdown
    return None


def discard(task: asyncio.Future) -> None:
    """Retrieve an abandoned task's outcome, so asyncio does not log "exception was never retrieved"."""
    if not task.cancelled():
        task.exception()


async def pause(event: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds``, or less when ``event`` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()


def retry_after(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB 22 warns that the int form of retry_after will become a timedelta
        warnings.simplefilter("ignore")
        value: Any = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


async def parse_each(bot: Bot, offset: int, allowed: Sequence[str]) -> tuple[tuple[Update, ...], int]:
    """The pending batch fetched raw (no long poll) and parsed update by update, for when PTB could not
    parse it whole: the updates that parse, and the offset just past the last one that does not (0 if
    all parse). A skipped update is logged once — its id and the error's type, never its content."""
    with warnings.catch_warnings():  # PTB suggests get_updates, which is what could not parse the batch
        warnings.simplefilter("ignore")
        raw = await bot.do_api_request(
            "getUpdates",
            api_kwargs={"offset": offset or None, "timeout": 0, "allowed_updates": list(allowed)},
        )
    return parse_updates(raw, bot)


def parse_updates(raw: Any, bot: Bot | None) -> tuple[tuple[Update, ...], int]:
    """``parse_each``'s parsing: whatever the batch holds, the updates that parse and the offset past the
    last one that does not (0 if all parse); never raises."""
    parsed: list[Update] = []
    skip_to = 0
    for item in raw if isinstance(raw, list) else []:
        update_id = item.get("update_id") if isinstance(item, dict) else None
        try:
            update = Update.de_json(item, bot)
            if update is None:
                raise ValueError("empty update")
            parsed.append(update)
        except Exception as exc:
            log.warning("[telegram] skipped update %s: it does not parse (%s)", update_id, type(exc).__name__)
            if isinstance(update_id, int) and not isinstance(update_id, bool):
                skip_to = max(skip_to, update_id + 1)
    return tuple(parsed), skip_to
