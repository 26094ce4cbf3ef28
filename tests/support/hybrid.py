"""What the hybrid retrieval tests share: the embedding time bound they allow, two memories about a pet, and
small reads (hit ids, memories still without a vector, whether a query shares a term with a memory)."""

from __future__ import annotations

from collections.abc import Sequence

from memory.engine import MemoryEngine
from memory.records import Retrieved
from memory.text import tokenizer

# The embedding model may load on the first query (cold file cache on a busy machine): the tests that are
# not about the timeout give it plenty of time, so a slow CI box never turns them into keyword-only runs.
GENEROUS_TIMEOUT = 60.0

PET_EN = "Adopted a golden retriever puppy last spring"
PET_ZH = "养了一只金毛犬"


def ids(hits: Sequence[Retrieved]) -> list[int]:
    return [h.id for h in hits]


async def missing_ids(engine: MemoryEngine, model_key: str, owner: str | None = None) -> set[int]:
    return {i for i, _, _ in await engine.vectors.missing_embeddings(model_key, owner=owner)}


def shares_no_term(query: str, memory: str) -> bool:
    return not set(tokenizer.query_terms(query)) & set(tokenizer.index_text(memory).split())
