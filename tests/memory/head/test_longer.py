"""Long messages for the combined score (memory/head/longer.py, issue 35 round 9): composed from training
rows of one fold, and a combined score that learns how much the message counts when the clause is a
small part of it. Deterministic, on small made-up data."""

from __future__ import annotations

import re

import numpy as np

from memory.head.calibrate import combined_scores, fit_combined
from memory.head.corpus import Example
from memory.head.longer import compose
from memory.head.model import Combined, spread


def test_spread_is_how_small_a_part_of_its_message_a_clause_is() -> None:
    assert spread("I have a dog", "I have a dog.") == 0.0
    short = spread("I have a dog", "ok so I have a dog")
    long = spread(
        "I have a dog", "ok so I have a dog, anyway the weather is awful today and the bus was late"
    )
    assert 0 < short < long
    assert spread("我养了一只猫", "哈哈 我养了一只猫 今天好热啊 你吃饭了吗") > 0


def _rows() -> tuple[list[Example], np.ndarray, np.ndarray]:
    examples, folds = [], []
    for lang, word in (("en", "fact"), ("zh", "事实")):
        for i in range(40):
            examples.append(Example(f"{word} {i}", lang, "persona-" + lang, 1, None, "tell"))
            folds.append(i % 5)
            source = "lccc-train" if lang == "zh" else "dailydialog-train"
            examples.append(Example(f"chat {lang} {i}", lang, source, 0))
            folds.append(i % 5)
    usable = np.array([not e.text.endswith(" 7") for e in examples])  # a row left out as noisy
    return examples, np.array(folds), usable


def test_composed_messages_are_made_of_one_folds_rows_and_say_whether_they_tell() -> None:
    examples, folds, usable = _rows()
    made = compose(examples, folds, usable, seed=35, n=30)
    assert made == compose(examples, folds, usable, seed=35, n=30)  # deterministic
    assert sum(m.keep for m in made) == 60 and len(made) == 120  # n of each kind per language
    fold_of = {e.text: int(f) for e, f in zip(examples, folds, strict=True)}
    for m in made:
        parts = re.findall(r"(?:fact|事实|chat en|chat zh) \d+", m.text)
        assert parts and {fold_of[t] for t in parts} == {m.fold}
        assert any(not t.startswith("chat") for t in parts) == bool(m.keep)
        assert any(t.startswith("chat") for t in parts)
        assert not any(t.endswith(" 7") for t in parts)  # a noisy row is never used


def test_the_combined_score_learns_that_a_long_messages_tell_score_says_little() -> None:
    rng = np.random.default_rng(4)
    n = 800
    y = rng.integers(0, 2, n)
    long = rng.random(n) < 0.5
    # A short message is told by its tell score more than by its clause's keep score; a long chatty
    # message's tell score is low either way, and only its clause tells.
    keep = np.where(long, (y - 0.5) * 6 + rng.normal(0, 1.5, n), (y - 0.5) * 2 + rng.normal(0, 2, n))
    tell = np.where(long, rng.normal(-8, 2, n), (y - 0.5) * 8 + rng.normal(0, 1.5, n))
    spreads = np.where(long, 2.0, 0.0)
    weights = fit_combined(keep, tell, y, spreads)
    assert len(weights) == 6 and weights == fit_combined(keep, tell, y, spreads)
    a, b, c, d, e, f = weights
    rule = Combined(a, b, c, 0.0, d, e, f)
    assert rule.passes(4.0, -8.0, 2.0)  # a plain fact inside a long chatty message is kept
    assert not rule.passes(-3.0, -8.0, 2.0)  # chatter in it is not
    assert not rule.passes(-3.0, -4.0, 0.0)
    score = combined_scores(weights, keep, tell, spreads)
    assert ((score >= 0) == y)[long].mean() > 0.9
    without = combined_scores(fit_combined(keep, tell, y), keep, tell)
    assert ((score >= 0) == y)[long].mean() > ((without >= 0) == y)[long].mean()


def test_a_head_without_the_length_terms_decides_as_before() -> None:
    old = Combined(0.1, 0.4, -0.2, 0.5)
    for keep, tell in ((4.0, -1.0), (0.5, 2.0), (-2.0, -2.0)):
        assert old.passes(keep, tell, 3.0) == old.passes(keep, tell)
