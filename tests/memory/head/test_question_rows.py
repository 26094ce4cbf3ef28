"""The head's gate rows as question-classifier rows (memory/head/question_rows.py, issue 35 round 32):
labelled by their form as LCCC's lines are, never an evaluation item, and counted under a source of their
own beside the rows the classifier had before."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_other_rows_ask_by_their_mark_and_are_left_out_when_only_the_rule_reads_a_question() -> None:
    assert label(_row("will it be cold next week", "other"), marked=True) == 1
    assert label(_row("帮我写条朋友圈，短一点", "other"), marked=False) == 0
    assert label(_row("my sister lives in Leeds", "tell"), marked=False) == 0
    # No mark, but a question word: most often a question typed without its mark — not a clean "no".
    assert label(_row("where the nearest chemist is", "other"), marked=False) is None


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
def test_head_rows_join_the_training_rows_under_their_own_source_without_marks() -> None:
    banned = evaluation_texts(DATA, Path(__file__).resolve().parents[3])
    head = [
        ("我女儿生日是几号来着？", 1, "zh", PREFIX + "gate-frames-zh"),
        ("my son starts school in May.", 0, "en", PREFIX + "written"),
    ]
    texts, labels, _, sources, written = training_rows(DATA, banned, head)
    before, *_ = training_rows(DATA, banned)
    assert len(texts) == len(before) + 2
    assert sources[PREFIX + "gate-frames-zh"] == 1 and sources[PREFIX + "written"] == 1
    at = {t: (int(y), bool(w)) for t, y, w in zip(texts, labels, written, strict=True)}
    assert at["我女儿生日是几号来着"] == (1, False)  # no mark left, and counted once (not a written frame)
    assert at["my son starts school in May"] == (0, False)
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
