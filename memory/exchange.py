"""One exchange of a conversation kept at once: the person's words and the reply, written once to the
conversation tier — which is also the chat's session (Tier 0: the turns carry its number) and the
extraction buffer — with the owner's extraction due time: one statement on PostgreSQL, one transaction on
SQLite (``memory/store/exchange.py``; issue 38, item 5). With memory off, to the session table alone.

Until this write the message's unanswered inbox row is its only record (gateway/inbox.py): a process
killed while the model answers leaves nothing half-written, and the message is answered once after the
restart. A message that gets no reply from the model (it failed, the reply was cancelled, the offline
stand-in answered) keeps the person's words alone, in the same one write.

When the message came through the durable inbox, the write waits for the reply to go out (``Later``, set
around the handler by the process loop: ``after_the_reply``) and goes in the statement that marks the
message answered and claims the chat's next one (``memory/store/chat_holds.py`` ``answered_then_next``):
two commits a message, the intake's and that one (docs/scale-out.md, "Two commits"). A reply a stalled
replica may no longer send is then never written either, and only the text sent enters the history.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field

from memory.clock import to_db, utcnow
from memory.conversation import ConversationLog
from memory.pipeline.extraction import ExtractionService
from memory.sessions import SessionStore
from memory.store.exchange import Exchange, ExchangeTurn, ExchangeWrite
from memory.store.protocol import MemoryStore
from memory.text.token_count import estimate_tokens
from memory.writes import check_owner

Written = Callable[[bool], Awaitable[None]]  # told once the exchange is written: extraction due now?


@dataclass(frozen=True, slots=True)
class Said:
    """One turn of the exchange: who said it (``user`` or ``assistant``) and what."""

    role: str
    content: str


@dataclass(slots=True)
class Later:
    """The exchange of one claimed message, kept back until its answered-mark (the process loop's): the
    chat it is for, the prepared write and what to tell once it ran. ``take`` closes it: an exchange kept
    after that (a handler cancelled past its deadline, still stopping) is written at once."""

    chat: tuple[str, str]
    write: ExchangeWrite | None = None
    after: Written | None = None
    closed: bool = False
    _taken: tuple[ExchangeWrite | None, Written | None] = field(default=(None, None))

    def holds(self, channel: str, chat_id: str) -> bool:
        """Whether an exchange of ``channel:chat_id`` may wait here (open, for that chat, empty)."""
        return not self.closed and self.write is None and self.chat == (channel, chat_id)

    def take(self) -> tuple[ExchangeWrite | None, Written | None]:
        """Close; the write and its follow-up (the same again when asked again: a retried mark)."""
        if not self.closed:
            self.closed, self._taken = True, (self.write, self.after)
        return self._taken


_LATER: contextvars.ContextVar[Later | None] = contextvars.ContextVar("tierclaw_exchange_later", default=None)


@contextlib.contextmanager
def after_the_reply(later: Later | None) -> Iterator[None]:
    """The exchange kept by the code run inside (and the tasks it starts) waits in ``later``."""
    token = _LATER.set(later)
    try:
        yield
    finally:
        _LATER.reset(token)


class ExchangeKeeper:
    """Writes exchanges; ``extraction`` None (memory off): the chat's session table alone."""

    def __init__(
        self,
        store: MemoryStore,
        sessions: SessionStore,
        conversation: ConversationLog,
        extraction: ExtractionService | None,
    ) -> None:
        self._store = store
        self._sessions = sessions
        self._conversation = conversation
        self._extraction = extraction

    async def keep(
        self, owner: str, *, channel: str, chat_id: str, sender_id: str, said: Sequence[Said]
    ) -> None:
        """Keep the turns of one exchange of the chat ``channel:chat_id``, in order: now, or with the
        message's answered-mark when the process loop keeps it back (``after_the_reply``)."""
        turns = [s for s in said if s.content]
        if not turns:
            return
        for s in turns:
            if s.role not in ("user", "assistant"):
                raise ValueError(f"role must be 'user' or 'assistant', got {s.role!r}")
        chat_key = f"{channel}:{chat_id}"
        extraction = self._extraction
        keep = extraction is not None
        if keep:
            check_owner(owner)
            texts = await self._conversation.index_texts(owner, channel, chat_id, [s.content for s in turns])
        else:
            texts = [""] * len(turns)
        session = await self._sessions.current(chat_key)
        exchange = Exchange(
            owner=owner,
            channel=channel,
            chat_id=chat_id,
            chat_key=chat_key,
            session=session,
            created_at=to_db(extraction.clock() if extraction is not None else utcnow()),
            turns=[
                ExchangeTurn(
                    s.role,
                    s.content,
                    sender_id if s.role == "user" else "",
                    text,
                    estimate_tokens(s.content),
                )
                for s, text in zip(turns, texts, strict=True)
            ],
            keep=keep,
        )
        settings = extraction.settings if extraction is not None else None
        prepared = self._store.exchange.prepare(
            exchange,
            token_budget=settings.token_budget if settings else 0,
            quiet_gap_s=settings.quiet_gap if settings else 0.0,
        )

        async def written(due_now: bool) -> None:
            await self._sessions.appended(chat_key, session, len(turns), own_table=not keep)
            if extraction is not None:
                extraction.buffered(due_now)

        async def written_with_the_mark(due_now: bool) -> None:
            self._store.exchange.written(prepared)
            await written(due_now)

        later = _LATER.get()
        if later is not None and later.holds(channel, chat_id):
            later.write, later.after = prepared, written_with_the_mark
            return
        await written(await self._store.exchange.run(prepared))

    async def write_kept_back(self) -> None:
        """Write now the exchange kept back for the answered-mark (before the reply goes out): for a step
        that must see it in the store first (the offline stand-in's promise to remember at once). Later
        exchanges of the message wait again."""
        later = _LATER.get()
        if later is None or later.closed or later.write is None:
            return
        prepared, after = later.write, later.after
        later.write, later.after = None, None
        due_now = await self._store.exchange.run(prepared)  # tells the store it was written
        if after is not None:
            await after(due_now)
