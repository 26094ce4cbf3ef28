"""The durable inbox: a message is stored in SQLite before the platform is told it arrived, and marked
answered when it has been (docs/architecture.md, "The path of one message").

A crash — even kill -9 — with a backlog loses nothing: the platform was only told about messages that
were stored, and at the next start the unanswered ones are answered first, each chat in order. A message
the platform delivers again after a crash (its update or event id already stored) is answered once.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta

from channels.base import InboundMessage
from channels.encodable import encodable_fields
from memory.clock import to_db, utcnow
from memory.store.protocol import MemoryStore

# Answered messages are kept this long, so that a platform's redelivery of them is still recognised
# (Feishu redelivers for hours; Telegram only what was never confirmed).
KEEP_ANSWERED = timedelta(hours=48)


class DurableInbox:
    """Accepted messages until they are answered, kept by the memory store (``memory/store/inbox.py``)."""

    def __init__(self, store: MemoryStore) -> None:
        self._rows = store.inbox

    async def accept(self, message: InboundMessage, now: datetime | None = None) -> InboundMessage | None:
        """Store ``message``; the stored copy (with its ``inbox_id``), or None for a redelivery.

        Text UTF-8 cannot encode (a lone surrogate) is stored, and answered, with U+FFFD in its place
        (``channels/encodable.py``): refused as it is, it would be refused at every redelivery."""
        message = encodable_fields(message)
        body = json.dumps(dataclasses.asdict(message), ensure_ascii=False)
        inbox_id = await self._rows.add(
            message.channel, message.chat_id, message.delivery_id, body, to_db(now or utcnow())
        )
        return None if inbox_id is None else dataclasses.replace(message, inbox_id=inbox_id)

    async def unanswered(self) -> list[InboundMessage]:
        """Every stored message not answered yet, oldest first (to answer at start, before new input)."""
        messages = []
        for inbox_id, body in await self._rows.pending():
            fields = json.loads(body)
            fields["inbox_id"] = inbox_id
            messages.append(InboundMessage(**fields))
        return messages

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
