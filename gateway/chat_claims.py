"""Where a chat worker of the process loop (gateway/loop.py) takes its chat's next message from, and
whether it may still send its reply.

With a durable inbox (``HeldChats``) the inbox is the queue, shared by every replica on the database
(docs/scale-out.md, "The message path"): a replica works a chat only while it holds it, takes the chat's
unanswered messages in the platform's order whoever stored them (a message younger than the reorder
window waits for an earlier one still on its way), sends a reply only while its claim's generation is
current (``fence``, right before the send), writes the message's exchange with its answered-mark after
the send (``answering`` keeps it back: ``memory/exchange.py``) and lets go only when none is left — in
the one statement that checks, so a message another replica stores meanwhile is never stranded. Without
an inbox (``LocalChats``, some tests) the queue is this process's memory, with the same steps, and the
exchange is written when the handler keeps it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
from collections.abc import Iterator
from typing import Protocol

from channels.base import InboundMessage
from gateway.inbox import Chat, Claimed, DurableInbox
from memory.exchange import Later, after_the_reply
from memory.sessions import primed


class Release(enum.Enum):
    """What became of a worker's attempt to let its chat go."""

    RELEASED = "released"  # nothing left: the chat is nobody's
    WAITING = "waiting"  # a message is waiting: keep working
    LOST = "lost"  # another replica holds it now (this one's lease ran out): stop


class ChatQueues(Protocol):
    """The steps of a chat worker's life (``ProcessLoop``)."""

    async def offer(
        self,
        message: InboundMessage,
        *,
        working: bool,
        held: bool | None = None,
        claimed: Claimed | float | None = None,
    ) -> bool:
        """A stored message arrived: whether this process may work its chat now (it holds it);
        ``working``: a worker of this process is on the chat already (it finds the message itself);
        ``held``: whether the message's intake took the chat's hold (None: it did not try); ``claimed``:
        the message's intake claimed it too (the chat's new worker starts with it), or found the seconds
        it has to settle first (the worker waits them before its first claim)."""
        ...

    async def take(self, chat: Chat) -> bool:
        """Hold the chat again (after a release raced a new message)."""
        ...

    def taking_in(self, chat: Chat) -> contextlib.AbstractContextManager[None]:
        """Around a message's intake and ``offer``: the chat's worker claims nothing meanwhile."""
        ...

    def handed(self, chat: Chat) -> bool:
        """Whether an intake claimed the chat's next message for its worker, not taken up yet."""
        ...

    async def next(self, chat: Chat) -> Claimed | None:
        """The chat's next message to answer (claimed); None: none."""
        ...

    def answering(self, claim: Claimed) -> contextlib.AbstractContextManager[None]:
        """Around the claim's handler: its exchange kept back for the answered-mark
        (``memory/exchange.py``), and the history read with the claim (``memory/sessions.py``)."""
        ...

    async def fence(self, claim: Claimed) -> bool:
        """Right before the claim's reply is sent: may it still be?"""
        ...

    async def answered(self, claim: Claimed, send_error: str | None) -> bool:
        """Its answer went out: mark it, with its exchange; False when the chat changed hands meanwhile."""
        ...

    def not_sent(self, claim: Claimed) -> None:
        """Its answer was not sent (the chat changed hands): its exchange is never written here."""
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

    async def offer(
        self,
        message: InboundMessage,
        *,
        working: bool,
        held: bool | None = None,
        claimed: Claimed | float | None = None,
    ) -> bool:
        self._queues.setdefault((message.channel, message.chat_id), collections.deque()).append(message)
        return True

    async def take(self, chat: Chat) -> bool:
        return True

    def taking_in(self, chat: Chat) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def handed(self, chat: Chat) -> bool:
        return False

    async def next(self, chat: Chat) -> Claimed | None:
        queue = self._queues.get(chat)
        return Claimed(queue.popleft()) if queue else None

    def answering(self, claim: Claimed) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    async def fence(self, claim: Claimed) -> bool:
        return True

    async def answered(self, claim: Claimed, send_error: str | None) -> bool:
        return True

    def not_sent(self, claim: Claimed) -> None:
        return None

    async def release(self, chat: Chat) -> Release:
        if self._queues.get(chat):
            return Release.WAITING
        self._queues.pop(chat, None)
        return Release.RELEASED


