"""Telegram's "typing…" sign while a reply is being made: sent now and every few seconds, in its own task,
so it never delays the reply and never fails it (errors are logged at debug level). While the reply itself
shows in the chat (a draft, or a message being edited: ``streaming.py``) the sign is not sent: the words
coming in say it, and the calls are spared."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from telegram import Bot
from telegram.constants import ChatAction

from channels.telegram.failures import pause

log = logging.getLogger("tierclaw.channels")


@contextlib.asynccontextmanager
async def typing_while(
    bot: Bot,
    chat_id: str,
    *,
    every: float,
    stopped: asyncio.Event,
    tasks: set[asyncio.Task],
    shown: Callable[[], bool] = lambda: False,
) -> AsyncIterator[None]:
    """Keep the sign up in ``chat_id`` until the context exits or ``stopped`` is set, skipped while
    ``shown()`` (the reply shows as it is written); the task is kept in ``tasks`` meanwhile (the channel
    cancels what is left at stop)."""
    done = asyncio.Event()
    task = asyncio.create_task(
        _keep_typing(bot, chat_id, done, stopped, every, shown), name=f"telegram-typing:{chat_id}"
    )
    tasks.add(task)
    try:
        yield
    finally:
        done.set()
        task.cancel()  # not awaited: the reply is already out, nothing should wait on the sign
        tasks.discard(task)


async def _keep_typing(
    bot: Bot,
    chat_id: str,
    done: asyncio.Event,
    stopped: asyncio.Event,
    every: float,
    shown: Callable[[], bool],
) -> None:
    while not done.is_set() and not stopped.is_set():
        if not shown():
            try:
                await bot.send_chat_action(chat_id, ChatAction.TYPING)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("[telegram] typing indicator for %s failed: %s", chat_id, exc)
        await pause(done, every)
