"""Exchanges for the store contract tests, in the chat telegram:42, as the gateway writes them."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.exchange import Exchange, ExchangeTurn
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"


def exchange(
    owner: str, said: Sequence[tuple[str, str]], *, keep: bool = True, tokens: int = 4, at: str = T0
) -> Exchange:
    """The (role, text) turns ``said`` at ``at`` (the person is sender 7; each turn ``tokens`` tokens);
    ``keep`` False: memory off."""
    return Exchange(
        owner=owner,
        channel="telegram",
        chat_id="42",
        chat_key="telegram:42",
        session=1,
        created_at=at,
        turns=[
            ExchangeTurn(role, text, "7" if role == "user" else "", tokenizer.index_text(text), tokens)
            for role, text in said
        ],
        keep=keep,
    )


def alternating(owner: str, *texts: str, tokens: int = 4, at: str = T0) -> Exchange:
    """``texts`` said in turn, the person first."""
    said = [("user" if n % 2 == 0 else "assistant", text) for n, text in enumerate(texts)]
    return exchange(owner, said, tokens=tokens, at=at)