class HeldChats:
    """Chats held in the database (``chat_holds``), their messages claimed from the inbox."""

    def __init__(self, inbox: DurableInbox) -> None:
        self.inbox = inbox
        self._settling = 0  # workers waiting out the reorder window with a message to claim
        # What the answered-mark of each chat's last message found next (it claims the next message, or
        # lets the chat go, in the same statement): the worker's next ``next`` / ``release`` use it.
        self._after: dict[Chat, Claimed | float | None] = {}
        self._released: set[Chat] = set()
        self._offered: set[Chat] = set()  # chats a message was offered for since their last answered-mark
        self._later: dict[Chat, Later] = {}  # each chat's exchange kept back for its answered-mark
        # What an intake claimed (or found to settle) for a chat whose worker here was still on it: the
        # worker's next message (``offer``); and the intakes of each chat on their way (``taking_in``).
        self._handed: dict[Chat, Claimed | float] = {}
        self._taking_in: dict[Chat, tuple[int, asyncio.Event]] = {}  # how many, set when none is left

    @property
    def queued(self) -> int:
        """Messages about to be claimed here (the others wait in the database)."""
        return self._settling

    async def offer(
        self,
        message: InboundMessage,
        *,
        working: bool,
        held: bool | None = None,
        claimed: Claimed | float | None = None,
    ) -> bool:
        # A worker on the chat holds it (renewed by the loop) and claims from the inbox, where the message
        # is: no round trip. Should its release have raced the message, it sees the loop's nudge and
        # takes the hold again (ProcessLoop._chat_worker). ``held``: the message's intake took the hold
        # already (``DurableInbox.accept_and_hold``), or found another replica holding the chat;
        # ``claimed``: it claimed the message as well, the new worker's first (a worker already here
        # claims it again itself: a claim writes nothing, the holder's claim is the hold's generation),
        # or the seconds the message has to settle (the new worker waits them, then claims).
        chat = (message.channel, message.chat_id)
        if working:
            self._offered.add(chat)
            if held and claimed is not None:  # its last message was answered and the chat let go meanwhile
                self._handed[chat] = claimed
            return True
        if held is not None:
            self.forget(chat)
            if held and claimed is not None:
                self._after[chat] = claimed
            return held
        return await self.take(chat)

    async def take(self, chat: Chat) -> bool:
        self.forget(chat)  # a new worker starts from the database, not from an old worker's last mark
        return await self.inbox.hold(chat)

    def forget(self, chat: Chat) -> None:
        """Drop what a previous worker's last answered-mark found (a new worker asks the database)."""
        self._after.pop(chat, None)
        self._released.discard(chat)
        self._drop_later(chat)
        self._offered.discard(chat)

    @contextlib.contextmanager
    def taking_in(self, chat: Chat) -> Iterator[None]:
        count, done = self._taking_in.get(chat, (0, asyncio.Event()))
        self._taking_in[chat] = (count + 1, done)
        try:
            yield
        finally:
            count, done = self._taking_in.pop(chat)
            if count > 1:
                self._taking_in[chat] = (count - 1, done)
            else:
                done.set()

    def handed(self, chat: Chat) -> bool:
        return chat in self._handed

    async def next(self, chat: Chat) -> Claimed | None:
        while (taking := self._taking_in.get(chat)) is not None:  # an intake may claim for this worker
            await taking[1].wait()
        if chat in self._handed:  # the intake's claim is the next message (the answered step found none)
            self._after[chat] = self._handed.pop(chat)
            self._released.discard(chat)
            self._offered.discard(chat)
        found = chat in self._after
        claimed = self._after.pop(chat, None)
        while True:
            if not found:
                claimed = await self.inbox.next_message(chat)
            found = False
            if not isinstance(claimed, float):
                return claimed
            self._settling += 1
            try:
                await asyncio.sleep(claimed)  # the reorder window: an earlier message may be on its way
            finally:
                self._settling -= 1

    @contextlib.contextmanager
    def answering(self, claim: Claimed) -> Iterator[None]:
        self._drop_later(claim.chat)
        later = self._later[claim.chat] = Later(claim.chat)  # one message of a chat is answered at a time
        with after_the_reply(later), primed(claim.history):
            yield

    async def fence(self, claim: Claimed) -> bool:
        return await self.inbox.fence(claim)

    async def answered(self, claim: Claimed, send_error: str | None) -> bool:
        self._offered.discard(claim.chat)
        later = self._later.get(claim.chat)
        write, written = later.take() if later is not None else (None, None)  # the same when retried
        marked, following, released, due_now = await self.inbox.answered_then_next(claim, send_error, write)
        if self._later.get(claim.chat) is later:
            self._later.pop(claim.chat, None)
        if written is not None and marked:  # in the store (this step's, or a retried step's first commit)
            await written(due_now)
        if marked:
            self._after[claim.chat] = following
            if released:
                self._released.add(claim.chat)
        return marked

    def not_sent(self, claim: Claimed) -> None:
        self._drop_later(claim.chat)

    def _drop_later(self, chat: Chat) -> None:
        """Forget the chat's exchange kept back (its reply was not sent): closed, so a handler still
        stopping writes what it keeps at once."""
        later = self._later.pop(chat, None)
        if later is not None:
            later.take()

    async def release(self, chat: Chat) -> Release:
        if chat in self._released:  # the answered-mark let it go already
            self._released.discard(chat)
            if chat not in self._offered:
                return Release.RELEASED
            # A message came after the mark let the chat go (its worker was still here, so it took no
            # hold): hold the chat again and answer it — or its new holder does.
            self._offered.discard(chat)
            return Release.WAITING if await self.take(chat) else Release.RELEASED
        if await self.inbox.release(chat):
            return Release.RELEASED
        return Release.WAITING if await self.inbox.holds(chat) else Release.LOST
