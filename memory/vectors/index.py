"""Brute-force cosine search over one owner's live memory vectors, held in RAM as one float32 matrix.

Why brute force: a personal memory holds thousands of rows, not millions. One matrix-vector product over
10k × 384 float32 (15 MB) takes about a millisecond with numpy, needs no index to build or keep in sync,
and is exact. It stops being the right tool around 100k memories per owner (~150 MB of RAM per loaded
owner and ~10 ms per query); past that an approximate index (HNSW, IVF) would pay for itself.

``memory/vectors/owner_cache.py`` loads an owner's matrix on first use, appends rows as they are
inserted, drops the matrix on other changes (archive, supersede, edit, purge, backfill, a commit by
another process), and drops the least recently searched owners' matrices when all of them together
exceed its budget. A matrix only ever holds vectors of one embedding model; every hit is re-read from
the store as live before it is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

FLOAT32_LE = np.dtype("<f4")


def vector_to_blob(vector: np.ndarray) -> bytes:
    """A vector as stored in the database: little-endian float32 bytes."""
    return np.ascontiguousarray(vector, dtype=FLOAT32_LE).tobytes()


def blob_to_vector(blob: bytes, dim: int | None = None) -> np.ndarray | None:
    """The stored bytes as a float32 vector, or None when they do not hold ``dim`` floats (stale/corrupt)."""
    if not blob or len(blob) % 4:
        return None
    vector = np.frombuffer(blob, dtype=FLOAT32_LE)
    if dim is not None and vector.shape[0] != dim:
        return None
    return vector


def _dot_rows(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``matrix @ query`` without BLAS.

    numpy hands a large float32 matrix-vector product to OpenBLAS, whose worker threads then busy-wait
    for ~0.1 s. On a 2-core machine they took the cores from the next query's embedding (the local
    model's own threads): ~10 ms became ~20 ms per query. einsum's own loop is single-threaded and costs
    ~0.3 ms more at 10k × 384 (0.55 vs 0.25 ms).
    """
    return np.einsum("ij,j->i", matrix, query.astype(np.float32, copy=False))


@dataclass(frozen=True, slots=True)
class StandOut:
    """An owner's memory nearest to a query: its cosine, the second nearest's, and the median of all.

    Invariant: ``cosine >= second`` and ``cosine >= median`` (so ``lift`` and ``gap`` are never negative).
    """

    memory_id: int
    cosine: float
    second: float
    median: float

    @property
    def lift(self) -> float:
        """How far the nearest stands above what an unrelated memory scores here."""
        return self.cosine - self.median

    @property
    def gap(self) -> float:
        """How far the nearest stands above the next one."""
        return self.cosine - self.second


