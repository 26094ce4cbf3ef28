"""``train --only gate-point`` (issue 35, round 13, ``memory/head/operating.py``): the gate and own
thresholds chosen again at a rate per language, every other array of the head file bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memory.head.calibrate import Rates, gate_thresholds, out_of_fold
from memory.head.corpus import Example
from memory.head.model import PARTS, read_head
from memory.head.operating import GATE_COLUMNS, GATE_POINT_VERSION, gate_point, parse_rates
from memory.head.outputs import read_arrays, save_head
from tests.support.random_heads import random_head


def _gate_rows(n: int = 400) -> tuple[list[Example], np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    examples = []
    for i in range(n):
        lang, kind = ("en", "zh")[i % 2], ("chat", "own", "tell")[(i // 2) % 3]
        source = "lccc-train" if kind == "chat" else "written"
        examples.append(
            Example(f"{lang}{i}", lang, source, int(kind == "tell"), asks=None if kind == "chat" else kind)
        )
    queries = rng.normal(size=(n, 16)).astype(np.float32)
    lines = np.array([e.source.endswith("-train") for e in examples])
    return examples, queries, np.arange(n) % 5, lines


def test_parse_rates_per_language_or_one_for_both() -> None:
    assert parse_rates("en=0.15,zh=0.25") == {"en": 0.15, "zh": 0.25}
    assert parse_rates("0.2") == {"en": 0.2, "zh": 0.2}
    with pytest.raises(ValueError):
        parse_rates("zh=0.25")


def test_each_language_fires_on_its_own_share_of_chit_chat_lines() -> None:
    examples, _, _, lines = _gate_rows()
    gate = np.random.default_rng(5).normal(size=(len(examples), 3))
    rates = Rates({"en": 0.02, "zh": 0.02}, 0.95, {"en": 0.1, "zh": 0.3}, {"en": 0.01, "zh": 0.01})
    chosen, report = gate_thresholds(examples, gate, lines, rates)
    assert chosen["zh"][0] < chosen["en"][0]  # a higher rate: a lower threshold
    for lang, rate in rates.gate_fire.items():
        assert rate - 0.05 <= report[lang]["oof_chitchat_fired"] <= rate


def test_gate_point_changes_the_gate_and_own_columns_and_nothing_else(tmp_path: Path) -> None:
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    random_head(base)
    rates = Rates({"en": 0.02, "zh": 0.02}, 0.95, {"en": 0.15, "zh": 0.3}, {"en": 0.01, "zh": 0.02})
    report = gate_point(str(base), str(out), _gate_rows(), rates)
    before, after = read_arrays(str(base)), read_arrays(str(out))
    assert set(before) == set(after)
    for name in before:
        if name not in ("thresholds", "meta"):
            assert after[name].dtype == before[name].dtype and after[name].tobytes() == before[name].tobytes()
    for column in range(4):
        same = np.array_equal(after["thresholds"][:, column], before["thresholds"][:, column])
        assert same != (column in GATE_COLUMNS), column
    assert after["thresholds"].dtype == before["thresholds"].dtype
    for row, lang in enumerate(("en", "zh")):
        figures = report[lang]
        assert isinstance(figures, dict)
        assert np.isclose(after["thresholds"][row, 1], figures["threshold"])
    meta = json.loads(str(after["meta"]))
    assert meta["version"] == GATE_POINT_VERSION and meta["report"]["gate"] == "kept"
    assert meta["report"]["gate_point"]["rates"]["gate_fire"] == {"en": 0.15, "zh": 0.3}


def _with_english_gate(path: Path) -> None:
    """The head file of ``_head_file`` with an English gate of its own (round 15), unlike the shared one."""
    random_head(path)
    arrays = read_arrays(str(path))
    rng = np.random.default_rng(3)
    for part in PARTS:
        shared = arrays[f"gate_{part}"]
        own = rng.normal(size=shared.shape).astype(shared.dtype)
        arrays[f"gate_en_{part}"] = np.abs(own) + 0.5 if part == "scale" else own
    save_head(str(path), arrays)


def test_gate_point_reads_each_language_by_the_gate_it_is_judged_by(tmp_path: Path) -> None:
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    _with_english_gate(base)
    rows = _gate_rows()
    examples, queries, folds, lines = rows
    rates = Rates({"en": 0.02, "zh": 0.02}, 0.95, {"en": 0.15, "zh": 0.3}, {"en": 0.01, "zh": 0.02})
    gate_point(str(base), str(out), rows, rates)
    with np.load(base) as data:
        head = read_head(data)
    after = read_arrays(str(out))["thresholds"]
    for row, lang in enumerate(("en", "zh")):
        gate = out_of_fold(head.gate_for(lang), queries, folds)
        expected = gate_thresholds(examples, gate, lines, rates)[0][lang]
        assert np.allclose(after[row, list(GATE_COLUMNS)], expected), lang


def test_gate_point_for_named_languages_keeps_the_other_rows(tmp_path: Path) -> None:
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    _with_english_gate(base)
    rates = Rates({"en": 0.02, "zh": 0.02}, 0.95, {"en": 0.3, "zh": 0.3}, {"en": 0.02, "zh": 0.02})
    report = gate_point(str(base), str(out), _gate_rows(), rates, ["zh"])
    before, after = read_arrays(str(base))["thresholds"], read_arrays(str(out))["thresholds"]
    assert after[0].tobytes() == before[0].tobytes()
    assert not np.array_equal(after[1, list(GATE_COLUMNS)], before[1, list(GATE_COLUMNS)])
    assert report["languages"] == ["zh"] and "en" not in report
