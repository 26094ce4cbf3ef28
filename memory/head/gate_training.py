"""The gate network's training rows and fit (issue 35): which examples the gate sees, how much each kind
of row weighs in its loss, and the cross-fitted ensemble (moved here from ``train.py`` in round 15 so the
trainer stays one idea).

Why weights by source (round 15, DATA_CARD "Round 15, gate"): round 14's composed long messages
(``prodrop.long_messages``, ``gate-long-<lang>``: 500 "tell" a language) taught the gate voice-like tells,
but among the "tell" rows they outweighed the short plain statements (300 persona lines a language, the
written ones), and the gate forgot that "My birthday is on 14 July." tells: the older dev sets' English
tells fell. ``SOURCE_WEIGHTS`` shares each class's weight among its rows by source (``calibrate.
shared_by``): the classes weigh what they did; inside one, a row of a weighted source counts that much.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from memory.head.calibrate import cross_fit, member
from memory.head.category_training import balanced
from memory.head.corpus import Example
from memory.head.model import GATE_CLASSES, Classifier

# Rows of each source the gate head is trained on (the rest: all of them).
GATE_ROWS_PER_SOURCE = {
    "lccc-train-clauses": 0,
    "dailydialog-train-clauses": 0,
    # Round 31 (told_lines.relabel): a fact line dropped, and the clauses of a fact line, carry no label.
    "lccc-fact": 0,
    "dailydialog-fact": 0,
    "lccc-fact-clauses": 0,
    "dailydialog-fact-clauses": 0,
    "written-compound": 0,
    "persona-en": 300,
    "persona-zh": 300,
    "persona-zh-subjectless": 600,
    "persona-questions-en": 200,
    "persona-questions-zh": 200,
    "lccc-train": 4000,
    "dailydialog-train": 4000,
    "dialogue-zh": 400,
    "dialogue-en-xpersona": 200,
    "dialogue-en-synthetic": 200,
    "dialogue-zh-chat": 200,
    "dialogue-en-xpersona-chat": 100,
    "dialogue-en-synthetic-chat": 100,
}

# How much one row of a source counts beside the other rows of its class in the gate's loss, by the
# source's beginning (the longest match wins; every other source 1.0). Empty: every row alike, as until
# round 14.
SOURCE_WEIGHTS: dict[str, float] = {}


def gate_rows(examples: list[Example], counts: Mapping[str, int] | None = None) -> np.ndarray:
    """Which examples the gate head sees: every written one, the first rows of each public source
    (``GATE_ROWS_PER_SOURCE``, with ``counts`` over it)."""
    limits = {**GATE_ROWS_PER_SOURCE, **(counts or {})}
    seen: Counter[str] = Counter()
    rows = []
    for e in examples:
        seen[e.source] += 1
        rows.append(seen[e.source] <= limits.get(e.source, 10**9))
    return np.array(rows)


def source_weights(examples: list[Example], weights: Mapping[str, float] | None = None) -> np.ndarray:
    """Each example's weight by its source: the value of the longest key of ``weights`` (default
    ``SOURCE_WEIGHTS``) its source begins with, else 1.0."""
    table = SOURCE_WEIGHTS if weights is None else weights
    keys = sorted(table, key=len, reverse=True)
    out = np.ones(len(examples))
    for i, e in enumerate(examples):
        hit = next((k for k in keys if e.source.startswith(k)), None)
        if hit is not None:
            out[i] = table[hit]
    return out


def train_gate(
    examples: list[Example],
    queries: np.ndarray,
    folds: np.ndarray,
    noisy: np.ndarray,
    fit: Any,
    start: Classifier | None = None,
    weights: Mapping[str, float] | None = None,
) -> tuple[Classifier, np.ndarray]:
    """(c) asks about one's own life / tells about it / other, on query vectors, cross-fitted on every row
    but ``noisy``, each class's weight shared by ``source_weights``: (the ensemble, each row's out-of-fold
    logits). ``fit``: ``train.train_mlp`` with its seed and shape; ``start``: an ensemble trained on the
    same folds — member k goes on from its member k (which never saw fold k either)."""
    k = len(GATE_CLASSES)
    y = np.array([GATE_CLASSES.index(e.asks or "other") for e in examples])
    prior = source_weights(examples, weights)
    plain = None if np.all(prior == 1.0) else prior  # no weights: exactly round 14's arithmetic
    if start is None:
        return cross_fit(queries, y, folds, ~noisy, k, fit, balanced, plain)
    fold = iter(range(start.members))
    warm = lambda *a: fit(*a, start=member(start, next(fold)))  # noqa: E731
    return cross_fit(queries, y, folds, ~noisy, k, warm, balanced, plain)


def parse_table(text: str | None, kind: type = float) -> dict[str, Any]:
    """``'gate-long-=0.25,persona-en=1200'`` → ``{"gate-long-": 0.25, "persona-en": 1200}`` (the trainer's
    ``--gate-weights`` and ``--gate-rows``)."""
    if not text:
        return {}
    out: dict[str, Any] = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        out[key.strip()] = kind(value)
    return out
