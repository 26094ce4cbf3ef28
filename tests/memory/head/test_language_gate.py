"""A language's own gate network (rounds 14 and 15, ``gate_<lang>_*``, ``language_gate.own_gates``): it
judges that language's messages, the shared gate the others'."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from memory.head.language_gate import own_gates
from memory.head.model import HEAD_FILE, load_head, read_head
from memory.head.outputs import save_head

EN, ZH = "where do I park the car these days?", "车现在停在哪里？"


def _arrays() -> dict[str, np.ndarray]:
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        return {name: np.array(data[name]) for name in data.files}


def _query(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal((1, 384)).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_a_head_without_a_language_gate_reads_both_by_the_shared_one() -> None:
    head = load_head()
    query = _query(1)
    for lang in (*head.gate_by_language, "en", "zh"):
        if lang not in head.gate_by_language:
            assert head.gate(query, lang) == head.gate(query)


def test_a_language_gate_decides_only_its_language() -> None:
    arrays = _arrays()
    plain = {k: v for k, v in arrays.items() if not k.startswith("gate_en_")}
    eager = dict(plain)
    for part in ("mean", "scale", "w1", "b1", "w2", "b2"):
        eager[f"gate_en_{part}"] = np.array(arrays[f"gate_{part}"], dtype=np.float32)
    eager["gate_en_b2"] = eager["gate_en_b2"] + np.array([40.0, 0.0, -40.0], dtype=np.float32)  # always "own"
    before, after = read_head(plain), read_head(eager)
    for seed in range(5):
        query = _query(seed)
        assert after.wants_memory(query, EN) and after.asks_own(query, EN)
        assert after.wants_memory(query, ZH) == before.wants_memory(query, ZH)
        assert after.asks_own(query, ZH) == before.asks_own(query, ZH)
    # its "own or tell" log-odds rise by at least the 40 its "other" lost (logsumexp(own + 40, tell) ≥
    # logsumexp(own, tell)), whatever the shared network reads in a random vector
    queries = np.vstack([_query(7), _query(8)])
    assert (after.told(queries, "en") - before.told(queries, "en") >= 40 - 1e-3).all()


def test_a_new_gate_for_one_language_leaves_the_other_as_it_was(tmp_path: Path) -> None:
    arrays = _arrays()
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    save_head(str(base), {k: v for k, v in arrays.items() if not k.startswith(("gate_en_", "gate_zh_"))})
    new = {k: v for k, v in arrays.items() if not k.startswith(("gate_en_", "gate_zh_"))}
    new["gate_b2"] = new["gate_b2"] + np.array([0.0, 3.0, -3.0], dtype=np.float32)  # reads more as telling
    new["thresholds"] = new["thresholds"] + 1.0
    new["combined"] = new["combined"] + 0.5
    save_head(str(out), new)
    report = own_gates(str(base), str(out), ["en"])
    assert report["languages"] == ["en"]
    with np.load(base) as data:
        before = read_head(data)
    with np.load(out) as data:
        after = read_head(data)
        assert data["gate_w1"].dtype == np.float16 and data["gate_en_w1"].dtype == np.float16
    assert out.stat().st_size <= 2_000_000
    assert after.combined is not None and before.combined is not None
    assert after.thresholds["zh"] == before.thresholds["zh"] and after.combined["zh"] == before.combined["zh"]
    assert after.thresholds["en"].gate == before.thresholds["en"].gate + 1.0
    assert np.isclose(after.combined["en"].a, before.combined["en"].a + 0.5, atol=1e-5)
    for seed in range(3):
        query = _query(seed)
        assert abs(after.gate(query, "zh")[1] - before.gate(query, "zh")[1]) < 0.05  # float16 first layer
        assert after.gate(query, "en")[1] > before.gate(query, "en")[1] + 2.0


def test_a_head_with_a_language_gate_is_not_merged_again(tmp_path: Path) -> None:
    arrays = _arrays()
    plain = {k: v for k, v in arrays.items() if not k.startswith(("gate_en_", "gate_zh_"))}
    twice = dict(plain)
    for part in ("mean", "scale", "w1", "b1", "w2", "b2"):
        twice[f"gate_en_{part}"] = plain[f"gate_{part}"]
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    save_head(str(base), twice)
    save_head(str(out), plain)
    with pytest.raises(ValueError):
        own_gates(str(base), str(out), ["en"])
