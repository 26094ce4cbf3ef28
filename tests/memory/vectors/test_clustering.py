"""memory.vectors.clustering: similar groups by sorted LSH windows, checked against exact all-pairs."""

from __future__ import annotations

import numpy as np
import pytest

from memory.vectors.clustering import (
    DEFAULT_ROUNDS,
    DEFAULT_WINDOW,
    EXACT_FACTOR,
    ClusterStats,
    median_cosine,
    similar_groups,
)

DIM = 64


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def _at_angle(base: np.ndarray, other: np.ndarray, cosine: float) -> np.ndarray:
    """A unit vector with the given cosine to ``base``, turned towards ``other``."""
    ortho = other - (other @ base) * base
    ortho /= np.linalg.norm(ortho)
    return (cosine * base + np.sqrt(1 - cosine**2) * ortho).astype(np.float32)


def _e5_like(n: int, planted: int, seed: int, dim: int = 384) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Unit rows sharing one direction, like e5 (unrelated cosine ≈ 0.8), the last ``planted`` rows each a
    restatement (cosine 0.95-0.99) of an earlier row; also the planted (earlier, later) pairs."""
    rng = np.random.default_rng(seed)
    common = _unit(rng.standard_normal(dim))
    rows = _unit(0.9 * common + 0.45 * _unit(rng.standard_normal((n, dim))))
    sources = rng.choice(n - planted, planted, replace=False)
    pairs = []
    for k, src in enumerate(sources):
        row = n - planted + k
        rows[row] = _at_angle(rows[src], rng.standard_normal(dim), rng.uniform(0.95, 0.99))
        pairs.append((int(src), row))
    return rows, pairs


def _exact_pairs(rows: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    first, second = np.nonzero(np.triu(rows @ rows.T >= threshold, k=1))
    return list(zip(first.tolist(), second.tolist(), strict=True))


def _group_of(groups: list[list[int]]) -> dict[int, int]:
    return {i: g for g, members in enumerate(groups) for i in members}


def test_identical_vectors_are_grouped_and_far_ones_left_out() -> None:
    rng = np.random.default_rng(0)
    a, b, c = _unit(rng.standard_normal((3, DIM)))
    rows = np.stack([a, b, a, c, a])
    assert similar_groups([10, 11, 12, 13, 14], rows, 0.94) == [[10, 12, 14]]
    assert similar_groups([1, 2, 3], np.eye(3, dtype=np.float32), 0.5) == []  # orthogonal: nothing
    assert similar_groups([], np.zeros((0, DIM), dtype=np.float32), 0.9) == []
    assert similar_groups([7], a[None, :], 0.9) == []


def test_groups_are_transitive_and_in_input_order() -> None:
    rng = np.random.default_rng(1)
    base, towards = _unit(rng.standard_normal((2, DIM)))
    b = _at_angle(base, towards, np.cos(np.radians(18)))
    c = _at_angle(base, towards, np.cos(np.radians(36)))  # cos(a, c) ≈ 0.81, each neighbour ≈ 0.95
    assert float(base @ c) < 0.9 < float(base @ b)
    far = _unit(rng.standard_normal(DIM))
    assert similar_groups([5, 3, 9, 1], np.stack([c, far, base, b]), 0.9) == [[5, 9, 1]]


def test_windowed_path_is_deterministic_and_every_edge_is_real() -> None:
    rows, _ = _e5_like(2000, 100, seed=2)
    ids = list(range(1000, 3000))
    first = similar_groups(ids, rows, 0.94)
    assert similar_groups(ids, rows.copy(), 0.94) == first
    other_seed = similar_groups(ids, rows, 0.94, seed=7)
    for groups in (first, other_seed):
        for group in groups:  # never joined wrongly: each member has a neighbour ≥ threshold in its group
            members = rows[[i - 1000 for i in group]]
            cosines = members @ members.T
            np.fill_diagonal(cosines, -1)
            assert len(group) >= 2 and (cosines.max(axis=1) >= 0.94).all()


def test_planted_pairs_recall_against_exact_all_pairs() -> None:
    rows, planted = _e5_like(2000, 100, seed=3)
    exact = _exact_pairs(rows, 0.94)
    assert set(planted) <= set(exact)
    stats = ClusterStats()

    group_of = _group_of(similar_groups(list(range(len(rows))), rows, 0.94, stats=stats))

    assert not stats.exact
    together = sum(1 for a, b in exact if a in group_of and group_of.get(a) == group_of.get(b))
    assert together / len(exact) >= 0.9  # 0.96 with these seeds; exact all-pairs would be 1.0
    assert stats.pairs / len(exact) >= 0.85  # compared directly (the rest joined through a third row)


def test_never_compares_all_pairs_and_grows_linearly() -> None:
    counts = {}
    for n in (2000, 4000):
        rows, _ = _e5_like(n, n // 20, seed=4)
        stats = ClusterStats()
        similar_groups(list(range(n)), rows, 0.94, stats=stats)
        assert not stats.exact and stats.rows == n
        assert stats.comparisons <= DEFAULT_ROUNDS * DEFAULT_WINDOW * n
        assert stats.comparisons < n * (n - 1) // 2 // 7
        counts[n] = stats.comparisons
    assert counts[4000] / counts[2000] == pytest.approx(2.0, rel=0.01)  # all pairs would quadruple


def test_small_inputs_are_compared_exactly() -> None:
    n = EXACT_FACTOR * DEFAULT_ROUNDS * DEFAULT_WINDOW
    rows, _ = _e5_like(n, 40, seed=5)
    stats = ClusterStats()
    group_of = _group_of(similar_groups(list(range(n)), rows, 0.94, stats=stats))
    assert stats.exact and stats.comparisons == n * (n - 1) // 2
    exact = _exact_pairs(rows, 0.94)
    assert exact and all(group_of.get(a) is not None and group_of.get(a) == group_of.get(b) for a, b in exact)


def test_a_big_group_is_cut_into_nearly_equal_parts() -> None:
    rng = np.random.default_rng(6)
    base = _unit(rng.standard_normal(DIM))
    rows = np.stack([_at_angle(base, rng.standard_normal(DIM), 0.99) for _ in range(120)])
    ids = list(range(500, 620))
    assert similar_groups(ids, rows, 0.94) == [ids]
    parts = similar_groups(ids, rows, 0.94, max_group_size=50)
    assert sorted(len(p) for p in parts) == [40, 40, 40]
    assert sorted(i for p in parts for i in p) == ids and all(p == sorted(p) for p in parts)


def test_median_cosine_exact_and_sampled() -> None:
    rows, _ = _e5_like(3000, 0, seed=8)
    sampled = median_cosine(rows)
    small = rows[:60]
    exact_small = float(np.median((small @ small.T)[np.triu_indices(60, k=1)]))
    assert median_cosine(small) == pytest.approx(exact_small)
    assert sampled == pytest.approx(float(np.median(rows[:1000] @ rows[1000:2000].T)), abs=0.01)
    assert median_cosine(rows) == sampled  # seeded
    assert median_cosine(rows[:1]) == 0.0


def test_invalid_arguments() -> None:
    rows = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="one row per id"):
        similar_groups([1, 2], rows, 0.9)
    with pytest.raises(ValueError):
        similar_groups([1, 2, 3], rows, 0.9, window=0)
    with pytest.raises(ValueError):
        similar_groups([1, 2, 3], rows, 0.9, max_group_size=1)
    with pytest.raises(ValueError):
        similar_groups([1, 2, 3], rows, 0.9, bits=31)
