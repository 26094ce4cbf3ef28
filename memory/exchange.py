"""One exchange of a conversation kept at once: the person's words and the reply, written after the model
answered to the chat's session (Tier 0), the conversation tier and the extraction buffer, with the owner's
extraction due time — one statement on PostgreSQL, one transaction on SQLite (``memory/store/exchange.py``;
issue 38, item 5).

Until this write the message's unanswered inbox row is its only record (gateway/inbox.py): a process
killed while the model answers leaves nothing half-written, and the message is answered once after the
restart. A message that gets no reply from the model (it failed, the reply was cancelled, the offline
stand-in answered) keeps the person's words alone, in the same one write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.clock import to_db, utcnow
from memory.conversation import ConversationLog
from memory.pipeline.extraction import ExtractionService
from memory.send_intent import intent_for
from memory.sessions import SessionStore
from memory.store.exchange import Exchange, ExchangeTurn
from memory.store.protocol import MemoryStore
from memory.text.token_count import estimate_tokens
from memory.writes import check_owner


@dataclass(frozen=True, slots=True)
class Said:
    """One turn of the exchange: who said it (``user`` or ``assistant``) and what."""

    role: str
    content: str


class ExchangeKeeper:
    """Writes exchanges; ``extraction`` None (memory off): the chat's session alone."""

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
        """Keep the turns of one exchange of the chat ``channel:chat_id``, in order."""
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
            intent=intent_for(channel, chat_id),  # the reply's send intent, in the same write
        )
        settings = extraction.settings if extraction is not None else None
        due_now = await self._store.exchange.write(
            exchange,
            token_budget=settings.token_budget if settings else 0,
            quiet_gap_s=settings.quiet_gap if settings else 0.0,
        )
        await self._sessions.appended(chat_key, session, len(turns))
        if extraction is not None:
            extraction.buffered(due_now)
