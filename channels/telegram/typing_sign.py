"""Telegram's "typing…" sign while a reply is being made: sent now and every few seconds, in its own task,
so it never delays the reply and never fails it (errors are logged at debug level). While the reply itself
shows in the chat (a draft, or a message being edited: ``streaming.py``) the sign is not sent: the words
coming in say it, and the calls are spared.

Where replies are streamed, the first sign waits a moment (``grace``: the channel's ``typing_grace_seconds``,
1 s): the reply's first words usually come sooner (the model's first token), and then no sign is needed at
all. That spares a call a reply, and when fifty chats write at once it keeps fifty signs off the event loop
while their first words are due (bench/README.md, "Streaming", Stop 46). A reply whose words come later
gets the sign then."""

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
    grace: float = 0.0,
) -> AsyncIterator[None]:
    """Keep the sign up in ``chat_id`` until the context exits or ``stopped`` is set, skipped while
    ``shown()`` (the reply shows as it is written), the first one after ``grace`` seconds (see the module
    doc); the task is kept in ``tasks`` meanwhile (the channel cancels what is left at stop)."""
    done = asyncio.Event()
    task = asyncio.create_task(
        _keep_typing(bot, chat_id, done, stopped, every, shown, grace), name=f"telegram-typing:{chat_id}"
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
    grace: float,
) -> None:
    if grace > 0:
        await pause(done, grace)
    while not done.is_set() and not stopped.is_set():
        if not shown():
            try:
                await bot.send_chat_action(chat_id, ChatAction.TYPING)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("[telegram] typing indicator for %s failed: %s", chat_id, exc)
        await pause(done, every)
