"""The durable inbox: a message is stored in SQLite before the platform is told it arrived, and marked
answered when it has been (docs/architecture.md, "The path of one message").

A crash — even kill -9 — with a backlog loses nothing: the platform was only told about messages that
were stored, and at the next start the unanswered ones are answered first, each chat in order. A message
the platform delivers again after a crash (its update or event id already stored) is answered once.

With several gateways on one database (docs/scale-out.md) each stored message is leased to the replica
that took it in (``replica``, ``lease``); the replica renews its leases while it runs (``renew``) and
the answer ends the lease. A starting replica claims only messages nobody holds (``claim_waiting``), and
every replica takes over, now and then, the messages whose lease ran out (their replica died).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime, timedelta

from channels.base import InboundMessage
from channels.encodable import encodable_fields
from memory.clock import to_db, utcnow
from memory.store.protocol import MemoryStore

# Answered messages are kept this long, so that a platform's redelivery of them is still recognised
# (Feishu redelivers for hours; Telegram only what was never confirmed).
KEEP_ANSWERED = timedelta(hours=48)
# How long a replica's hold on a message lasts without renewal: it renews every third of it, so only a
# replica that stopped (killed, frozen, cut off from the database) loses its messages to another.
INBOX_LEASE = timedelta(seconds=30)


class DurableInbox:
    """Accepted messages until they are answered, kept by the memory store (``memory/store/inbox.py``)."""

    def __init__(self, store: MemoryStore, replica: str = "local", lease: timedelta = INBOX_LEASE) -> None:
        self._rows = store.inbox
        self.replica = replica  # gateway.replicaId (gateway/replica.py)
        self.lease = lease

    async def accept(self, message: InboundMessage, now: datetime | None = None) -> InboundMessage | None:
        """Store ``message``; the stored copy (with its ``inbox_id``), or None for a redelivery.

        Text UTF-8 cannot encode (a lone surrogate) is stored, and answered, with U+FFFD in its place
        (``channels/encodable.py``): refused as it is, it would be refused at every redelivery."""
        message = encodable_fields(message)
        body = json.dumps(dataclasses.asdict(message), ensure_ascii=False)
        now = now or utcnow()
        inbox_id = await self._rows.add(
            message.channel,
            message.chat_id,
            message.delivery_id,
            body,
            to_db(now),
            self.replica,
            to_db(now + self.lease),
        )
        return None if inbox_id is None else dataclasses.replace(message, inbox_id=inbox_id)

    async def unanswered(self) -> list[InboundMessage]:
        """Every stored message not answered yet, oldest first (to answer at start, before new input)."""
        return [_message(inbox_id, body) for inbox_id, body in await self._rows.pending()]

    async def claim_waiting(
        self, channels: Sequence[str], *, at_start: bool, every: bool = False, now: datetime | None = None
    ) -> list[tuple[InboundMessage, str | None]]:
        """Lease to this replica the unanswered messages of ``channels`` nobody holds, oldest first, each
        with the replica that held it before (None: nobody). ``at_start``: also this replica id's own
        (a restart under a fixed ``gateway.replicaId``); ``every``: all, whatever their lease (SQLite:
        one gateway owns the file, so nobody else can be answering them)."""
        now = now or utcnow()
        rows = await self._rows.claim(
            channels, self.replica, to_db(now), to_db(now + self.lease), own=at_start, every=every
        )
        return [(_message(inbox_id, body), holder) for inbox_id, body, holder in rows]

    async def renew(self, now: datetime | None = None) -> int:
        """Extend this replica's leases on its unanswered messages; how many it holds."""
        return await self._rows.renew(self.replica, to_db((now or utcnow()) + self.lease))

    async def answered(
        self, message: InboundMessage, send_error: str | None = None, now: datetime | None = None
    ) -> None:
        """Mark ``message`` answered (a message never stored is ignored; marking twice is harmless);
        ``send_error`` says why its reply could not be sent (``tierclaw status`` counts them)."""
        if message.inbox_id:
            await self._rows.answer(message.inbox_id, to_db(now or utcnow()), send_error)

    async def unsent_recently(self, now: datetime | None = None) -> int:
        """Replies that could not be sent in the last ``KEEP_ANSWERED``."""
        return await self._rows.unsent(to_db((now or utcnow()) - KEEP_ANSWERED))

    async def prune(self, now: datetime | None = None) -> int:
        """Forget messages answered more than ``KEEP_ANSWERED`` ago."""
        return await self._rows.prune(to_db((now or utcnow()) - KEEP_ANSWERED))


def _message(inbox_id: int, body: str) -> InboundMessage:
    fields = json.loads(body)
    fields["inbox_id"] = inbox_id
    return InboundMessage(**fields)
