"""A language's own gate network (round 14, ``gate_<lang>_*``): it judges that language's messages, the
shared gate the others'; the shipped head has English's own."""

from __future__ import annotations

from importlib import resources

import numpy as np

from memory.head.model import HEAD_FILE, load_head, read_head

EN, ZH = "where do I park the car these days?", "车现在停在哪里？"


def _arrays() -> dict[str, np.ndarray]:
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        return {name: np.array(data[name]) for name in data.files}


def _query(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal((1, 384)).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_the_shipped_head_reads_english_by_its_own_gate() -> None:
    head = load_head()
    assert set(head.gate_by_language) == {"en"}
    query = _query(1)
    assert head.gate(query, "en") != head.gate(query, "zh")
    assert head.gate(query, "zh") == head.gate(query)  # Chinese: the shared network


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
    told = after.told(np.vstack([_query(7), _query(8)]), "en")
    assert (told > 30).all()
