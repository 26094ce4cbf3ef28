"""Category decay (docs/architecture.md, "Tiers"), checked against the formulas written out independently
here."""

from __future__ import annotations

import math

import pytest

from memory.retrieval import decay
from memory.retrieval.decay import decayed_to_nothing, relevance_score

DAYS = (0, 7, 30, 180)


def expected(category: str, importance: float, days: float) -> float:
    if category in ("identity", "config", "credential"):
        return importance
    if category in ("decision", "solution"):
        return importance * (0.3 + 0.7 * math.exp(-0.004 * days))
    if category in ("event", "conversation"):
        return importance * (0.1 + 0.9 * math.exp(-0.023 * days))
    if category in ("temp", "debug"):
        return importance * math.exp(-0.099 * days)
    raise AssertionError(category)


ALL_CATEGORIES = (
    "identity",
    "config",
    "credential",
    "decision",
    "solution",
    "event",
    "conversation",
    "temp",
    "debug",
)


def test_categories_are_the_seeds() -> None:
    assert set(decay.CATEGORIES) == set(ALL_CATEGORIES)
    assert decay.DEFAULT_CATEGORY == "event"


@pytest.mark.parametrize("category", ALL_CATEGORIES)
@pytest.mark.parametrize("days", DAYS)
@pytest.mark.parametrize("importance", [1.0, 0.7, 0.25])
def test_relevance_score_matches_seed_formula(category: str, days: int, importance: float) -> None:
    assert relevance_score(category, importance, days) == pytest.approx(
        expected(category, importance, days), rel=1e-12, abs=1e-15
    )


@pytest.mark.parametrize(
    ("category", "d7", "d30", "d180"),
    [
        # Pinned values of the curves at importance 1.0 (rounded to 6 decimals).
        ("decision", 0.980672, 0.920844, 0.640727),
        ("event", 0.866163, 0.551418, 0.114331),
        ("temp", 0.500074, 0.051303, 0.000000018),
    ],
)
def test_known_points(category: str, d7: float, d30: float, d180: float) -> None:
    assert relevance_score(category, 1.0, 7) == pytest.approx(d7, abs=1e-5)
    assert relevance_score(category, 1.0, 30) == pytest.approx(d30, abs=1e-5)
    assert relevance_score(category, 1.0, 180) == pytest.approx(d180, abs=1e-6)


@pytest.mark.parametrize("category", ["identity", "config", "credential"])
def test_never_decay_is_constant(category: str) -> None:
    assert {relevance_score(category, 0.9, d) for d in (0, 1, 365, 36500)} == {0.9}


@pytest.mark.parametrize(
    ("category", "floor"),
    [
        ("decision", 0.3),
        ("solution", 0.3),
        ("event", 0.1),
        ("conversation", 0.1),
        ("temp", 0.0),
        ("debug", 0.0),
    ],
)
def test_floors_are_approached_from_above(category: str, floor: float) -> None:
    far = relevance_score(category, 1.0, 20_000)
    assert far == pytest.approx(floor, abs=1e-6)
    assert far >= floor
    assert relevance_score(category, 0.5, 20_000) == pytest.approx(0.5 * floor, abs=1e-6)
    # Monotone: weight never goes back up with time.
    scores = [relevance_score(category, 1.0, d) for d in (0, 1, 7, 30, 180, 1000, 20_000)]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > scores[-1]


@pytest.mark.parametrize("category", ALL_CATEGORIES)
@pytest.mark.parametrize("days", [-1, -30, -1e6])
def test_negative_days_count_as_zero(category: str, days: float) -> None:
    assert relevance_score(category, 0.6, days) == pytest.approx(0.6)
    assert relevance_score(category, 0.6, days) == relevance_score(category, 0.6, 0)


def test_decayed_to_nothing() -> None:
    assert decayed_to_nothing("temp", 1.0, 60)
    assert decayed_to_nothing("debug", 0.5, 60)
    assert not decayed_to_nothing("temp", 1.0, 1)
    assert not decayed_to_nothing("temp", 1.0, 0)
    for category in ("identity", "config", "credential"):
        assert not decayed_to_nothing(category, 1.0, 100_000)
        assert not decayed_to_nothing(category, 0.001, 100_000)
    # Floors keep slow/medium categories above "nothing" forever.
    assert not decayed_to_nothing("decision", 1.0, 100_000)
    assert not decayed_to_nothing("event", 1.0, 100_000)


def test_decayed_to_nothing_threshold_is_one_percent() -> None:
    # importance 1.0: e^(-0.099 d) < 0.01  <=>  d > ln(100) / 0.099 ≈ 46.52 days
    boundary = math.log(100) / 0.099
    assert not decayed_to_nothing("temp", 1.0, boundary - 0.1)
    assert decayed_to_nothing("temp", 1.0, boundary + 0.1)
