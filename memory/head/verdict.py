"""The head's gate verdict on a message, from the query vector retrieval computes anyway."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from memory.head.asking import load_question
from memory.head.model import GATE_CLASSES, language, load_head
from memory.retrieval.gate import asks
from memory.retrieval.question import question_focus

if TYPE_CHECKING:
    import numpy as np

    from memory.vectors.usage import EmbeddingUse


class Verdict(NamedTuple):
    """What the head reads in one message's query vector."""

    wants: bool  # asks or tells about the person's own life: retrieval is worth its cost
    asks_own: bool  # asks about it: a memory that stands out may be shown
    asks: bool  # asks something at all: the rule's mark or question word, else the learned classifier


def message_asks(vector: np.ndarray, text: str) -> bool:
    """The rule (``gate.asks``: a question mark, a listed question word, 吗/呢) as the cheap first yes, then
    the learned question classifier (``asking.py``) on the query vector, when the head file has one: a
    question typed without its mark, in words no list holds, still asks."""
    if asks(text):
        return True
    question = load_question()
    return question is not None and question.asks(vector, text)


async def gate_verdict(embedding: EmbeddingUse, text: str) -> Verdict | None:
    """The head's verdict, or None when there is no query vector (no embedder, a failure, a timeout: the
    keyword rules decide then). The vector is the one ``Retriever.rank`` asks for next (the embedder's
    query cache serves it twice)."""
    vector = await embedding.query(question_focus(text))
    if vector is None:
        return None
    wants, asks_own = load_head().verdict(vector, text)  # one gate pass for both
    return Verdict(wants, asks_own, message_asks(vector, text))


async def gate_margin(embedding: EmbeddingUse, text: str) -> float | None:
    """``Head.gate_margin`` of the message's query vector (the one the gate read), or None without one."""
    vector = await embedding.query(question_focus(text))
    return None if vector is None else load_head().gate_margin(vector, text)


def reads_as_told(vector: np.ndarray, text: str) -> bool:
    """Whether the gate network of ``text``'s language reads its query vector as telling about the person's
    own life rather than asking about it or anything else ("tell" is its likeliest class). Round 46: the
    extraction's check of a sentence a rule reads as a question only from its first words
    (``quick_extract.worded_questions``); no threshold of its own, so nothing was tuned on a dev set."""
    probabilities = load_head().gate_for(language(text)).probabilities(vector)[0]
    return int(probabilities.argmax()) == GATE_CLASSES.index("tell")
