"""The send intent of the reply being made, handed to the exchange write (issue 38, item 5).

Right before a reply is sent, its fence records the send intent, only while the sender still holds the
chat at its claim's generation (gateway/inbox.py, docs/scale-out.md "Fencing"). The exchange — the
person's words and the reply — is written just before that send (``memory/exchange.py``), so the intent
goes in the same statement: one round trip fewer a message. The process loop sets the claim's intent
around the handler (``intending``); a context variable carries it into the handler's task, where the
exchange write of the same chat records it and stamps ``asked_at``. The send's fence then trusts that
record only while it is fresh (gateway/inbox.py ``DurableInbox.fence``), else asks again.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from memory.store.chat_holds import SendIntent

_CURRENT: contextvars.ContextVar[SendIntent | None] = contextvars.ContextVar(
    "tierclaw_send_intent", default=None
)


@contextlib.contextmanager
def intending(intent: SendIntent | None) -> Iterator[None]:
    """The exchange written by the code run inside (and the tasks it starts) records ``intent``."""
    token = _CURRENT.set(intent)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def intent_for(channel: str, chat_id: str) -> SendIntent | None:
    """The send intent to record with an exchange of the chat ``channel:chat_id`` (None: none)."""
    intent = _CURRENT.get()
    if intent is None or (intent.channel, intent.chat_id) != (channel, chat_id):
        return None
    return intent