class OwnerVectors:
    """The vectors of one owner's live memories under one embedding model, row i belonging to ``ids[i]``.

    ``append`` adds a memory just written without copying the matrix each time: rows wait in a list and
    are stacked on the next search (one copy per search that follows writes, not one per write).
    """

    __slots__ = ("_ids", "_matrix", "_pending", "_positions", "_tiers")

    def __init__(self, ids: np.ndarray, tiers: np.ndarray, matrix: np.ndarray) -> None:
        self._ids = ids  # int64, memory ids
        self._tiers = tiers  # int8, the tier of each row (retrieve searches tier 2, search tiers 1 and 2)
        self._matrix = matrix  # (n, dim) float32, unit length rows
        self._pending: list[tuple[int, int, np.ndarray]] = []
        self._positions: dict[int, int] | None = None  # id -> row, made on first use after a change

    @classmethod
    def build(cls, rows: Sequence[tuple[int, int, bytes]], dim: int | None = None) -> OwnerVectors:
        """From (id, tier, blob) rows; a blob that is not a ``dim``-vector is left out (re-embedded later)."""
        ids: list[int] = []
        tiers: list[int] = []
        vectors: list[np.ndarray] = []
        for memory_id, tier, blob in rows:
            vector = blob_to_vector(blob, dim)
            if vector is None or (vectors and vector.shape[0] != vectors[0].shape[0]):
                continue
            ids.append(int(memory_id))
            tiers.append(int(tier))
            vectors.append(vector)
        width = vectors[0].shape[0] if vectors else (dim or 0)
        matrix = np.vstack(vectors) if vectors else np.zeros((0, width), dtype=np.float32)
        return cls(np.asarray(ids, dtype=np.int64), np.asarray(tiers, dtype=np.int8), matrix)

    @property
    def ids(self) -> np.ndarray:
        self._flush()
        return self._ids

    @property
    def tiers(self) -> np.ndarray:
        self._flush()
        return self._tiers

    @property
    def matrix(self) -> np.ndarray:
        self._flush()
        return self._matrix

    @property
    def positions(self) -> dict[int, int]:
        """Each memory id's row (a repeated id: its last row), made once per matrix: the re-ranker looks
        up its hits' rows here on every hybrid query (``rerank.rerank``)."""
        self._flush()
        if self._positions is None:
            self._positions = {memory_id: row for row, memory_id in enumerate(self._ids.tolist())}
        return self._positions

    def __len__(self) -> int:
        return int(self._ids.shape[0]) + len(self._pending)

    @property
    def nbytes(self) -> int:
        """RAM held by the vectors (pending rows included), for the engine's cache budget."""
        width = self._matrix.shape[1] if self._matrix.shape[0] else 0
        if not width and self._pending:
            width = self._pending[0][2].shape[0]
        return len(self) * (width * 4 + 9)  # float32 row + int64 id + int8 tier

    def append(self, memory_id: int, tier: int, vector: np.ndarray) -> None:
        """Add a memory just written (its vector must have this matrix's width; others are ignored)."""
        width = self._matrix.shape[1] if self._matrix.shape[0] else None
        if width is None and self._pending:
            width = self._pending[0][2].shape[0]
        if width is not None and vector.shape[0] != width:
            return
        self._pending.append((int(memory_id), int(tier), np.asarray(vector, dtype=np.float32)))

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        width = pending[0][2].shape[0]
        base = self._matrix if self._matrix.shape[0] else np.zeros((0, width), dtype=np.float32)
        self._matrix = np.vstack([base, np.stack([v for _, _, v in pending])])
        self._ids = np.concatenate([self._ids, np.asarray([i for i, _, _ in pending], dtype=np.int64)])
        self._tiers = np.concatenate([self._tiers, np.asarray([t for _, t, _ in pending], dtype=np.int8)])
        self._positions = None

    def top(
        self, query: np.ndarray, n: int, tiers: tuple[int, ...] = (2,), order: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``n`` most similar memories of the given tiers as (id, cosine), best first; ``order``: the
        vector they are chosen and ordered by instead of ``query`` (the cosines are still ``query``'s)."""
        matrix = self.matrix
        if not len(self) or n <= 0 or query.shape[0] != matrix.shape[1]:
            return []
        scores = _dot_rows(matrix, query if order is None else order)
        if len(tiers) < 2:
            scores = np.where(self._of_tiers(tiers), scores, -np.inf)
        n = min(n, len(self))
        best = np.argpartition(-scores, n - 1)[:n]
        best = best[np.argsort(-scores[best], kind="stable")]
        best = best[np.isfinite(scores[best])]
        cosines = scores[best] if order is None else _dot_rows(matrix[best], query)
        return list(zip(self._ids[best].tolist(), cosines.tolist(), strict=True))

    def _of_tiers(self, tiers: tuple[int, ...]) -> np.ndarray:
        """Which rows are of ``tiers`` (one tier, the usual case: a comparison, ~20x cheaper than
        ``np.isin``'s sort on the reply path)."""
        return self._tiers == tiers[0] if len(tiers) == 1 else np.isin(self._tiers, tiers)

    def median_similarity(self, query: np.ndarray, tiers: tuple[int, ...] = (2,)) -> float | None:
        """The median cosine of ``query`` with the vectors of ``tiers`` (None when there are none): what
        a text unrelated to the query scores here, to tell a match that stands out from the crowd."""
        matrix = self.matrix
        if not len(self) or query.shape[0] != matrix.shape[1]:
            return None
        scores = _dot_rows(matrix, query)[self._of_tiers(tiers)]
        return float(np.median(scores)) if len(scores) else None

    def stand_out(self, query: np.ndarray, tiers: tuple[int, ...] = (2,)) -> StandOut | None:
        """The memory of ``tiers`` nearest to ``query`` and how far it stands from the rest (None with
        fewer than two such memories: nothing to stand out from). The reply path asks this of a message
        its gate refused, and injects the memory only when it stands far enough out (issue 35;
        ``RelevanceFloor.rescues``)."""
        matrix = self.matrix
        if len(self) < 2 or query.shape[0] != matrix.shape[1]:
            return None
        of_tiers = self._of_tiers(tiers)
        scores = _dot_rows(matrix, query)[of_tiers]
        if len(scores) < 2:
            return None
        first, second = np.argpartition(-scores, 1)[:2]
        if scores[second] > scores[first]:
            first, second = second, first
        return StandOut(
            memory_id=int(self._ids[of_tiers][first]),
            cosine=float(scores[first]),
            second=float(scores[second]),
            median=float(np.median(scores)),
        )

    def similarities(self, query: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """Cosine of ``query`` with each of ``ids`` that has a vector here."""
        matrix = self.matrix
        if not len(self) or not ids or query.shape[0] != matrix.shape[1]:
            return {}
        position = {int(i): p for p, i in enumerate(self._ids)}
        rows = [(i, position[i]) for i in ids if i in position]
        if not rows:
            return {}
        scores = _dot_rows(matrix[[p for _, p in rows]], query)
        return {i: float(s) for (i, _), s in zip(rows, scores, strict=True)}
