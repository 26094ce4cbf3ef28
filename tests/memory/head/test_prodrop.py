"""Round 14's gate rows (memory/head/prodrop.py): own questions without a pronoun, the same shapes about
the world, long composed messages — gate rows only, in their parents' folds, the same every run."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.head.calibrate import fold_ids, trusted
from memory.head.corpus import Example
from memory.head.dialogues import keep_labels
from memory.head.outputs import read_arrays, save_head, write_run
from memory.head.prodrop import (
    dropped,
    fold_of,
    frame_questions,
    long_messages,
    prodrop_questions,
    round14_examples,
)


def test_the_speaker_is_dropped_where_the_question_stays_one() -> None:
    assert dropped("我儿子几岁了？", "zh") == "儿子几岁了"
    assert dropped("我们家猫叫啥？", "zh") == "猫叫啥"
    assert dropped("我的医生是谁", "zh") == "医生是谁"
    assert dropped("我跟你说过我在哪长大的吗", "zh") == "跟你说过我在哪长大的吗"  # asks about the speaker
    assert dropped("我和我妈谁大", "zh") is None  # a second 我 stays: left out
    assert dropped("提醒我一下我的目标是什么", "zh") == "提醒我一下目标是什么"
    assert dropped("where's my passport?", "en") == "where's the passport"
    assert dropped("where do I work?", "en") is None  # "I" stays: nothing natural to drop
    assert dropped("明天会下雨吗？", "zh") is None  # nothing of the speaker's to drop


def test_pronoun_less_questions_are_own_gate_rows_in_their_parents_fold() -> None:
    rows = prodrop_questions()
    assert rows == prodrop_questions() and len(rows) > 300
    assert all(e.asks == "own" and e.keep is None and e.category is None for e in rows)
    assert not any(
        "我" in e.text for e in rows if e.lang == "zh" and not ("提醒我" in e.text or "跟你说" in e.text)
    )
    _, known = keep_labels(rows)
    assert not known.any() and not trusted(rows).any()
    assert len({e.text for e in rows}) == len(rows)


def test_frames_give_own_questions_and_world_questions_of_the_same_shapes() -> None:
    rows = frame_questions(n=50)
    assert rows == frame_questions(n=50)
    kinds = {(e.lang, e.asks) for e in rows}
    assert kinds == {("zh", "own"), ("zh", "other"), ("en", "own"), ("en", "other")}
    assert all(e.source.startswith("gate-") for e in rows)


def _training_rows() -> list[Example]:
    told = [f"我女儿在{city}读大学" for city in ("成都", "西安", "武汉", "长沙", "南京", "厦门", "青岛")]
    told += [f"my sister lives in {city}" for city in ("Leeds", "Derby", "Bath", "Hull", "York", "Ayr")]
    chat = [f"哈哈哈{i}好吧" for i in range(40)] + [f"ok see you at {i} then" for i in range(40)]
    return [Example(t, "zh" if "我" in t else "en", "written", 1, "identity", "tell") for t in told] + [
        Example(t, "zh" if "哈" in t else "en", "lccc-train", 0, None, "other") for t in chat
    ]


def test_long_messages_are_made_of_one_fold_and_sit_in_it() -> None:
    rows = _training_rows()
    made = long_messages(rows, n=20)
    assert made == long_messages(rows, n=20)
    assert {(e.lang, e.asks) for e in made} == {
        ("zh", "tell"),
        ("zh", "other"),
        ("en", "tell"),
        ("en", "other"),
    }
    folds = fold_ids(made, 35)
    for e, fold in zip(made, folds, strict=True):
        assert fold_of(e.text) == fold
        parts = [r.text for r in rows if r.text in e.text]
        assert all(fold_of(p) == fold for p in parts)
        assert not e.text.endswith(("。", ".", "？", "?"))
    tells = [e for e in made if e.asks == "tell"]
    assert all(any(r.keep == 1 and r.text in e.text for r in rows) or e.lang for e in tells)


def test_round14_rows_carry_no_keep_label_and_are_off_by_default() -> None:
    rows = round14_examples(_training_rows(), on=True)
    _, known = keep_labels(rows)
    assert rows and not known.any() and not trusted(rows).any()
    assert round14_examples(_training_rows()) == []  # not shipped: the default run gives round 13's rows


def test_a_gate_only_run_carries_the_arrays_it_does_not_write(tmp_path: Path) -> None:
    base = tmp_path / "base.npz"
    save_head(str(base), {"question_w1": np.arange(6, dtype=np.float32), "meta": np.array("{}")})
    out = tmp_path / "out.npz"
    write_run(str(out), {}, {"thresholds": np.zeros((2, 4))}, {"version": "x"}, None, str(base))
    arrays = read_arrays(str(out))
    assert np.array_equal(arrays["question_w1"], np.arange(6, dtype=np.float32))
    assert arrays["thresholds"].shape == (2, 4) and "x" in str(arrays["meta"])
