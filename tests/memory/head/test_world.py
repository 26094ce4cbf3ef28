"""Round 11's templated world questions (memory/head/world.py): gate rows labelled "other", never seen by
the keep classifier, not counted where thresholds are chosen, the same every run."""

from __future__ import annotations

from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.corpus import Example
from memory.head.dialogues import keep_labels
from memory.head.world import SOURCE, world_examples, world_questions


def test_the_same_questions_every_run_and_all_distinct() -> None:
    for lang in ("en", "zh"):
        first = world_questions(lang, 120)
        assert first == world_questions(lang, 120)
        assert len(first) == len(set(first)) == 120
        assert first != world_questions(lang, 120, seed=36)


def test_chinese_questions_are_chinese_and_english_ones_are_not() -> None:
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in q) for q in world_questions("zh", 50))
    assert not any(any("\u4e00" <= ch <= "\u9fff" for ch in q) for q in world_questions("en", 50))


def test_rows_are_other_for_the_gate_and_unknown_for_the_keep_classifier() -> None:
    rows = world_examples(10)
    assert len(rows) == 20 and {e.source for e in rows} == {f"{SOURCE}-en", f"{SOURCE}-zh"}
    assert all(e.asks == "other" and e.category is None for e in rows)
    _, known = keep_labels(rows)
    assert not known.any()  # the keep classifier leaves them out


def test_thresholds_are_not_chosen_on_them() -> None:
    rows = [Example("who wrote hamlet", "en", "written", 0, None, "other"), *world_examples(3)]
    assert trusted(rows).tolist() == [True] + [False] * 6


def test_the_default_command_line_adds_none() -> None:
    defaults = {"seed": 35, "l2": 1e-4, "hidden": 64, "iterations": 400, "tell_false_rate": {}}
    args = arguments([], "train", defaults)
    assert args.world == 0 and args.gate_only is None and args.seed == 35
    assert arguments(["--world", "300"], "train", defaults).world == 300
