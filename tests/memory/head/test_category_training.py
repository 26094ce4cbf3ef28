"""The category classifier's training (memory/head/category_training.py, issue 35 round 11): its own data
(corrections by the guide, category-only sentences, never an evaluation item), an ensemble of members,
and ``train --only category``, which changes the category arrays of a head file and nothing else."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import memory.head.category_training as training
from memory.head.corpus import Example
from memory.head.model import CATEGORIES, Classifier, read_head
from memory.head.outputs import write_head
from memory.head.train import Shape, train_mlp
from tests.support import REPO

FAST = partial(train_mlp, shape=Shape(iterations=20, hidden=8))


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _examples(n: int) -> list[Example]:
    """Labelled statements of every category, and unlabelled statements (pseudo-label candidates)."""
    out = [Example(f"s{i}", "en", "written", 1, CATEGORIES[i % len(CATEGORIES)], "tell") for i in range(n)]
    return out + [Example(f"p{i}", "en", "persona-en", 1, None, "tell") for i in range(n)]


def _head_file(path: Path) -> None:
    rng = np.random.default_rng(1)

    def net(classes: int, members: int) -> Classifier:
        shapes = [(384,), (384,), (384, 8), (8,), (8, classes), (classes,)]
        return Classifier(*(rng.normal(size=(members, *s)).astype(np.float32) for s in shapes))

    models = {"keep": net(2, 5), "category": net(len(CATEGORIES), 1), "gate": net(3, 5)}
    rows = {"thresholds": np.ones((2, 4)), "combined": np.full((2, 4), 0.5)}
    write_head(str(path), models, rows, {"version": "old", "sources": {"written": 1}, "report": {"gate": 1}})


def test_only_category_changes_the_category_arrays_and_nothing_else(tmp_path: Path) -> None:
    base, out = tmp_path / "base.npz", tmp_path / "out.npz"
    _head_file(base)
    examples = _examples(40)
    inputs = (examples, _vectors(len(examples)), np.arange(len(examples)) % 5 == 0)
    report = training.only_category(str(base), str(out), inputs, FAST, 35)
    with np.load(base) as old, np.load(out) as new:
        assert set(old.files) == set(new.files)
        for name in old.files:
            if name.startswith("category_") or name == "meta":
                continue
            assert np.array_equal(old[name], new[name]), name
        assert not np.array_equal(old["category_w1"], new["category_w1"])
        meta = json.loads(str(new["meta"]))
        head = read_head(new)
    assert meta["sources"] == {"written": 1} and meta["report"]["gate"] == 1
    assert meta["report"]["category"] == report and report["members"] == training.MEMBERS
    assert head.category_w.members == training.MEMBERS
    assert len(head.categories(_vectors(3, seed=2))) == 3


def test_the_ensemble_is_deterministic_and_has_its_members(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "MEMBERS", 3)
    x, y = _vectors(30), np.arange(30) % len(CATEGORIES)
    first = training.ensemble(FAST, x, y, len(CATEGORIES), 35)
    again = training.ensemble(FAST, x, y, len(CATEGORIES), 35)
    assert first.members == 3 and np.array_equal(first.w1, again.w1)
    assert not np.array_equal(first.w1[0], first.w1[1])  # each member from its own seed


def test_corrections_change_labelled_rows_only() -> None:
    rows = [
        Example("i grew up on a farm", "en", "written-2", 1, "event", "tell"),
        Example("i grew up on a farm", "en", "persona-en", 1, None, "tell"),
        Example("my dad grew up on a farm", "en", "written", 1, "event", "tell"),
    ]
    fixed = training.corrected(rows, {"i grew up on a farm": "identity"})
    assert [e.category for e in fixed] == ["identity", None, "event"]


def test_category_inputs_add_own_sentences_but_no_evaluation_item_nor_a_row_twice() -> None:
    mine = training.category_written()
    some = mine["statements_en"]["identity"][0]
    banned = {mine["statements_zh"]["identity"][0]}
    examples = [Example(some, "en", "written", 1, "identity", "tell")]
    rows, vectors, validation = training.category_inputs(
        examples, _vectors(1), np.zeros(1, dtype=bool), lambda texts: _vectors(len(texts)), banned
    )
    texts = [e.text for e in rows]
    assert texts.count(some) == 1 and not banned & set(texts)
    assert len(rows) == len(vectors) == len(validation) and not validation[1:].any()
    assert {e.source for e in rows[1:]} <= {"written-category-en", "written-category-zh"} | {
        f"written-chat8-{lang}" for lang in ("en", "zh")
    }


def test_round_47s_boundary_sentences_join_only_under_their_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """``train --category-boundaries`` (``BOUNDARIES``) adds round 47's sentences, under their own source;
    without it the rows are the earlier heads' (their commands rebuild them)."""
    mine = training.category_written()
    before = training.extra_examples(mine)
    assert all(e.source.startswith("written-category-") for e in before)
    assert not any(e.source.startswith("written-category-boundary-") for e in before)
    monkeypatch.setattr(training, "BOUNDARIES", True)
    after = training.extra_examples(mine)
    added = [e for e in after if e not in before]
    assert len(after) == len(before) + len(added) and all(e in after for e in before)
    assert {e.source for e in added} == {"written-category-boundary-en", "written-category-boundary-zh"}
    assert {e.category for e in added} <= set(CATEGORIES)  # no credential: a rule files those
    # what the round wrote most of: facts about one's people and pets, filed as events, not as who one is
    events = [e for e in added if e.category == "event"]
    assert len(events) > len([e for e in added if e.category == "identity"])


def test_no_category_sentence_is_an_item_of_a_labelled_set() -> None:
    mine = training.category_written()
    boundaries = json.loads(training.BOUNDARIES_WRITTEN.read_text(encoding="utf-8"))
    written = {
        t
        for rows in (mine, boundaries)
        for key in ("statements_en", "statements_zh")
        for ts in rows[key].values()
        for t in ts
    }
    written |= set(mine["corrections"])
    items: set[str] = set()
    for path in sorted((REPO / "bench" / "data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        items |= {r["text"] for r in data.get("rows", []) + data.get("chitchat", [])}
        items |= {t for p in data.get("pairs", []) for t in (p["tell"], p["ask"])}
    overlap = written & items  # only the overlap is shown: the blind sets are not to be read
    assert overlap == set(), sorted(overlap)
    assert set(mine["corrections"].values()) <= set(CATEGORIES)
