"""The durable inbox: a message is stored in SQLite before the platform is told it arrived, and marked
answered when it has been (docs/architecture.md, "The path of one message").

A crash — even kill -9 — with a backlog loses nothing: the platform was only told about messages that
were stored, and at the next start the unanswered ones are answered first, each chat in order. A message
the platform delivers again after a crash (its update or event id already stored) is answered once.

With several gateways on one database (docs/scale-out.md, "The message path") the inbox is the queue:
whichever replica stored a message, the replica holding its chat (``hold``, leased for ``lease`` and
renewed while it works the chat) claims the chat's messages oldest first (``next_message``) and drops
the hold only when none is left (``release``); chats with waiting messages and no live hold (their
replica died) are taken over by any replica (``take_waiting``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime, timedelta

from channels.base import InboundMessage
from channels.encodable import encodable_fields
from channels.media import MediaRef
from memory.clock import from_db, to_db, utcnow
from memory.store.protocol import MemoryStore

# Answered messages are kept this long, so that a platform's redelivery of them is still recognised
# (Feishu redelivers for hours; Telegram only what was never confirmed).
KEEP_ANSWERED = timedelta(hours=48)
# How long a replica's hold on a chat lasts without renewal: it renews every third of it, so only a
# replica that stopped (killed, frozen, cut off from the database) loses its chats to another.
INBOX_LEASE = timedelta(seconds=30)
Chat = tuple[str, str]  # (channel, chat_id): what a hold is on


class DurableInbox:
    """Accepted messages until they are answered, kept by the memory store (``memory/store/inbox.py``)."""

    def __init__(self, store: MemoryStore, replica: str = "local", lease: timedelta = INBOX_LEASE) -> None:
        self._rows = store.inbox
        self._holds = store.chat_holds
        self.replica = replica  # gateway.replicaId (gateway/replica.py)
        self.lease = lease

    async def accept(self, message: InboundMessage, now: datetime | None = None) -> InboundMessage | None:
        """Store ``message``; the stored copy (with its ``inbox_id``), or None for a redelivery.

        Text UTF-8 cannot encode (a lone surrogate) is stored, and answered, with U+FFFD in its place
        (``channels/encodable.py``): refused as it is, it would be refused at every redelivery."""
        message = encodable_fields(message)
        fields = dataclasses.asdict(message)
        media = fields.pop("media")  # in a column of its own: what waits to be downloaded is visible
        body = json.dumps(fields, ensure_ascii=False)
        inbox_id = await self._rows.add(
            message.channel,
            message.chat_id,
            message.delivery_id,
            body,
            to_db(now or utcnow()),
            json.dumps(media, ensure_ascii=False) if media else "",
        )
        return None if inbox_id is None else dataclasses.replace(message, inbox_id=inbox_id)

    async def unanswered(self) -> list[InboundMessage]:
        """Every stored message not answered yet, oldest first."""
        return [_message(inbox_id, body, media) for inbox_id, body, media in await self._rows.pending()]

    async def hold(self, chat: Chat, *, force: bool = False, now: datetime | None = None) -> bool:
        """Hold the chat for this replica (nobody held it, its holder's lease ran out, or it is this
        replica's already); False while another live replica holds it. ``force``: whatever the lease."""
        now = now or utcnow()
        return await self._holds.take(*chat, self.replica, to_db(now), to_db(now + self.lease), force=force)

    async def next_message(
        self, chat: Chat, now: datetime | None = None
    ) -> tuple[InboundMessage, datetime] | None:
        """Claim the held chat's oldest unanswered message, with when it was stored; None when there is
        none left or this replica no longer holds the chat."""
        claimed = await self._holds.next_message(*chat, self.replica, to_db((now or utcnow()) + self.lease))
        if claimed is None:
            return None
        inbox_id, body, received_at, media = claimed
        return _message(inbox_id, body, media), from_db(received_at)

    async def release(self, chat: Chat) -> bool:
        """Drop this replica's hold on the chat, only if nothing of it is left unanswered."""
        return await self._holds.release(*chat, self.replica)

    async def holds(self, chat: Chat) -> bool:
        """Whether this replica holds the chat."""
        return await self._holds.holder(*chat) == self.replica

    async def renew(self, chats: Sequence[Chat], now: datetime | None = None) -> int:
        """Extend this replica's holds on ``chats`` (the ones it is working); how many it still holds."""
        return await self._holds.renew(self.replica, list(chats), to_db((now or utcnow()) + self.lease))

    async def take_waiting(
        self, channels: Sequence[str], *, own: bool = False, every: bool = False, now: datetime | None = None
    ) -> list[tuple[Chat, str | None]]:
        """Hold the chats of ``channels`` that have unanswered messages and no live hold (their replica
        died, or none ever held them), each with its previous holder (None: nobody). ``own``: also this
        replica id's live holds (a restart under the same id); ``every``: whatever their lease (SQLite at
        start: one gateway owns the file, so nobody else can be answering)."""
        now = now or utcnow()
        taken = await self._holds.take_waiting(
            channels, self.replica, to_db(now), to_db(now + self.lease), own=own, every=every
        )
        return [((channel, chat_id), previous) for channel, chat_id, previous in taken]

    async def drop_holds(self) -> int:
        """Drop every hold of this replica (it stops; what is left goes to another replica's sweep)."""
        return await self._holds.drop(self.replica)

    async def answered(
        self, message: InboundMessage, send_error: str | None = None, now: datetime | None = None
    ) -> None:
        """Mark ``message`` answered (a message never stored is ignored; marking twice is harmless);
        ``send_error`` says why its reply could not be sent (``tierclaw status`` counts them)."""
        if message.inbox_id:
            await self._rows.answer(message.inbox_id, to_db(now or utcnow()), send_error)

    async def remember_reply(self, message: InboundMessage, handle: str) -> None:
        """Keep where the streamed reply to ``message`` is being written (gateway/streaming.py)."""
        if message.inbox_id:
            await self._rows.set_reply_handle(message.inbox_id, handle)

    async def reply_handle(self, message: InboundMessage) -> str:
        """What ``remember_reply`` kept for ``message`` ("" when nothing)."""
        return await self._rows.reply_handle(message.inbox_id) if message.inbox_id else ""

    async def unsent_recently(self, now: datetime | None = None) -> int:
        """Replies that could not be sent in the last ``KEEP_ANSWERED``."""
        return await self._rows.unsent(to_db((now or utcnow()) - KEEP_ANSWERED))

    async def prune(self, now: datetime | None = None) -> int:
        """Forget messages answered more than ``KEEP_ANSWERED`` ago, and holds of dead replicas on chats
        with nothing left to answer."""
        now = now or utcnow()
        await self._holds.prune(to_db(now))
        return await self._rows.prune(to_db(now - KEEP_ANSWERED))


def _message(inbox_id: int, body: str, media: str = "") -> InboundMessage:
    fields = json.loads(body)
    fields["inbox_id"] = inbox_id
    fields.pop("media", None)
    refs = tuple(MediaRef(**ref) for ref in json.loads(media)) if media else ()
    return InboundMessage(**fields, media=refs)
