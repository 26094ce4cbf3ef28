"""Whose turn it is to poll: Telegram allows one ``getUpdates`` consumer per bot (a second gets 409), so
with several gateway replicas exactly one polls.

The channel is handed ``may_poll`` (an async "may I poll now?") by whoever runs it — the gateway backs it
with a lock in the database (docs/scale-out.md, "Channels"); channels/ never imports the gateway or the
store. Without one, this process always polls. Asked before every ``getUpdates``: a replica that lost the
lock stops after its current long poll, one that stands by asks again every ``standby_seconds``, so it
takes over within that time once the holder is gone. An update both fetched around a hand-over is
stored once: the inbox dedups by update id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from channels.telegram.failures import pause

log = logging.getLogger("tierclaw.channels")

MayPoll = Callable[[], Awaitable[bool]]


class PollTurn:
    """Asks ``may_poll`` before each poll and waits while another process polls; logs each change."""

    def __init__(self, may_poll: MayPoll | None, standby_seconds: float) -> None:
        self.may_poll = may_poll
        self.standby_seconds = standby_seconds
        self.standing_by = False

    async def mine(self, stopped: asyncio.Event) -> bool:
        """True when this process may poll now; otherwise waits ``standby_seconds`` (less when
        ``stopped`` is set) and returns False, so the caller asks again."""
        if self.may_poll is None:
            return True
        try:
            allowed = await self.may_poll()
        except Exception as exc:  # the lock's database is away: stand by, as if another polled
            log.warning("[telegram] cannot tell whether this replica may poll: %s", type(exc).__name__)
            allowed = False
        if allowed:
            if self.standing_by:
                log.info("[telegram] this replica polls now")
            self.standing_by = False
            return True
        if not self.standing_by:
            log.info("[telegram] another replica polls for this bot; standing by")
        self.standing_by = True
        await pause(stopped, self.standby_seconds)
        return False
