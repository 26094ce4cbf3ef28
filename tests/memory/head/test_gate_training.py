"""The gate's rows and their weights (memory/head/gate_training.py, round 15): a source that outnumbers
another inside a class can be made to count less without moving what the classes weigh; no weights give
round 14's fit exactly."""

from __future__ import annotations

from functools import partial

import numpy as np

from memory.head.calibrate import cross_fit, shared_by
from memory.head.category_training import balanced
from memory.head.corpus import Example
from memory.head.gate_training import gate_rows, parse_table, source_weights, train_gate
from memory.head.model import GATE_CLASSES, gate_odds
from memory.head.train import Shape, train_mlp

FIT = partial(train_mlp, seed=35, shape=Shape(iterations=150))


def test_a_class_keeps_its_weight_and_shares_it_by_source() -> None:
    y = np.array([0, 0, 0, 1, 1, 2])
    prior = np.array([1.0, 1.0, 0.25, 1.0, 1.0, 3.0])
    plain = balanced(y, 3)
    w = shared_by(plain, y, prior, 3)
    for c in range(3):
        assert np.isclose(w[y == c].sum(), plain[y == c].sum())
    assert np.isclose(w[2] / w[0], 0.25)
    assert np.allclose(shared_by(plain, y, np.ones(6), 3), plain)


def test_a_source_weighs_by_the_longest_key_it_begins_with() -> None:
    rows = [
        Example("a", "en", "gate-long-en", None, None, "tell"),
        Example("b", "zh", "gate-long-zh", None, None, "tell"),
        Example("c", "en", "persona-en", 1),
    ]
    assert source_weights(rows, {}).tolist() == [1.0, 1.0, 1.0]
    assert source_weights(rows, {"gate-long-": 0.25, "gate-long-zh": 0.5}).tolist() == [0.25, 0.5, 1.0]
    assert parse_table("gate-long-=0.25,persona-en=1200") == {"gate-long-": 0.25, "persona-en": 1200.0}
    assert parse_table("persona-en=1200", int) == {"persona-en": 1200}
    assert parse_table(None) == {}


def test_more_rows_of_a_public_source_when_asked() -> None:
    rows = [Example(f"p{i}", "en", "persona-en", 1) for i in range(400)]
    assert gate_rows(rows).sum() == 300  # GATE_ROWS_PER_SOURCE
    assert gate_rows(rows, {"persona-en": 350}).sum() == 350


def _kinds(n: int = 90) -> tuple[list[Example], np.ndarray]:
    """Own questions, a few short plain tells close to the other lines, many long tells far from both
    (made-up vectors): a fit dominated by the long tells reads the plain ones as other."""
    rng = np.random.default_rng(3)
    centres = {"own": 0, "plain": 1, "long": 2, "other": 3}
    base = rng.normal(size=(4, 16)) * 2.0
    base[1] = base[3] + rng.normal(size=16) * 0.4
    rows, vectors = [], []
    for kind, count in (("own", n), ("plain", n // 3), ("long", n * 2), ("other", n)):
        for i in range(count):
            label = {"plain": "tell", "long": "tell"}.get(kind, kind)
            source = {"plain": "persona-en", "long": "gate-long-en"}.get(kind, f"written-{kind}")
            rows.append(Example(f"{kind} {i}", "en", source, None, None, label))
            vectors.append(base[centres[kind]] + rng.normal(size=16))
    return rows, np.array(vectors, dtype=np.float32)


def test_no_weights_give_the_plain_class_balanced_fit() -> None:
    rows, x = _kinds()
    folds = np.arange(len(rows)) % 5
    quiet = np.zeros(len(rows), dtype=bool)
    y = np.array([GATE_CLASSES.index(e.asks or "other") for e in rows])
    _, expected = cross_fit(x, y, folds, ~quiet, 3, FIT, balanced)
    _, got = train_gate(rows, x, folds, quiet, FIT, weights={})
    assert np.array_equal(got, expected)


def test_down_weighting_the_long_tells_lifts_the_plain_ones() -> None:
    rows, x = _kinds()
    folds = np.arange(len(rows)) % 5
    quiet = np.zeros(len(rows), dtype=bool)
    plain = np.array([e.source == "persona-en" for e in rows])
    _, same = train_gate(rows, x, folds, quiet, FIT, weights={})
    _, light = train_gate(rows, x, folds, quiet, FIT, weights={"gate-long-": 0.1})
    told_same, told_light = gate_odds(same)[1], gate_odds(light)[1]
    assert told_light[plain].mean() > told_same[plain].mean()
