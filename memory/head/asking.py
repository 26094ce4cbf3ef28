"""Whether a message ASKS, learned (issue 35 item 3, round 12): a small classifier on the query vector the
gateway computes anyway, beside the rule ``memory.retrieval.gate.asks`` (a question mark, a listed
question word, 吗/呢 at the end).

The rule stays the cheap first yes and the keyword-only fallback; the classifier answers when the rule
says no, so a question typed without its mark and with a question word of a register no list holds
("我屋里的狗叫么子名字", "where does my sister work again") still reaches the head's gate verdict. It was
trained on texts whose question marks were removed (``asking_training.py``; DATA_CARD "Round 12, gate"),
so it reads the words, not the mark.

Stored in ``head.npz`` as arrays of their own — ``question_<part>`` (an ensemble as ``model.Classifier``
stores it), ``question_thresholds`` (one log-odds threshold per language of ``LANGUAGES``) and
``question_meta`` — so the keep, gate and category arrays are untouched; a head file without them has no
learned "asks" (``load_question`` gives None and the rule alone decides).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from memory.head.model import LANGUAGES, Classifier, head_path, keep_odds, language, open_head

NAME = "question"
# The question arrays' version: 2026.12-12g (round 12) until round 32's retrain with the head's gate rows
# (``asking_training --head-flags``, DATA_CARD "Round 32").
VERSION = "2026.12-32q"


@dataclass(frozen=True, slots=True)
class QuestionHead:
    """The question classifier (classes: 0 does not ask, 1 asks) and its per-language thresholds."""

    classifier: Classifier
    thresholds: dict[str, float]
    meta: dict[str, Any]

    def score(self, query: np.ndarray) -> float:
        """Log-odds that the message asks something, averaged over the ensemble's members."""
        return float(keep_odds(self.classifier.logits(query)[:, 0, :]).mean())

    def asks(self, query: np.ndarray, text: str) -> bool:
        """The message (its query vector) asks something, mark or no mark."""
        return self.score(query) >= self.thresholds[language(text)]


def read_question(data: Any) -> QuestionHead | None:
    """The question classifier of an opened head file, or None when the file has none."""
    if f"{NAME}_w1" not in data:
        return None
    rows = np.asarray(data[f"{NAME}_thresholds"], dtype=np.float64).reshape(len(LANGUAGES))
    return QuestionHead(
        classifier=Classifier.read(data, NAME),
        thresholds={lang: float(t) for lang, t in zip(LANGUAGES, rows, strict=True)},
        meta=json.loads(str(data[f"{NAME}_meta"])),
    )


@cache
def load_question() -> QuestionHead | None:
    """The shipped question classifier (``head.npz`` beside this module), read once per process."""
    with open_head(head_path()) as data:
        return read_question(data)
