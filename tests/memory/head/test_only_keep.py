"""``train --only keep`` (issue 35, round 12): ``outputs.merge_keep`` keeps every array of the head file a run
started from but the keep network, the combined score and the keep and tell columns of the thresholds; and
``said_in``, the text each clause is weighed with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import memory.model.quick_extract as quick
from memory.head.model import CATEGORIES, Classifier
from memory.head.outputs import KEEP_COLUMNS, merge_keep, read_arrays, write_head, write_run


def _head_file(path: Path, seed: int, version: str) -> None:
    rng = np.random.default_rng(seed)

    def net(classes: int) -> Classifier:
        shapes = [(384,), (384,), (384, 8), (8,), (8, classes), (classes,)]
        return Classifier(*(rng.normal(size=(5, *s)).astype(np.float32) for s in shapes))

    models = {"keep": net(2), "category": net(len(CATEGORIES)), "gate": net(3)}
    rows = {"thresholds": rng.normal(size=(2, 4)), "combined": rng.normal(size=(2, 4))}
    meta = {"version": version, "sources": {"written": seed}, "report": {"category": "kept"}}
    write_head(str(path), models, rows, meta)


def test_merge_keep_changes_the_keep_side_and_nothing_else(tmp_path: Path) -> None:
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    _head_file(base, 1, "old")
    _head_file(out, 2, "new")  # as a run writes it: every array new
    before, written = read_arrays(str(base)), read_arrays(str(out))
    merge_keep(before, str(out), {"seed": 35})
    merged = read_arrays(str(out))
    assert set(merged) == set(before)
    for name in before:
        if name.startswith(("category_", "gate_")):
            assert np.array_equal(merged[name], before[name]), name  # bit for bit
        if name.startswith(("keep_", "combined")):
            assert np.array_equal(merged[name], written[name]), name
    for column in range(4):
        source = written if column in KEEP_COLUMNS else before
        assert np.array_equal(merged["thresholds"][:, column], source["thresholds"][:, column])
    meta = json.loads(str(merged["meta"]))
    assert meta["version"] == "new" and meta["sources"] == {"written": 2}
    assert meta["report"] == {"category": "kept", "keep_only": {"seed": 35}}


def test_said_in_is_the_message_or_each_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "I live in Lyon. Can you help me with something?"
    found = quick.candidates(text)
    monkeypatch.setattr(quick, "SENTENCE_TELL", False)
    assert quick.said_in(found, text) == [text]
    monkeypatch.setattr(quick, "SENTENCE_TELL", True)
    assert quick.said_in(found, text) == ["I live in Lyon"]
    one = "I live in Lyon"
    assert quick.said_in(quick.candidates(one), one) == [one]  # the message itself: retrieval's vector


def test_write_run_over_the_file_it_started_from(tmp_path: Path) -> None:
    """``train --only keep`` writes over ``head.npz`` by default: the file is read before it is written."""
    path, fresh = tmp_path / "head.npz", tmp_path / "fresh.npz"
    _head_file(path, 1, "old")
    _head_file(fresh, 2, "new")
    before, written = read_arrays(str(path)), read_arrays(str(fresh))
    models = {
        name: Classifier(*(written[f"{name}_{part}"] for part in ("mean", "scale", "w1", "b1", "w2", "b2")))
        for name in ("keep", "category", "gate")
    }
    rows = {"thresholds": written["thresholds"], "combined": written["combined"]}
    write_run(str(path), models, rows, {"version": "new", "sources": {}, "report": {"r": 1}}, str(path))
    merged = read_arrays(str(path))
    assert np.array_equal(merged["gate_w1"], before["gate_w1"])
    assert np.array_equal(merged["keep_w1"], written["keep_w1"])
