"""Tier 0: the recent messages of each chat, in the memory database so a restart keeps the conversation.

A chat (``channel:chat_id``) has a current session number; ``/new`` starts the next one, after which the
model no longer sees the old messages. With memory on a session's messages are the chat's kept turns with
its number (``memory/store/turn_sessions.py``): one table for the turn text, the conversation tier's, so
``/new`` deletes nothing and the history read's ``LIMIT`` (``KEEP_MESSAGES``) is the prune. With memory
off they go to the session table, where old sessions and all but the newest ``KEEP_MESSAGES`` of a session
are pruned so it stays small over months.

The current session number is cached per chat; a ``/new`` made by another process (another gateway
replica) reaches it through the store's change versions (``memory/store/changes.py``): that chat's
number is read again within half a second.

The history of the message being answered comes with its claim (``PrimedHistory``, set by the process
loop around the handler: ``primed``), so the reply path reads no history of its own (issue 38, item 5).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from memory.clock import to_db, utcnow
from memory.store import turn_sessions
from memory.store.protocol import SessionRowsAPI

# Messages of a chat session the history can show (the model sees at most ``history_messages`` of them).
KEEP_MESSAGES = turn_sessions.KEEP_MESSAGES
# Prune a chat every this many appended messages.
PRUNE_EVERY = 50


@dataclass(slots=True)
class PrimedHistory:
    """A chat's last messages as its claim read them (gateway/inbox.py; issue 38, item 5): the history of
    the message being answered, with no read of its own. Good until the chat's session is written to."""

    chat_key: str
    session: int
    limit: int  # how many were asked for: fewer came back when the session holds fewer
    newest_first: list[tuple[str, str]]
    spent: bool = False  # the session was written to since: read it again


_PRIMED: contextvars.ContextVar[PrimedHistory | None] = contextvars.ContextVar(
    "tierclaw_primed_history", default=None
)


@contextlib.contextmanager
def primed(history: PrimedHistory | None) -> Iterator[None]:
    """``SessionStore.history`` called inside (and in the tasks it starts) serves ``history``."""
    token = _PRIMED.set(history)
    try:
        yield
    finally:
        _PRIMED.reset(token)


class SessionStore:
    """Per-chat conversation history, kept by the store (``memory/store/chat_sessions.py``)."""

    def __init__(self, rows: SessionRowsAPI) -> None:
        self._rows = rows  # the store's ``sessions``, handed over where the runtime is wired
        self._current: dict[str, int] = {}
        self._appends = 0
        rows.changes.listen("session", self._others_changed)

    def _others_changed(self, chat_key: str | None, _rows_delta: int) -> None:
        if chat_key is None:
            self._current.clear()
        else:
            self._current.pop(chat_key, None)

    async def current(self, chat_key: str) -> int:
        """The chat's current session number (1 for a chat never seen)."""
        await self._rows.changes.refresh()
        cached = self._current.get(chat_key)
        if cached is None:
            cached = self._current[chat_key] = await self._rows.current(chat_key) or 1
        return cached

    async def history(self, chat_key: str, limit: int) -> list[tuple[str, str]]:
        """The last ``limit`` messages of the chat's current session as (role, content), oldest first."""
        if limit <= 0:
            return []
        session = await self.current(chat_key)
        ready = _PRIMED.get()  # read with the claim; a /new elsewhere since changed the session: read again
        fits = ready is not None and not ready.spent and ready.limit >= limit
        if ready is not None and fits and (ready.chat_key, ready.session) == (chat_key, session):
            return list(reversed(ready.newest_first[:limit]))
        return list(reversed(await self._rows.recent(chat_key, session, limit)))

    async def append(self, chat_key: str, role: str, content: str, now: datetime | None = None) -> None:
        """Add one message to the chat's current session, in the session table (memory off; with memory
        on an exchange's turns carry the session: ``memory/exchange.py``)."""
        session = await self.current(chat_key)
        await self._rows.append(chat_key, session, role, content, to_db(now or utcnow()))
        await self.appended(chat_key, session, 1)

    async def appended(self, chat_key: str, session: int, count: int, *, own_table: bool = True) -> None:
        """``count`` messages were added to the chat's ``session`` (here, or with the rest of an exchange:
        ``memory/exchange.py``); ``own_table``: to the session table (memory off), where every
        ``PRUNE_EVERY`` the chat keeps only its newest — kept turns need no prune (the read's ``LIMIT``)."""
        _spend(chat_key)
        if not own_table:
            return
        before, self._appends = self._appends, self._appends + count
        if before // PRUNE_EVERY != self._appends // PRUNE_EVERY:
            await self._rows.keep_newest(chat_key, session, KEEP_MESSAGES)

    async def new_session(self, chat_key: str, now: datetime | None = None) -> int:
        """Start the next session of the chat; returns its number. Older sessions leave the history (their
        kept turns stay in the conversation tier; their rows in the session table go)."""
        await self._rows.changes.refresh(force=True)  # another replica's /new counts: one read, rare
        session = await self.current(chat_key) + 1
        await self._rows.start(chat_key, session, to_db(now or utcnow()))
        _spend(chat_key)
        self._current[chat_key] = session
        return session


def _spend(chat_key: str) -> None:
    """The chat's session was written to: a history primed for it is stale now."""
    ready = _PRIMED.get()
    if ready is not None and ready.chat_key == chat_key:
        ready.spent = True
