"""This replica's side of its chat holds, beside its workers (gateway/loop.py; docs/scale-out.md, "The
message path" and "Fencing"): the holds of the chats being worked are renewed every third of the lease,
and every ``sweep_every`` seconds the chats with waiting messages and no live hold are taken.

A renewal that misses a chat being worked means another replica took it over — this one stalled past its
lease (a long pause, a lost connection, SIGSTOP). That worker is stopped: its reply would be refused by
the fence anyway (``ProcessLoop.may_send``), and the new holder answers the message — unless it is marking
a reply that went out before the stall, which the new holder waits for (gateway/in_flight.py). Whichever
of the two finds the loss first says so, once per chat (``LostChats``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping

from gateway.inbox import Chat, DurableInbox

log = logging.getLogger("tierclaw.gateway")


class LostChats:
    """The chats taken over from under a worker of this replica, each said once while that worker lives."""

    def __init__(self) -> None:
        self._said: set[Chat] = set()
        self._marking: set[Chat] = set()  # a worker marking a reply that went out: let it land

    @contextlib.contextmanager
    def marking(self, chat: Chat) -> Iterator[None]:
        """While the chat's worker marks a reply that went out, a renewal that finds the chat lost does
        not stop it: the mark of a stalled claimant counts (gateway/in_flight.py), and the worker finds
        the loss itself right after it."""
        self._marking.add(chat)
        try:
            yield
        finally:
            self._marking.discard(chat)

    def is_marking(self, chat: Chat) -> bool:
        """Whether the chat's worker is marking a reply that went out (``marking``)."""
        return chat in self._marking

    def say(self, chat: Chat, why: str) -> None:
        """One warning line for a chat this replica lost while working it."""
        if chat in self._said:
            return
        self._said.add(chat)
        log.warning(
            "[gateway] %s:%s: taken over by another replica while this one stalled past its lease (%s): "
            "nothing more is sent or marked here",
            *chat,
            why,
        )

    def forget(self, chat: Chat) -> None:
        """The chat's worker ended: a later loss of the chat is news again."""
        self._said.discard(chat)


async def keep_holds(
    inbox: DurableInbox,
    workers: Mapping[Chat, asyncio.Task[None]],
    sweep: Callable[[], Awaitable[int]],
    lost: LostChats,
    every: Callable[[], float],
) -> None:
    """Renew the holds of the chats in ``workers`` every third of the lease, stopping the worker of a
    chat taken over; ``sweep`` (take the chats nobody live holds) every ``every()`` seconds. A round the
    database misses is tried again; runs until cancelled."""
    renewed_at = time.monotonic()
    failing = False
    me = asyncio.current_task()
    while True:
        if me is not None and me.cancelling():
            # A cancel that a library swallowed (Python 3.11's asyncio.wait_for returns a result that
            # came with it): stop all the same, or the loop's stop, which awaits this task, waits
            # forever. The PostgreSQL pool's wait raises it now (memory/store/postgres/database.py,
            # ``_pooled``); this stays for any other library's (the HTTP stack's, channels/telegram).
            raise asyncio.CancelledError
        await asyncio.sleep(every())
        try:
            if time.monotonic() - renewed_at >= inbox.lease.total_seconds() / 3:
                working = dict(workers)
                kept = set(await inbox.renew(list(working)))
                renewed_at = time.monotonic()
                for chat in working.keys() - kept:
                    await _stop_if_lost(inbox, workers, chat, working[chat], lost)
            await sweep()
            failing = False
        except Exception as exc:  # one line per outage, not one a second
            if not failing:
                log.warning("[gateway] could not renew or sweep the chat holds: %s", type(exc).__name__)
            failing = True


async def _stop_if_lost(
    inbox: DurableInbox,
    workers: Mapping[Chat, asyncio.Task[None]],
    chat: Chat,
    worker: asyncio.Task[None],
    lost: LostChats,
) -> None:
    """A chat being worked here that its renewal missed: if another replica holds it now, stop the
    worker; if it was let go (or taken again here) in between, nothing was lost."""
    if workers.get(chat) is not worker or worker.done():
        return
    holder = await inbox.holder(chat)
    if holder is None or holder == inbox.replica or worker.done():  # the worker found it itself meanwhile
        return
    lost.say(chat, f"replica {holder} holds it now")
    if not lost.is_marking(chat):
        worker.cancel()
