"""The head's gate rows as question-classifier rows (memory/head/question_rows.py, issue 35 round 32):
labelled by their form as LCCC's lines are, never an evaluation item, and counted under a source of their
own beside the rows the classifier had before."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from memory.head import question_rows
from memory.head.asking import load_question
from memory.head.asking_training import _asked, training_rows
from memory.head.corpus import Example
from memory.head.question_rows import PREFIX, label
from memory.head.train import evaluation_texts

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def _row(text: str, asks: str) -> Example:
    return Example(text=text, lang="zh" if not text.isascii() else "en", source="gate-test", asks=asks)


def test_an_own_question_asks_whatever_its_ending() -> None:
    # Written for this test: an own question with no mark and no word the rule knows.
    assert label(_row("老妈体检约的礼拜三还是礼拜四来着", "own"), marked=False) == 1
    assert label(_row("the dentist, this week or next", "own"), marked=False) == 1


def test_a_marked_row_asks_a_statement_does_not_and_an_unmarked_other_row_is_left_out() -> None:
    assert label(_row("will it be cold next week", "other"), marked=True) == 1
    assert label(_row("my sister lives in Leeds", "tell"), marked=False) == 0
    # An "other" row without a mark may be a world question written without one, a request or chatter.
    assert label(_row("will it be cold next week", "other"), marked=False) is None
    assert label(_row("帮我写条朋友圈，短一点", "other"), marked=False) is None
    # A statement in which the rule reads a question word: not a clean "does not ask".
    assert label(_row("我不知道他叫什么", "tell"), marked=False) is None


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
def test_head_rows_join_the_training_rows_under_their_own_source_without_marks() -> None:
    banned = evaluation_texts(DATA, Path(__file__).resolve().parents[3])
    head = [
        ("我女儿生日是几号来着？", 1, "zh", PREFIX + "gate-frames-zh"),
        ("my son starts school in May.", 0, "en", PREFIX + "written"),
    ]
    texts, labels, _, sources, origins = training_rows(DATA, banned, head)
    before, *_ = training_rows(DATA, banned)
    assert len(texts) == len(before) + 2
    assert sources[PREFIX + "gate-frames-zh"] == 1 and sources[PREFIX + "written"] == 1
    at = {t: (int(y), str(o)) for t, y, o in zip(texts, labels, origins, strict=True)}
    assert at["我女儿生日是几号来着"] == (1, PREFIX + "gate-frames-zh")  # no mark left
    assert at["my son starts school in May"] == (0, PREFIX + "written")  # counted once: not a written frame
    assert _asked("几号来着？") and not _asked("几号来着")


def test_the_shipped_question_classifier_saw_the_head_rows() -> None:
    question = load_question()
    assert question is not None and question.meta.get("head_flags")
    head_sources = {k for k in question.meta["sources"] if k.startswith(PREFIX)}
    assert {
        PREFIX + "gate-frames-zh",
        PREFIX + "gate-zh-fast-own",
        PREFIX + "gate-own-asked-en",
    } <= head_sources
    # the threshold chosen on round 12's rows, at the rates the card names (DATA_CARD "Round 32")
    assert question.meta["false_rate"] == {"en": 0.01, "zh": 0.1}


def test_the_trainers_rows_with_their_flags_become_question_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # The trainer's row building is minutes of embedding; its output is stood in for by a few rows here, and
    # ``round_flags`` (module switches for the rest of a trainer's process) only recorded.
    built = [
        Example("我女儿生日是几号来着", "zh", "gate-frames-zh", asks="own"),
        Example("北京明天冷不冷", "zh", "gate-world-zh", asks="other"),
        Example("what's the capital of Peru?", "en", "gate-world-en", asks="other"),
        Example("my son starts school in May", "en", "written", asks="tell"),
        Example("a long dictated message", "en", "gate-long-en", asks="tell"),
        Example("哈哈哈哈", "zh", "lccc-train", asks="other"),
    ]
    seen: list[argparse.Namespace] = []
    monkeypatch.setattr(question_rows, "round_flags", seen.append)
    monkeypatch.setattr(question_rows, "training_examples", lambda *a: (built, 0, {}))
    rows = question_rows.head_question_rows(DATA, None, "--round14 --gate-rows gate-long-en=0", _asked)
    assert [(t, y, s) for t, y, _, s in rows] == [
        ("我女儿生日是几号来着", 1, PREFIX + "gate-frames-zh"),
        ("what's the capital of Peru?", 1, PREFIX + "gate-world-en"),
        ("my son starts school in May", 0, PREFIX + "written"),
    ]
    assert len(seen) == 1 and seen[0].round14 and seen[0].gate_rows == "gate-long-en=0"
