"""Which channels a reply may go to yet: at start the waiting messages are answered before the channels
start (gateway/app.py, ``Runtime.start``), so a leftover's worker waits here until its channel started.

The order stays as it is (leftovers held first, then the channels): with the channels first, a piped
``tierclaw chat`` on SQLite answered a message twice (stop 52). But a leftover's reply made before its
channel is up would meet a channel that cannot send yet (Telegram: "the telegram channel is not started")
and be marked answered with a send error: the person never gets it. So the loop's chat worker waits for
its channel before it claims and answers (``ChannelStarts.wait``); a loop without a runtime (the tests'
loops) never holds a channel and never waits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

log = logging.getLogger("tierclaw.gateway")


class ChannelStarts:
    """The channels not started yet, each with the event its chat workers wait on."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Event] = {}
        self._said: set[str] = set()  # the wait is logged once per channel

    def hold(self, names: Iterable[str]) -> None:
        """These channels are about to start: their chat workers wait until ``started``."""
        for name in names:
            self._pending.setdefault(name, asyncio.Event())

    def started(self, name: str) -> None:
        """The channel started: replies to its chats may go out."""
        event = self._pending.pop(name, None)
        if event is not None:
            event.set()

    async def wait(self, name: str) -> None:
        """Return once the channel ``name`` may be sent to (at once unless it is held and not started)."""
        event = self._pending.get(name)
        if event is None:
            return
        if name not in self._said:
            self._said.add(name)
            log.info("[gateway] %s is not started yet: its waiting messages are answered once it is", name)
        await event.wait()
