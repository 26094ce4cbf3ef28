"""Round 21 (issue 35; in the shipped head for Chinese since round 22, 2026.12-22g, fitted by
``grams_training.py``): a hashed character n-gram score for Chinese, learned
on the gate's training rows, as a feature the embedder misses.

Why: the Chinese tell keeps 0.57 of the dev sets' statements (DATA_CARD "Round 21, Chinese tell"); on the
training rows the combined score of the keep and gate networks keeps 0.838 of the trusted Chinese
statements out of fold at 3 % of the LCCC training lines, and every cut that keeps more lets more held-out
LCCC lines through (round 20). A linear model on the characters themselves (1–3-grams) reads what a
sentence is about (搬, 过敏, 舅舅 …) beside how it is addressed (你呢, 是的 …) and is learned from the rows,
not listed. Spaces and punctuation are dropped before the n-grams are cut: LCCC is tokenised with spaces
and the written rows are punctuated, and neither may become the signal.

Numpy only, deterministic (md5 buckets, full-batch Adam from zeros). ``oof_scores`` gives each row the
score of the model trained on the other folds, as ``calibrate.cross_fit`` does for the networks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

# 2^18 buckets: 2^14 kept 0.844 of the trusted statements out of fold alone, 2^16 and 2^18 0.903 (DATA_CARD).
BITS = 18
ORDERS = (1, 2, 3)
STEPS = 300
RATE = 0.05
L2 = 1e-5
_DROPPED = re.compile(r"[\s\W_]+", re.UNICODE)


def grams(text: str, bits: int = BITS) -> np.ndarray:
    """The sorted, distinct buckets of the text's character 1-, 2- and 3-grams, spaces and punctuation
    dropped first."""
    plain = _DROPPED.sub("", text)
    size = 1 << bits
    found = {
        int.from_bytes(hashlib.md5(plain[i : i + n].encode()).digest()[:4], "little") % size
        for n in ORDERS
        for i in range(len(plain) - n + 1)
    }
    return np.array(sorted(found), dtype=np.int64)


def fit(
    rows: Sequence[np.ndarray],
    y: np.ndarray,
    bits: int = BITS,
    l2: float = L2,
    values: Sequence[np.ndarray] | None = None,
) -> np.ndarray:
    """Weights (one per bucket, the bias last) of a class-balanced, lightly regularised (``l2``, round 30's
    ``train --grams-l2``) logistic regression of ``y`` (0/1) on the rows' buckets (``grams``); with
    ``values`` (round 36, ``latent_terms.py``) each bucket of a row weighs its value there, not 1."""
    size = 1 << bits
    index = np.concatenate([*rows, np.zeros(0, dtype=np.int64)])
    value = np.ones(len(index)) if values is None else np.concatenate([*values, np.zeros(0)])
    owner = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    positive = float(np.mean(y))
    weight = np.where(y == 1, 0.5 / max(positive, 1e-9), 0.5 / max(1 - positive, 1e-9)) / len(y)
    w, m, v = (np.zeros(size + 1, dtype=np.float64) for _ in range(3))
    for t in range(1, STEPS + 1):
        z = np.bincount(owner, weights=w[index] * value, minlength=len(rows)) + w[size]
        err = weight * (1 / (1 + np.exp(-z)) - y)
        g = np.asarray(np.bincount(index, weights=err[owner] * value, minlength=size + 1), dtype=np.float64)
        g[size] = err.sum()
        g[:size] = g[:size] + l2 * w[:size]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= RATE * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def scores(
    w: np.ndarray, rows: Sequence[np.ndarray], values: Sequence[np.ndarray] | None = None
) -> np.ndarray:
    """Each row's log-odds under the weights of ``fit`` (``values``: as ``fit`` read them)."""
    if values is None:
        return np.array([float(w[r].sum() + w[-1]) for r in rows])
    return np.array([float(w[r] @ x + w[-1]) for r, x in zip(rows, values, strict=True)])


def oof_scores(
    rows: Sequence[np.ndarray],
    y: np.ndarray,
    folds: np.ndarray,
    bits: int = BITS,
    usable: np.ndarray | None = None,
    l2: float = L2,
    values: Sequence[np.ndarray] | None = None,
) -> np.ndarray:
    """Each row's score by the model fitted on the rows of the other folds (it never saw the row); only
    ``usable`` rows (default all) are fitted on, every row is scored (``values``: as ``fit`` reads them)."""
    out = np.zeros(len(rows))
    fitted = np.ones(len(rows), dtype=bool) if usable is None else usable
    for k in sorted({int(f) for f in folds}):
        train = np.flatnonzero((folds != k) & fitted)
        held = np.flatnonzero(folds == k)
        picked = None if values is None else [values[int(i)] for i in train]
        w = fit([rows[int(i)] for i in train], y[train], bits, l2, picked)
        shown = None if values is None else [values[int(i)] for i in held]
        out[held] = scores(w, [rows[int(i)] for i in held], shown)
    return out
