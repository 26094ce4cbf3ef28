"""Round 28 (``train --keep-also``, ``keep_also.py``): written gate rows of the sources named give the keep
network a label from their gate label — "tell" 1, "other" 0, "own" none — and nothing else sees it; and
``train --only keep`` chooses each language's rows on that language's own gate (``own_gate_networks``)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from memory.head import keep_also, train, zh_told
from memory.head.arguments import arguments
from memory.head.calibrate import given_networks, out_of_fold
from memory.head.corpus import Example
from memory.head.dialogues import keep_labels
from memory.head.language_gate import own_gate_networks
from memory.head.model import CATEGORIES, Classifier
from memory.head.outputs import read_arrays, save_head, write_head
from tests.support.training_sources import stub_other_sources

FAST = ("gate-zh-fast-tell", "gate-zh-fast-other-say")


def _rows() -> list[Example]:
    return [
        Example("我在上海工作", "zh", "written", 1, "work"),
        Example("哈哈哈", "zh", "lccc-train", 0),
        Example("房租900 5号交", "zh", "gate-zh-fast-tell", None, None, "tell"),
        Example("今天好堵 气死", "zh", "gate-zh-fast-other-say", None, None, "other"),
        Example("我社保几号扣", "zh", "gate-zh-fast-own", None, None, "own"),
        Example("地铁几点停", "zh", "gate-zh-fast-other-ask", None, None, "other"),
        Example("闺女每周六上钢琴课", "zh", "gate-zh-tell-dated", None, None, "tell"),
    ]


def test_without_prefixes_the_examples_are_the_same_object(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows()
    monkeypatch.setattr(keep_also, "PREFIXES", ())
    assert keep_also.for_keep(rows) is rows
    assert keep_also.for_keep(rows, ()) is rows


def test_tell_is_kept_other_is_not_own_and_other_sources_stay_unlabelled() -> None:
    rows = _rows()
    got = keep_also.for_keep(rows, FAST)
    assert [e.keep for e in got] == [1, 0, 1, 0, None, None, None]
    assert [e.category for e in got] == [e.category for e in rows]  # the category network never sees them
    assert [(e.text, e.source, e.asks) for e in got] == [(e.text, e.source, e.asks) for e in rows]
    every = keep_also.for_keep(rows, ("gate-zh-fast-",))  # a prefix over a question source too
    assert [e.keep for e in every] == [1, 0, 1, 0, None, 0, None]  # "own" never labelled
    assert keep_also.labelled(rows, FAST) == {"gate-zh-fast-tell": {1: 1}, "gate-zh-fast-other-say": {0: 1}}
    assert keep_also.for_keep(rows, ("gate-zh-tell-",))[6].keep == 1


def test_the_flag_parses_and_is_off_by_default() -> None:
    assert arguments([], "doc", {**_defaults()}).keep_also == ()
    args = arguments(["--keep-also", "gate-zh-fast-tell, gate-zh-fast-other-say,"], "doc", _defaults())
    assert args.keep_also == FAST


def _defaults() -> dict[str, object]:
    return {"seed": 1, "l2": 1e-4, "hidden": 8, "iterations": 1, "tell_false_rate": {"en": 0.02}}


def test_only_the_keep_network_reads_the_labels(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``train_keep`` trains on the fast statements when the prefixes are set; the keep labels the rest of a
    run reads (``keep_labels`` of the examples: the first model, thresholds) are unchanged."""
    stub_other_sources(monkeypatch)
    monkeypatch.setattr(zh_told, "FAST", True)
    examples, _, _ = train.training_examples(tmp_path, None)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def fake_cross_fit(x, y, folds, use, classes, fit, weights):  # type: ignore[no-untyped-def]
        seen.append((y.copy(), use.copy()))
        return None, np.zeros((len(y), 2))

    monkeypatch.setattr(train, "cross_fit", fake_cross_fit)
    n = len(examples)
    parts = (np.zeros((n, 3)), np.zeros(n, dtype=int), np.zeros(n, dtype=bool), 1)
    for prefixes in ((), FAST):
        monkeypatch.setattr(keep_also, "PREFIXES", prefixes)
        train.train_keep(examples, *parts)
    sources = np.array([e.source for e in examples])
    (_, use0), (y1, use1) = seen
    assert not use0.any()  # every row is a gate row: nothing for the keep network without the flag
    assert set(sources[use1]) == set(FAST)
    assert (y1[sources == "gate-zh-fast-tell"] == 1).all()
    assert (y1[sources == "gate-zh-fast-other-say"] == 0).all()
    assert not keep_labels(examples)[1].any()  # the examples themselves keep no label


def _net(rng: np.random.Generator, classes: int) -> Classifier:
    shapes = [(384,), (384,), (384, 8), (8,), (8, classes), (classes,)]
    return Classifier(*(rng.normal(size=(5, *s)).astype(np.float32) for s in shapes))


def _head_with_english_gate(path: Path) -> None:
    rng = np.random.default_rng(3)
    models = {"keep": _net(rng, 2), "category": _net(rng, len(CATEGORIES)), "gate": _net(rng, 3)}
    rows = {"thresholds": rng.normal(size=(2, 4)), "combined": rng.normal(size=(2, 4))}
    write_head(str(path), models, rows, {"version": "t", "sources": {}, "report": {}})
    arrays = read_arrays(str(path))
    arrays.update(_net(rng, 3).arrays("gate_en"))
    save_head(str(path), arrays)


def test_only_keep_reads_each_language_by_its_own_gate(tmp_path: Path) -> None:
    path = tmp_path / "head.npz"
    _head_with_english_gate(path)
    rng = np.random.default_rng(4)
    n = 40
    gate_examples = [Example(f"t{i}", "en" if i % 2 else "zh", "written") for i in range(n)]
    passages, queries = rng.normal(size=(n, 384)), rng.normal(size=(n, 384))
    folds, in_gate = np.arange(n) % 5, np.ones(n, dtype=bool)
    shared = given_networks(str(path), passages, queries, folds, in_gate)
    got = own_gate_networks(str(path), passages, queries, folds, in_gate, gate_examples)
    english = np.array([e.lang == "en" for e in gate_examples])
    with np.load(path) as data:
        own = Classifier.read(data, "gate_en")
    assert np.array_equal(got[4][~english], shared[4][~english])  # Chinese: the shared gate's
    assert np.allclose(got[4][english], out_of_fold(own, queries[english], folds[english]))
    assert not np.allclose(got[4][english], shared[4][english])
    assert np.array_equal(got[3], shared[3]) and got[5]["own_gates"] == ["en"]


def test_only_keep_starts_from_networks_when_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--only keep --networks FILE`` trains a keep network beside FILE's (before round 28 it took FILE's
    networks and trained none); without ``--networks``, beside ``--out``'s."""
    read: list[str] = []

    def fake_own(path, *rest):  # type: ignore[no-untyped-def]
        read.append(path)
        return None, "cat", "gate", None, np.zeros(1), {}

    monkeypatch.setattr(train, "own_gate_networks", fake_own)
    monkeypatch.setattr(train, "train_keep", lambda *a, **k: ("keep", np.ones(1)))
    rows = ([], [], None, None, None, None, None, None)
    for networks, out in (("n.npz", "o.npz"), (None, "o.npz")):
        args = argparse.Namespace(only="keep", networks=networks, out=out, seed=1, gate_only=None)
        assert train._networks(args, train.Shape(), rows)[0] == "keep"
    assert read == ["n.npz", "o.npz"]
