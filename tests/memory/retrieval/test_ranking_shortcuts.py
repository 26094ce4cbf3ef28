"""The reply path's shortcuts in ranking give what the long way gives (bench/README.md, "Gateway CPU",
stop 52): a memory holding none of the query's words matches 0.0 at once, parsed access times are kept
between rankings, and a re-ranked hit that keeps its place is handed back as it is (retrieval taking the
query vector the gate's head just asked for: test_hybrid_retrieval.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from memory.clock import days_between
from memory.records import Retrieved
from memory.retrieval import ranking, rerank
from memory.vectors.index import OwnerVectors


def long_way(
    weights: dict[str, float], groups: tuple[tuple[str, ...], ...], exact: frozenset[str], words: set[str]
) -> float:
    """The match share written out: every group's weight times what the words hold of it."""
    weighted = ranking.group_weights(groups, weights)
    held = sum(w * ranking.group_match(g, g & exact, words) for g, w in weighted)
    return held / (sum(w for _, w in weighted) or 1.0)


@pytest.mark.parametrize(
    "words",
    [
        set(),
        {"weather", "today"},
        {"sister"},
        {"sibling", "berlin"},
        {"sister", "berlin", "works"},
        {"sibling"},
    ],
)
def test_the_match_share_is_the_long_way_s_with_or_without_a_query_word(words: set[str]) -> None:
    weights = {"sister": 2.5, "berlin": 4.0, "works": 0.7}
    groups = (("sister", "sibling"), ("berlin",), ("works", "job"))
    exact = frozenset(weights)
    match = ranking.match_scorer(weights, groups, exact)
    assert match(words) == long_way(weights, groups, exact, words)
    assert (match(words) == 0.0) == words.isdisjoint({"sister", "sibling", "berlin", "works", "job"})


def test_idle_days_are_memory_clock_s_across_nows_and_a_full_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "_ACCESSED_KEPT", 3)
    monkeypatch.setattr(ranking, "_accessed", {})
    stamps = [f"2026-11-{day:02d} 10:{day:02d}:00" for day in range(1, 29)] + ["2026-11-30T08:00:00Z"]
    for now in (datetime(2026, 11, 30, 9, tzinfo=UTC), datetime(2026, 12, 24, 18, 30, tzinfo=UTC)):
        for stamp in stamps + stamps[:5]:  # parsed, cached, cleared, parsed again
            assert ranking._days_idle(stamp, now) == days_between(stamp, now)
            assert len(ranking._accessed) <= 3
    assert ranking._days_idle("2026-12-01 00:00:00", datetime(2026, 11, 30, tzinfo=UTC)) == 0.0  # future


def hit(memory_id: int, score: float) -> Retrieved:
    return Retrieved(memory_id, f"memory {memory_id}", 2, "", "", "event", 0.5, "2026-11-01", score, 0.5)


def test_a_re_ranked_hit_that_keeps_its_place_is_itself_and_the_rest_get_the_scores_in_turn() -> None:
    model = rerank.load()
    assert model is not None
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((6, model.d.shape[0])).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = np.arange(10, 16, dtype=np.int64)
    hits = [hit(10 + i, 1.0 / (i + 1)) for i in range(6)]
    for query in (matrix[0], matrix[3], -matrix[5]):
        ranked = rerank.rerank(hits, query, ids, matrix, model)
        scores = [h.score for h in hits]
        # What handing every hit out again with ``replace`` gives: the same hits, the scores in turn.
        by_id = {h.id: h for h in hits}
        expected = [replace(by_id[r.id], score=s) for r, s in zip(ranked, scores, strict=True)]
        assert ranked == expected
        assert sorted(h.id for h in ranked) == [h.id for h in hits]
        for place, h in enumerate(ranked):
            assert (h is hits[place]) == (h.id == hits[place].id)


def test_the_re_ranker_finds_the_same_rows_through_the_owner_s_positions_as_by_comparison() -> None:
    model = rerank.load()
    assert model is not None
    rng = np.random.default_rng(7)
    dim = model.d.shape[0]
    unit = rng.standard_normal((9, dim)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    vectors = OwnerVectors(np.array([30, 12, 57, 41], dtype=np.int64), np.full(4, 2, dtype=np.int8), unit[:4])
    first = vectors.positions
    for row, memory_id in enumerate((88, 5, 19, 64, 41)):  # written later; 41 again: its last row counts
        vectors.append(memory_id, 2, unit[4 + row])
    assert vectors.positions is not first  # made again once the appended rows are in the matrix
    assert vectors.positions[41] == 8 and len(vectors.positions) == 8
    hits = [hit(i, 1.0 / (place + 1)) for place, i in enumerate((57, 41, 5, 30, 64, 12, 19))]
    for query in (unit[2], unit[7], -unit[0]):
        by_comparison = rerank.rerank(hits, query, vectors.ids, vectors.matrix, model)
        by_positions = rerank.rerank(
            hits, query, vectors.ids, vectors.matrix, model, positions=vectors.positions
        )
        assert by_positions == by_comparison
        assert by_positions != hits  # the model moved some: the rows read were the hits' own
    # A hit with no vector: the list comes back as it was, either way.
    unknown = [*hits[:3], hit(999, 0.01)]
    assert rerank.rerank(unknown, unit[1], vectors.ids, vectors.matrix, model) == unknown
    assert (
        rerank.rerank(unknown, unit[1], vectors.ids, vectors.matrix, model, positions=vectors.positions)
        == unknown
    )
