"""A second language's own gate beside the first (round 19, ``language_gate.own_gates``): a Chinese gate
trained on a head that has English's own gate leaves every English array and English's rows bit for bit, and
the file keeps two gate networks, not three."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.head.language_gate import ROWS, own_gates
from memory.head.model import LANGUAGES, PARTS, read_head
from memory.head.outputs import read_arrays, save_head
from tests.memory.head.test_language_gate import _arrays, _query  # the shipped head's arrays, a unit query

EN, ZH = LANGUAGES.index("en"), LANGUAGES.index("zh")


def _with_english_gate(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A base with an English gate of its own that differs from the shared one (whatever the shipped head)."""
    base = dict(arrays)
    for part in PARTS:
        base.setdefault(f"gate_en_{part}", np.array(arrays[f"gate_{part}"]))
    base["gate_en_b2"] = np.asarray(base["gate_en_b2"], dtype=np.float32) + np.float32(0.25)
    return base


def _new_run(base: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What ``train --gate-only base`` writes: a new shared gate and new rows, no language gate."""
    new = {k: v for k, v in base.items() if not k.startswith(("gate_en_", "gate_zh_"))}
    shift = np.array([0.0, 3.0, -3.0], dtype=np.float32)  # reads more as telling
    new["gate_b2"] = np.asarray(new["gate_b2"], dtype=np.float32) + shift
    for name in ROWS:
        if name in new:
            new[name] = np.asarray(new[name]) + 1.0
    return new


def test_a_chinese_gate_beside_english_leaves_english_bit_for_bit(tmp_path: Path) -> None:
    base_arrays = _with_english_gate(_arrays())
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    save_head(str(base), base_arrays)
    save_head(str(out), _new_run(base_arrays))
    report = own_gates(str(base), str(out), ["zh"])
    assert report["kept_own"] == ["en"] and report["stored"] == "shared"
    before, after = read_arrays(str(base)), read_arrays(str(out))
    for part in PARTS:  # English's own gate: the same bytes
        old, new = before[f"gate_en_{part}"], after[f"gate_en_{part}"]
        assert old.dtype == new.dtype and old.tobytes() == new.tobytes()
    assert not [k for k in after if k.startswith("gate_zh_")]  # two gate networks, not three
    assert after["gate_w1"].dtype == np.float16
    for name in ROWS:
        if name in before:
            assert after[name][EN].tobytes() == before[name][EN].tobytes()  # English's row, bit for bit
            assert np.allclose(after[name][ZH], before[name][ZH] + 1.0)  # Chinese's from the new run
    keys = {k for k in before if not k.startswith("gate_") and k not in ROWS and k != "meta"}
    assert keys <= set(after) and all(after[k].tobytes() == before[k].tobytes() for k in keys)
    with np.load(base) as data:
        head_before = read_head(data)
    with np.load(out) as data:
        head_after = read_head(data)
    for seed in range(4):
        query = _query(seed)
        assert head_after.gate(query, "en") == head_before.gate(query, "en")
        assert head_after.gate(query, "zh")[1] > head_before.gate(query, "zh")[1]  # the new gate tells more
    assert head_after.thresholds["en"] == head_before.thresholds["en"]


def test_a_language_with_a_gate_of_its_own_is_not_given_another(tmp_path: Path) -> None:
    base_arrays = _with_english_gate(_arrays())
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    save_head(str(base), base_arrays)
    save_head(str(out), _new_run(base_arrays))
    with pytest.raises(ValueError):
        own_gates(str(base), str(out), ["en"])
    with pytest.raises(ValueError):
        own_gates(str(base), str(out), ["fr"])
