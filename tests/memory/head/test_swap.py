"""``memory.head.swap.head_file``: inside it the head and the question classifier are read from the given
file; after it, from the shipped one again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memory.head.asking import load_question
from memory.head.model import HEAD_FILE, load_head
from memory.head.outputs import read_arrays, save_head
from memory.head.swap import head_file

SHIPPED = str(Path(__file__).parents[3] / "memory" / "head" / HEAD_FILE)


def _changed(tmp_path: Path) -> Path:
    """The shipped head with another version, a Chinese cut no clause reaches and another question cut."""
    arrays = read_arrays(SHIPPED)
    meta = json.loads(str(arrays["meta"]))
    arrays["meta"] = np.array(json.dumps({**meta, "version": "test-swap"}))
    arrays["combined"] = arrays["combined"].copy()
    arrays["combined"][1, 3] = 1e6
    arrays["question_thresholds"] = arrays["question_thresholds"] + 1.0
    out = tmp_path / "other.npz"
    save_head(str(out), arrays)
    return out


def test_inside_the_block_the_other_file_is_read_and_after_it_the_shipped_one(tmp_path: Path) -> None:
    shipped, question = load_head(), load_question()
    assert shipped.version != "test-swap" and question is not None
    with head_file(_changed(tmp_path)):
        inside = load_head()
        assert inside.version == "test-swap"
        assert inside.combined is not None and inside.combined["zh"].threshold == 1e6
        other = load_question()
        assert other is not None and other.thresholds["en"] == pytest.approx(question.thresholds["en"] + 1.0)
    assert load_head().version == shipped.version
    after = load_question()
    assert after is not None and after.thresholds == question.thresholds


def test_a_missing_file_is_refused_before_anything_changes(tmp_path: Path) -> None:
    version = load_head().version
    with pytest.raises(FileNotFoundError, match="no head file"), head_file(tmp_path / "absent.npz"):
        pass
    assert load_head().version == version
