"""How the head's thresholds are chosen (memory/head/calibrate.py, issue 35 round 6): cross-fitted
members, out-of-fold scores, one combined score; all deterministic, on small made-up data."""

from __future__ import annotations

import numpy as np

from memory.head.calibrate import (
    Rates,
    choose_thresholds,
    combined_scores,
    cross_fit,
    fit_combined,
    fold_ids,
    member,
    out_of_fold,
    threshold_for,
)
from memory.head.corpus import Example
from memory.head.model import Classifier, Combined, keep_odds
from memory.head.train import Shape, balanced, train_mlp


def _separable(n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 8)) + y[:, None] * 1.5
    return x.astype(np.float32), y


def test_a_text_keeps_its_fold_when_rows_are_added() -> None:
    rows = [Example(f"line {i}", "en", "written", 1) for i in range(50)]
    more = rows + [Example(f"new {i}", "en", "written", 0) for i in range(30)]
    first, second = fold_ids(rows, 35), fold_ids(more, 35)
    assert np.array_equal(first, second[: len(rows)])
    assert set(first.tolist()) == {0, 1, 2, 3, 4}
    assert not np.array_equal(first, fold_ids(rows, 36))  # the seed moves them


def test_a_chit_chat_lines_clauses_go_with_the_line() -> None:
    line = "I work in a bank, and my wife is a nurse"
    rows = [Example(line, "en", "dailydialog-train", 0)]
    rows += [Example("my wife is a nurse", "en", "dailydialog-train-clauses", 0)]
    rows += [Example(f"filler {i}", "en", "written", 1) for i in range(20)]
    folds = fold_ids(rows, 35)
    assert folds[0] == folds[1]


def test_the_ensemble_averages_its_members_and_each_row_is_scored_out_of_fold() -> None:
    x, y = _separable()
    folds = np.arange(len(y)) % 3
    model, oof = cross_fit(x, y, folds, np.ones(len(y), dtype=bool), 2, train_mlp, balanced)
    assert model.members == 3
    members = [member(model, k).probabilities(x) for k in range(3)]
    assert np.allclose(model.probabilities(x), np.mean(members, axis=0), atol=1e-6)
    for k in range(3):  # a row's logits are the ones of the member that never saw it
        assert np.allclose(oof[folds == k], member(model, k).logits(x)[0][folds == k], atol=1e-4)
    assert ((keep_odds(oof) >= 0) == y).mean() > 0.8
    # a trained ensemble gives the same out-of-fold logits again (``train --networks``)
    assert np.allclose(out_of_fold(model, x, folds), oof, atol=1e-4)


def test_a_single_classifier_reads_as_an_ensemble_of_one() -> None:
    x, y = _separable()
    one = train_mlp(x, y, 2, balanced(y, 2))
    assert one.members == 1
    assert np.allclose(Classifier.stack([one]).probabilities(x), one.probabilities(x), atol=1e-6)


def test_the_shape_sets_the_hidden_layer_and_weight_decay_shrinks_the_weights() -> None:
    x, y = _separable()
    small = train_mlp(x, y, 2, balanced(y, 2), shape=Shape(hidden=8))
    assert small.w1.shape == (8, 8) and small.w2.shape == (8, 2)
    again = train_mlp(x, y, 2, balanced(y, 2), shape=Shape(hidden=8))
    assert np.array_equal(small.w1, again.w1)  # deterministic
    decayed = train_mlp(x, y, 2, balanced(y, 2), shape=Shape(l2=1.0, hidden=8))
    assert np.abs(decayed.w1).sum() < np.abs(small.w1).sum()


def test_the_combined_score_weighs_the_clause_and_the_message() -> None:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 400)
    keep = (y - 0.5) * 6 + rng.normal(0, 2, 400)  # log-odds
    tell = (y - 0.5) * 2 + rng.normal(0, 2, 400)
    a, b, c = fit_combined(keep, tell, y)
    assert a > 0 and b > 0 and a > b  # the clearer signal weighs more
    assert fit_combined(keep, tell, y) == (a, b, c)  # deterministic
    rule = Combined(a, b, c, 0.0)
    assert rule.passes(8.0, -1.0)  # a clause that plainly carries a fact outweighs a chatty message
    assert not rule.passes(-6.0, 2.0)
    score = combined_scores((a, b, c), keep, tell)
    assert ((score >= 0) == y).mean() > 0.8


def test_a_threshold_lets_through_at_most_its_share() -> None:
    scores = np.linspace(0, 1, 101)
    negatives = np.ones(101, dtype=bool)
    cut = threshold_for(scores, negatives, 0.05)
    assert (scores >= cut).sum() <= 5


def test_thresholds_are_chosen_per_language_on_out_of_fold_scores() -> None:
    rng = np.random.default_rng(3)
    examples, keep, gate, lines = [], [], [], []
    for lang in ("en", "zh"):
        for i in range(300):
            kind = ("statement", "chat", "own")[i % 3]
            source = "lccc-train" if kind == "chat" else "written"
            asks = {"statement": "tell", "chat": "other", "own": "own"}[kind]
            examples.append(Example(f"{lang}{i}", lang, source, int(kind == "statement"), asks=asks))
            keep.append(rng.normal(3 if kind == "statement" else -2, 2))
            own = 0.8 if kind == "own" else 0.05
            told = float(np.clip(rng.normal(0.7 if kind == "statement" else 0.3, 0.15), 0.01, 0.9))
            gate.append(np.log([own * 0.5 + 0.01, told, max(1 - told - own * 0.5, 0.01)]))  # logits
            lines.append(kind == "chat")
    rates = Rates({"en": 0.02, "zh": 0.02}, 0.95, {"en": 0.15, "zh": 0.15}, {"en": 0.01, "zh": 0.01})
    thresholds, combined, report = choose_thresholds(
        examples, np.array(keep), np.array(gate), np.array(lines), rates
    )
    assert set(thresholds) == set(combined) == {"en", "zh"}
    for lang in ("en", "zh"):
        figures = report[lang]
        assert isinstance(figures, dict)
        assert figures["oof_chitchat_kept_combined"] <= 0.02
        assert figures["oof_statements_kept_combined"] >= figures["oof_statements_kept_and_told"] - 0.02


def test_a_warm_start_goes_on_from_the_given_member() -> None:
    """Round 11's ``--warm``: no steps give the start back; steps move it less than a seeded start."""
    x, y = _separable()
    first = train_mlp(x, y, 2, balanced(y, 2), shape=Shape(hidden=8, iterations=50))
    same = train_mlp(x, y, 2, balanced(y, 2), shape=Shape(hidden=8, iterations=0), start=first)
    assert np.allclose(same.w1, first.w1) and np.allclose(same.mean, first.mean)
    on = train_mlp(
        x[:150], y[:150], 2, balanced(y[:150], 2), shape=Shape(hidden=8, iterations=5), start=first
    )
    assert not np.array_equal(on.w1, first.w1)
    assert np.array_equal(on.mean, first.mean)  # the start's standardisation is kept
    assert (on.logits(x)[0].argmax(axis=1) == first.logits(x)[0].argmax(axis=1)).mean() > 0.9
