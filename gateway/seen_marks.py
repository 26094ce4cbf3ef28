"""A channel's dedup marks kept in the memory database: the ``SeenMarks`` the gateway hands a channel.

``channels/seen.py`` defines what a channel needs; this binds it to the store's ``seen`` table
(``memory/store/dedup_marks.py``) under the channel's name. Marks are kept 48 hours, as the Feishu
channel always kept them, and pruned at most once an hour (channels/README.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from channels.seen import RETENTION_SECONDS, Mark
from memory.clock import to_db, utcnow
from memory.store.protocol import SeenRowsAPI

PRUNE_EVERY = timedelta(hours=1)


class StoreSeenMarks:
    """``SeenMarks`` of one channel in the store's ``seen`` table."""

    def __init__(
        self,
        rows: SeenRowsAPI,
        channel: str,
        *,
        retention_seconds: float = RETENTION_SECONDS,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._rows = rows
        self.channel = channel
        self.retention = timedelta(seconds=retention_seconds)
        self._clock = clock
        self._last_prune: datetime | None = None

    async def seen_before(self, marks: Sequence[Mark]) -> bool:
        """Whether any of ``marks`` (empty keys ignored) is kept for this channel."""
        return await self._rows.any_of(self.channel, [m for m in marks if m[1]])

    async def mark(self, marks: Sequence[Mark]) -> None:
        """Record ``marks`` now; older marks than the retention are pruned now and then."""
        now = self._clock()
        if self._last_prune is None or now - self._last_prune >= PRUNE_EVERY:
            await self.prune()
        await self._rows.add(self.channel, [m for m in marks if m[1]], to_db(now))

    async def prune(self) -> int:
        """Forget marks older than the retention (every channel's: the table is shared); how many."""
        now = self._clock()
        self._last_prune = now
        return await self._rows.prune(to_db(now - self.retention))
