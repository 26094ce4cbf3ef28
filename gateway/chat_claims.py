"""Where a chat worker of the process loop (gateway/loop.py) takes its chat's next message from.

With a durable inbox (``HeldChats``) the inbox is the queue, shared by every replica on the database
(docs/scale-out.md, "The message path"): a replica works a chat only while it holds it, takes the chat's
unanswered messages oldest first whoever stored them, and lets go only when none is left — in the one
statement that checks, so a message another replica stores meanwhile is never stranded. Without an inbox
(``LocalChats``, some tests) the queue is this process's memory, with the same four steps.
"""

from __future__ import annotations

import collections
import enum
from datetime import datetime
from typing import Protocol

from channels.base import InboundMessage
from gateway.inbox import Chat, DurableInbox


class Release(enum.Enum):
    """What became of a worker's attempt to let its chat go."""

    RELEASED = "released"  # nothing left: the chat is nobody's
    WAITING = "waiting"  # a message is waiting: keep working
    LOST = "lost"  # another replica holds it now (this one's lease ran out): stop


class ChatQueues(Protocol):
    """The four steps of a chat worker's life (``ProcessLoop``)."""

    async def offer(self, message: InboundMessage, *, working: bool) -> bool:
        """A stored message arrived: whether this process may work its chat now (it holds it);
        ``working``: a worker of this process is on the chat already (it finds the message itself)."""
        ...

    async def take(self, chat: Chat) -> bool:
        """Hold the chat again (after a release raced a new message)."""
        ...

    async def next(self, chat: Chat) -> tuple[InboundMessage, datetime | None] | None:
        """The chat's next message to answer (claimed), with when it was stored if known; None: none."""
        ...

    async def release(self, chat: Chat) -> Release:
        """Let the chat go if nothing of it is waiting."""
        ...


class LocalChats:
    """Each chat's messages in this process's memory, in arrival order (a loop without an inbox)."""

    def __init__(self) -> None:
        self._queues: dict[Chat, collections.deque[InboundMessage]] = {}

    @property
    def queued(self) -> int:
        """Messages waiting for their chat's worker."""
        return sum(len(q) for q in self._queues.values())

    async def offer(self, message: InboundMessage, *, working: bool) -> bool:
        self._queues.setdefault((message.channel, message.chat_id), collections.deque()).append(message)
        return True

    async def take(self, chat: Chat) -> bool:
        return True

    async def next(self, chat: Chat) -> tuple[InboundMessage, datetime | None] | None:
        queue = self._queues.get(chat)
        return (queue.popleft(), None) if queue else None

    async def release(self, chat: Chat) -> Release:
        if self._queues.get(chat):
            return Release.WAITING
        self._queues.pop(chat, None)
        return Release.RELEASED


class HeldChats:
    """Chats held in the database (``chat_holds``), their messages claimed from the inbox."""

    queued = 0  # the waiting messages are in the database, not here

    def __init__(self, inbox: DurableInbox) -> None:
        self.inbox = inbox

    async def offer(self, message: InboundMessage, *, working: bool) -> bool:
        # A worker on the chat holds it (renewed by the loop) and claims from the inbox, where the message
        # is: no round trip. Should its release have raced the message, it sees the loop's nudge and
        # takes the hold again (ProcessLoop._chat_worker).
        return working or await self.inbox.hold((message.channel, message.chat_id))

    async def take(self, chat: Chat) -> bool:
        return await self.inbox.hold(chat)

    async def next(self, chat: Chat) -> tuple[InboundMessage, datetime | None] | None:
        return await self.inbox.next_message(chat)

    async def release(self, chat: Chat) -> Release:
        if await self.inbox.release(chat):
            return Release.RELEASED
        return Release.WAITING if await self.inbox.holds(chat) else Release.LOST
