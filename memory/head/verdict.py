"""The head's gate verdict on a message, from the query vector retrieval computes anyway."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.head.model import load_head
from memory.retrieval.question import question_focus

if TYPE_CHECKING:
    from memory.vectors.usage import EmbeddingUse


async def gate_verdict(embedding: EmbeddingUse, text: str) -> tuple[bool, bool] | None:
    """(does the message ask or tell about the person's own life, does it ask about it), or None when
    there is no query vector (no embedder, a failure, a timeout: the keyword rules decide then). The
    vector is the one ``Retriever.rank`` asks for next (the embedder's query cache serves it twice)."""
    vector = await embedding.query(question_focus(text))
    if vector is None:
        return None
    head = load_head()
    return head.wants_memory(vector, text), head.asks_own(vector, text)
