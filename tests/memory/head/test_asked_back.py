"""Round 43's gate rows (memory/head/asked_back.py): XPersona's Chinese questions to the listener, asked of
oneself, as "own" — gate rows only, never an evaluation item, the same every run, off unless asked for."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memory.head import asked_back
from memory.head.arguments import arguments
from memory.head.asked_back import asked_back_examples, listener_questions
from memory.head.calibrate import trusted
from memory.head.passing import plain_text
from memory.head.train import evaluation_texts

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")


def _every_reading(question: str) -> set[str | None]:
    """What ``asked_back`` makes of one question over many draws (with or without the pronoun and mark)."""
    return {asked_back.asked_back(question, random.Random(seed)) for seed in range(60)}


def test_the_listener_becomes_the_speaker() -> None:
    assert _every_reading("你有宠物吗？") == {"我有宠物吗？", "我有宠物吗"}
    assert _every_reading("你的孩子几岁？") == {"我的孩子几岁？", "我的孩子几岁", "孩子几岁？", "孩子几岁"}
    assert _every_reading("你做什么工作?") == {"我做什么工作?", "我做什么工作"}


@pytest.mark.parametrize(
    "question",
    [
        "你今天好吗？",  # a greeting
        "你呢？",
        "你觉得那部电影怎么样？",  # the listener's mind, not a life
        "你知道那家店吗？",
        "你想去海边吗？",
        "你会弹吉他吗？",  # an ability: asked back it is not a fact told before
        "你和你的狗住在一起吗？",  # 你 twice
        "我能帮你吗？",  # 你 is neither the subject nor an owner
    ],
)
def test_what_asked_back_is_not_about_a_life_is_left_out(question: str) -> None:
    assert _every_reading(question) == {None}


def test_off_unless_asked_and_never_trusted_for_thresholds(tmp_path: Path) -> None:
    assert asked_back.ON is False and asked_back_examples(tmp_path) == []  # off: the data is not even read
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--asked-back"], "", defaults).asked_back
    assert not arguments([], "", defaults).asked_back


@needs_data
def test_rows_are_distinct_own_gate_rows_without_the_listener() -> None:
    rows = asked_back_examples(DATA, on=True)
    assert rows == asked_back_examples(DATA, on=True)  # deterministic
    assert len(rows) >= 300 and len({e.text for e in rows}) == len(rows)
    assert all(e.asks == "own" and e.keep is None and e.category is None for e in rows)
    assert {e.source for e in rows} == {asked_back.SOURCE} and {e.lang for e in rows} == {"zh"}
    assert not [e.text for e in rows if "你" in e.text]
    assert not trusted(rows).any()  # the thresholds stay chosen on rows a person labelled
    pronounless = [e.text for e in rows if "我" not in e.text]
    assert 10 <= len(pronounless) < len(rows) / 4  # "孩子几岁？": half of the few "你的" questions
    unmarked = sum(not e.text.endswith(("？", "?")) for e in rows)
    assert 0.15 * len(rows) < unmarked < 0.45 * len(rows)


@needs_data
def test_the_questions_are_the_dialogues_own_and_no_row_is_an_evaluation_item() -> None:
    questions = listener_questions(DATA)
    assert len(questions) > 500 and all("你" in q and q.endswith(("？", "?")) for q in questions)
    banned = evaluation_texts(DATA, REPO)
    assert banned  # the screen reads the evaluation sets
    plain = {plain_text(t) for t in banned}
    rows = asked_back_examples(DATA, evaluation=banned, on=True)
    assert not [e.text for e in rows if plain_text(e.text) in plain]
