"""How the head is read (round 17): a language's own gate network is read from the file on its first use
(``model.LanguageNetworks``), with the same answers as a head read at once; ``Classifier.logits`` multiplies
views shaped once, with the same numbers as the arrays reshaped per call."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memory.head.model import HEAD_FILE, Classifier, LanguageNetworks, read_head
from memory.head.outputs import save_head

EN, ZH = "where do I park the car these days?", "车现在停在哪里？"


def _vectors(count: int, seed: int = 3) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _with_english_gate(tmp_path: Path) -> Path:
    """The shipped head's arrays with an English gate of its own (the shared gate leaning to "own")."""
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        arrays = {name: np.array(data[name]) for name in data.files if not name.startswith("gate_en_")}
    for part in ("mean", "scale", "w1", "b1", "w2", "b2"):
        arrays[f"gate_en_{part}"] = np.array(arrays[f"gate_{part}"], dtype=np.float32)
    arrays["gate_en_b2"] = arrays["gate_en_b2"] + np.array([2.0, 0.0, -2.0], dtype=np.float32)
    out = tmp_path / "head.npz"
    save_head(str(out), arrays)
    return out


def test_a_language_gate_is_read_on_first_use_with_the_answers_of_an_eager_read(tmp_path: Path) -> None:
    path = _with_english_gate(tmp_path)
    opened: list[str] = []

    @contextmanager
    def reopen() -> Iterator[Any]:
        opened.append("again")
        with np.load(path) as data:
            yield data

    with np.load(path) as data:
        eager = read_head(data)
    with np.load(path) as data:
        lazy = read_head(data, reopen=reopen)
    gates = lazy.gate_by_language
    assert isinstance(gates, LanguageNetworks)
    assert "en" in gates and "zh" not in gates and list(gates) == ["en"] and len(gates) == 1
    assert gates.loaded == frozenset() and opened == []
    queries = _vectors(50)
    for query in queries:
        assert lazy.verdict(query, ZH) == eager.verdict(query, ZH)  # the shared gate: nothing read
    assert gates.loaded == frozenset() and opened == []
    for query in queries:
        assert lazy.gate(query, "en") == eager.gate(query, "en")
        assert lazy.verdict(query, EN) == eager.verdict(query, EN)
    assert np.array_equal(lazy.told(queries, "en"), eager.told(queries, "en"))
    assert gates.loaded == frozenset({"en"}) and opened == ["again"]  # read once
    assert lazy.gate(queries[0], "en") != lazy.gate(queries[0], "zh")  # the English gate answers English


def test_threads_asking_at_once_read_a_language_gate_once(tmp_path: Path) -> None:
    path = _with_english_gate(tmp_path)
    opened: list[int] = []

    @contextmanager
    def reopen() -> Iterator[Any]:
        opened.append(1)
        with np.load(path) as data:
            yield data

    gates = LanguageNetworks(["en"], reopen)
    got: list[Classifier] = []
    threads = [threading.Thread(target=lambda: got.append(gates["en"])) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(got) == 8 and all(network is got[0] for network in got)
    assert opened == [1]


def test_logits_are_the_members_networks_computed_one_by_one() -> None:
    rng = np.random.default_rng(11)
    members, hidden, classes = 3, 16, 3
    parts = (
        rng.normal(size=(members, 384)),
        rng.uniform(0.5, 2.0, size=(members, 384)),
        rng.normal(size=(members, 384, hidden)),
        rng.normal(size=(members, hidden)),
        rng.normal(size=(members, hidden, classes)),
        rng.normal(size=(members, classes)),
    )
    ensemble = Classifier(*(np.asarray(a, dtype=np.float32) for a in parts))
    single = Classifier(*(np.asarray(a[0], dtype=np.float32) for a in parts))
    vectors = _vectors(6)
    logits = ensemble.logits(vectors)
    assert logits.shape == (members, 6, classes) and ensemble.members == members
    for k in range(members):
        mean, scale, w1, b1, w2, b2 = (np.asarray(a[k], dtype=np.float32) for a in parts)
        expected = np.maximum(0, ((vectors - mean) / scale) @ w1 + b1) @ w2 + b2
        assert np.allclose(logits[k], expected, rtol=1e-5, atol=1e-5)
    assert single.members == 1 and single.logits(vectors).shape == (1, 6, classes)
    assert np.array_equal(single.logits(vectors)[0], logits[0])
    assert np.allclose(ensemble.logits(vectors[0]), logits[:, :1, :], rtol=1e-5, atol=1e-4)  # one row


def test_a_head_with_a_combined_score_reads_no_keep_or_tell_threshold() -> None:
    """Why round 17 could ship either English keep threshold (DATA_CARD "Round 17, shipped"): with the
    combined score (round 6 on) a clause is kept by it alone; the keep and tell columns of ``thresholds``
    are only the fallback of a head without one."""
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        arrays = {name: np.array(data[name]) for name in data.files}
    assert "combined" in arrays
    moved = dict(arrays)
    moved["thresholds"] = arrays["thresholds"] - np.array([[1e9, 0.0, 0.0, 1e9]] * 2, dtype=np.float32)
    shipped, other = read_head(arrays), read_head(moved)
    passages, queries = _vectors(40, seed=5), _vectors(40, seed=6)
    texts = [EN if i % 2 else ZH for i in range(40)]
    said = [f"{t} and more words around it" for t in texts]
    first = shipped.fact_verdicts(passages, texts, queries, said, queries)
    assert first == other.fact_verdicts(passages, texts, queries, said, queries)
    assert shipped.fact_verdicts(passages, texts, queries[:1], EN) == other.fact_verdicts(
        passages, texts, queries[:1], EN
    )
    assert not all(first)
    fallback = read_head({k: v for k, v in moved.items() if not k.startswith("combined")})
    assert all(fallback.fact_verdicts(passages, texts, queries, said, queries))  # the columns did move
