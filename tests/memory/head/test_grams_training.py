"""``train --only grams`` (issue 35, round 22, ``memory/head/grams_training.py``): a language's character
n-gram term is learned on the gate's rows the gate trains on, weighed beside the keep and tell columns
of its combined score, and written with every other array of the head file bit for bit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.head import char_grams
from memory.head.corpus import Example
from memory.head.grams_training import GRAMS_VERSION, GateRows, fit_language, grams_run
from memory.head.model import read_head
from memory.head.outputs import read_arrays, save_head
from memory.head.train import main
from tests.support.random_heads import random_head

FACTS = [
    "我舅舅住在成都",
    "老妈对花生过敏",
    "我家猫今年三岁",
    "我下个月搬去杭州",
    "同事老王是会计",
    "我女儿上小学",
]
CHAT = ["你呢你呢", "是的是的哈哈", "哈哈你在干嘛", "真的假的呀", "你吃饭了吗", "好吧好吧"]
TAILS = ("", "啦", "呢", "哦", "哈", "嘛")


def _rows(flip_unusable: bool = False) -> GateRows:
    """Chinese written statements ('tell', kept) and LCCC lines ('other'), English rows beside them; the
    keep and tell scores are noise, so only the characters separate the two kinds."""
    examples: list[Example] = []
    for tail in TAILS:
        examples += [Example(f + tail, "zh", "written", 1, asks="tell") for f in FACTS]
        examples += [Example(c + tail, "zh", "lccc-train", 0, asks=None) for c in CHAT]
        examples += [Example(f"line {i}{tail}", "en", "dailydialog-train", 0) for i in range(4)]
        examples += [Example(f"你呢{tail}{f}", "zh", "dialogue-zh", None, asks="tell") for f in FACTS[:2]]
    n = len(examples)
    rng = np.random.default_rng(3)
    usable = np.arange(n) % 7 != 0
    weak = np.array([e.source.startswith("dialogue") for e in examples])
    if flip_unusable:  # the rows the gate does not train on and the weak rows, labelled the other way
        examples = [
            e if u and not w else Example(e.text, e.lang, e.source, e.keep, asks=None if e.asks else "tell")
            for e, u, w in zip(examples, usable, weak, strict=True)
        ]
    lines = np.array([e.source.endswith("-train") for e in examples])
    keep, personal = rng.normal(size=n), rng.normal(size=n)
    return GateRows(examples, keep, personal, lines, np.arange(n) % 5, usable)


def test_the_term_carries_the_split_the_networks_miss() -> None:
    fitted = fit_language(_rows(), "zh", bits=12, rate=0.1)
    assert fitted.h > 0 and fitted.weights.shape == ((1 << 12) + 1,)
    report: dict[str, Any] = fitted.report
    assert report["oof_chitchat_kept"] <= 0.1  # the cut: at most the rate of the lines
    assert report["oof_statements_kept"] > 0.8  # out of fold: every fact's siblings share its characters
    assert len(report["refit_without_grams"]) == 3


def test_it_is_fitted_only_on_rows_the_gate_trains_on_and_a_person_labelled() -> None:
    one, other = fit_language(_rows(), "zh", 12, 0.1), fit_language(_rows(flip_unusable=True), "zh", 12, 0.1)
    assert np.array_equal(one.weights, other.weights)


def test_also_adds_the_named_sources_and_no_other() -> None:
    rows = _rows()
    written = [Example(f"{f}啊", "zh", "gate-zh-fast-tell", None, asks="tell") for f in FACTS]
    composed = [Example(f"{c}啊", "zh", "gate-zh-frames", None, asks="tell") for c in CHAT]
    examples = rows.examples + written + composed
    n, m = len(rows.examples), len(written) + len(composed)

    def grown(also: tuple[str, ...]) -> GateRows:
        pad = np.zeros(m)
        return GateRows(
            examples,
            np.concatenate([rows.keep, pad]),
            np.concatenate([rows.personal, pad]),
            np.concatenate([rows.lines, np.zeros(m, dtype=bool)]),
            np.concatenate([rows.folds, np.arange(m) % 5]),
            np.concatenate([rows.usable, np.ones(m, dtype=bool)]),
            also,
        )

    plain, named = grown(()).fitted_on(), grown(("gate-zh-fast-",)).fitted_on()
    assert not plain[n:].any() and np.array_equal(plain[:n], rows.fitted_on())
    assert named[n : n + len(written)].all() and not named[n + len(written) :].any()
    assert np.array_equal(named[:n], plain[:n])


def test_grams_changes_one_row_and_adds_two_arrays(tmp_path: Path) -> None:
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    random_head(base)
    report = grams_run(str(base), str(out), _rows(), ["zh"], 12, {"zh": 0.1}, "train --only grams")
    before, after = read_arrays(str(base)), read_arrays(str(out))
    assert set(after) == set(before) | {"grams_zh", "combined_grams"}
    for name in before:
        if name not in ("combined", "meta"):
            assert after[name].dtype == before[name].dtype and after[name].tobytes() == before[name].tobytes()
    assert after["combined"].dtype == before["combined"].dtype
    assert np.array_equal(after["combined"][0], before["combined"][0])  # English as it was
    assert not np.array_equal(after["combined"][1], before["combined"][1])
    assert after["grams_zh"].dtype == np.float16 and after["combined_grams"][0] == 0.0
    assert report["zh"]["l2"] == 1e-5  # round 21's weight decay unless --grams-l2 says otherwise
    decayed = grams_run(str(base), str(tmp_path / "l2.npz"), _rows(), ["zh"], 12, {"zh": 0.1}, "", l2=1e-2)
    assert decayed["zh"]["l2"] == 1e-2
    assert (
        np.abs(read_arrays(str(tmp_path / "l2.npz"))["grams_zh"].astype(np.float64)).sum()
        < np.abs(after["grams_zh"].astype(np.float64)).sum()
    )
    meta = json.loads(str(after["meta"]))
    assert meta["version"] == GRAMS_VERSION and meta["report"]["gate"] == "kept"
    assert meta["shipped"] == {"from": "train --only grams", "networks": "old"}
    assert (
        meta["report"]["grams"]["zh"] == report["zh"] and meta["report"]["grams"]["networks_version"] == "old"
    )
    with np.load(out) as data:
        head = read_head(data)
    assert head.combined is not None and head.combined["zh"].h == pytest.approx(report["zh"]["h"], abs=1e-4)
    assert head.combined["en"].h == 0.0 and set(head.grams_w) == {"zh"}
    fact, chat = char_grams.grams("我舅舅住在成都啦", 12), char_grams.grams("哈哈你在干嘛啦", 12)
    assert char_grams.scores(head.grams_w["zh"], [fact])[0] > char_grams.scores(head.grams_w["zh"], [chat])[0]


def test_a_language_it_does_not_know_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "base.npz"
    random_head(base)
    with pytest.raises(ValueError, match="fr"):
        grams_run(str(base), str(tmp_path / "out.npz"), _rows(), ["fr"], 12, {"fr": 0.1})


def test_the_command_needs_the_head_it_adds_to() -> None:
    with pytest.raises(SystemExit, match="--networks"):
        main(["--only", "grams", "--grams", "zh"])


def test_a_head_with_length_or_sentence_terms_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "base.npz"
    random_head(base)
    arrays = read_arrays(str(base))
    save_head(str(base), {**arrays, "combined_spread": np.ones((2, 3), dtype=np.float32)})
    with pytest.raises(ValueError, match="combined_spread"):
        grams_run(str(base), str(tmp_path / "out.npz"), _rows(), ["zh"], 12, {"zh": 0.1})
