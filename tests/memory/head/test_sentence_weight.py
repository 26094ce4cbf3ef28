"""Round 13 (issue 35): the combined score weighs each clause's own sentence beside the whole message
(``Combined.g``, ``combined_sentence``), fitted with ``calibrate.fit_combined(..., own=...)`` on composed
messages (``longer.compose`` with ``SENTENCE_JOINS``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.head.calibrate import combined_scores, fit_combined
from memory.head.corpus import Example
from memory.head.longer import SENTENCE_JOINS, compose
from memory.head.model import CATEGORIES, Classifier, Combined, read_head
from memory.head.outputs import head_rows, write_head


def test_g_weighs_the_sentence_and_zero_reads_only_the_message() -> None:
    old = Combined(0.1, 0.4, 0.0, 1.0)
    assert old.passes(0.0, 3.0, own=-100.0) and not old.passes(0.0, 2.0, own=100.0)
    new = Combined(0.1, 0.2, 0.0, 1.0, g=0.3)
    assert new.passes(0.0, -1.0, own=5.0)  # a fact sentence beside a question: -0.2 + 1.5
    assert not new.passes(0.0, -1.0, own=-1.0)
    assert new.passes(0.0, 2.0) == new.passes(0.0, 2.0, own=2.0)  # no sentence given: the message's


def test_fit_with_own_finds_the_column_that_separates() -> None:
    rng = np.random.default_rng(13)
    n = 4000
    keep, tell, own = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    y = (own + 0.2 * rng.normal(size=n) > 0).astype(np.int64)  # only the sentence says it
    a, b, c, g = fit_combined(keep, tell, y, None, own)
    assert g > 5 * max(abs(a), abs(b))
    scores = combined_scores((a, b, c, g), keep, tell, None, own)
    assert ((scores > 0) == (y == 1)).mean() > 0.9


def test_the_head_file_carries_g_and_reads_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)

    def net(classes: int) -> Classifier:
        shapes = [(384,), (384,), (384, 8), (8,), (8, classes), (classes,)]
        return Classifier(*(rng.normal(size=(2, *s)).astype(np.float32) for s in shapes))

    thresholds = {lang: (1.0, 2.0, 3.0, 4.0) for lang in ("en", "zh")}
    combined = {"en": (0.1, 0.2, 0.3, 0.4, 0.0, 0.0, 0.0, 0.5), "zh": (1.0, 2.0, 3.0, 4.0, 0, 0, 0, 0.0)}
    rows = head_rows(thresholds, combined)
    assert rows["combined_sentence"].shape == (2, 1) and rows["combined_spread"].shape == (2, 3)
    path = tmp_path / "head.npz"
    write_head(str(path), {"keep": net(2), "category": net(len(CATEGORIES)), "gate": net(3)}, rows, {})
    with np.load(path) as data:
        head = read_head(data)
    assert head.combined is not None and head.reads_sentences
    assert abs(head.combined["en"].g - 0.5) < 1e-6 and head.combined["zh"].g == 0.0


def test_compose_with_sentence_joins_ends_sentences() -> None:
    rows = [Example(f"I live in town {i}", "en", "written", 1, None, "tell") for i in range(5)]
    rows += [Example(f"how was your day {i}", "en", "dailydialog-train", 0) for i in range(10)]
    folds = np.zeros(len(rows), dtype=np.int64)
    made = compose(rows, folds, np.ones(len(rows), dtype=bool), 7, 20, SENTENCE_JOINS)
    told = [m.text for m in made if m.keep]
    assert len(told) == 20 and all("I live in town" in t for t in told)
    assert all(m.fold == 0 for m in made)
    assert any(". " in t or "! " in t for t in told)


def test_a_line_is_judged_by_its_clause_with_the_highest_weighed_score() -> None:
    from memory.head.longer import _pick

    table = np.array([[5.0, -8.0], [3.0, 4.0], [-1.0, 5.0]])  # (keep, own tell) per clause
    assert _pick(table, (1.0, 0.0)) == (5.0, -8.0)  # by keep alone
    assert _pick(table, (0.2, 0.3)) == (3.0, 4.0)  # 0.6 + 1.2 beats 1.0 - 2.4 and -0.2 + 1.5


def _rows(n: int, rng: np.random.Generator) -> tuple[list[Example], np.ndarray, np.ndarray, np.ndarray]:
    """``n`` statements and ``n`` chit-chat lines per language with made-up out-of-fold scores: keep,
    gate logits (own, tell, other) and each row's sentence's tell, which alone separates the two."""
    examples, keep, gate, own = [], [], [], []
    for lang in ("en", "zh"):
        for label in (1, 0):
            for i in range(n):
                source = "written" if label else ("dailydialog" if lang == "en" else "lccc") + "-train"
                examples.append(
                    Example(f"{lang} {label} {i}", lang, source, label, None, "tell" if label else "other")
                )
                keep.append(rng.normal())
                gate.append([rng.normal() - 3.0, rng.normal(), rng.normal()])
                own.append(rng.normal() + (3.0 if label else -3.0))
    return examples, np.array(keep), np.array(gate), np.array(own)


def test_the_cut_is_chosen_on_the_sentences_tell_it_was_fitted_with() -> None:
    """Round 14: ``choose_thresholds``' ``own`` (each row's sentence's tell) was shadowed by the gate's
    "asks about own life" log-odds, so the weights and the cut were fitted on another column than the one
    the keeper reads (held-out false keeps four times the rate chosen). The chosen cut must let through,
    of the chit-chat lines scored as the head will score them, the rate it was chosen for."""
    from memory.head.calibrate import Rates, choose_thresholds

    examples, keep, gate, own = _rows(400, np.random.default_rng(14))
    lines = np.array([e.source.endswith("-train") for e in examples])
    rates = Rates({"en": 0.025, "zh": 0.03}, 0.95, {"en": 0.15, "zh": 0.15}, {"en": 0.01, "zh": 0.01})
    _, combined, report = choose_thresholds(examples, keep, gate, lines, rates, own=own)
    tell = np.logaddexp(gate[:, 0], gate[:, 1]) - gate[:, 2]
    for lang, rate in rates.tell_false.items():
        a, b, c, cut, *_, g = combined[lang]
        rule = Combined(a, b, c, cut, g=g)
        chat = [i for i, e in enumerate(examples) if e.lang == lang and lines[i]]
        passed = np.mean([rule.passes(keep[i], tell[i], own=own[i]) for i in chat])
        assert abs(passed - rate) < 0.005
        assert report[lang]["oof_chitchat_kept_combined"] == passed  # type: ignore[index]
        assert g > 5 * max(abs(a), abs(b))  # the sentence's tell separates here, and is the one weighed


def test_gap_reads_a_line_by_its_best_clause_as_the_keeper_does() -> None:
    """``memory.head.gap``: a line passes when any clause passes (``Combined.passes``), so it is read by the
    clause with the highest score; the summary counts lines at or above the cut."""
    from memory.head.gap import line_scores, summary

    rule = Combined(0.5, 0.2, 0.0, 1.0, g=0.3)
    table = np.array([[4.0, -5.0], [1.0, 3.0]])  # (keep, sentence's tell) per clause
    score, keep, tell, own = line_scores(table, 1.0, rule)
    assert (keep, own) == (1.0, 3.0) and abs(score - (0.5 + 0.2 + 0.9 - 1.0)) < 1e-9
    assert (score >= 0) == any(rule.passes(k, tell, own=o) for k, o in table)
    rows = np.array([[score, keep, tell, own], [-1.0, 0.0, 0.0, 0.0]])
    assert summary(rows)["passed"] == 0.5
