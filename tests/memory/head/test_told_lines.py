"""Chit-chat lines judged to state a fact (issue 35, round 31): the label file, the training relabel and
the bench's judged shares."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory.head import told_lines
from memory.head.corpus import CHITCHAT_PER_CORPUS, SEED, Example, chitchat_split
from memory.head.gate_training import gate_rows
from memory.head.told_lines import CorpusLabels, line_key, load_labels, relabel
from memory.model.quick_extract import candidates

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
FACT = "I have two daughters and we live in Leeds, and my wife teaches piano."
CHAT = "Ha, that film was so long."
SHARED = "I have two daughters and we live in Leeds, and the rain never stops."


def _labels(facts: list[str], unsure: list[str], no: list[str]) -> dict[str, CorpusLabels]:
    keys = {name: frozenset(line_key(t) for t in texts) for name, texts in (("f", facts), ("u", unsure))}
    judged = keys["f"] | keys["u"] | {line_key(t) for t in no}
    empty = CorpusLabels(frozenset(), frozenset(), frozenset())
    return {"dailydialog": CorpusLabels(judged, keys["f"], keys["u"]), "lccc": empty}


def _clauses(line: str) -> list[str]:
    return [t for c in candidates(line) for t in c.texts()]


def _rows() -> list[Example]:
    """A statement, the fact line, a line judged no, one that shares a clause with the fact line, their
    clause rows, and the fact line's text in the other corpus."""
    assert _clauses(FACT) and _clauses(CHAT), "the cutter gives both lines clauses"
    assert set(_clauses(FACT)) & set(_clauses(SHARED)), "SHARED shares a clause with FACT"
    return [
        Example("I live in Leeds.", "en", "persona-en", 1, None, "tell"),
        Example(FACT, "en", "dailydialog-train", 0, None, "other"),
        Example(CHAT, "en", "dailydialog-train", 0, None, "other"),
        Example(SHARED, "en", "dailydialog-train", 0, None, "other"),
        *(Example(t, "en", "dailydialog-train-clauses", 0) for t in _clauses(FACT) + _clauses(CHAT)),
        Example(FACT, "en", "lccc-train", 0, None, "other"),  # not judged in that corpus: unchanged
    ]


def test_line_key_is_the_stripped_texts_hash_prefix() -> None:
    assert line_key(" 我是四川人\n") == line_key("我是四川人")
    assert re.fullmatch(r"[0-9a-f]{16}", line_key("x"))
    assert line_key("a") != line_key("b")


def test_a_label_is_fact_unsure_no_or_unjudged() -> None:
    labels = _labels([FACT], ["maybe"], [CHAT])["dailydialog"]
    assert [labels.label(t) for t in (FACT, "maybe", CHAT, "never read")] == ["fact", "unsure", "no", None]


def test_off_changes_nothing_and_an_unknown_mode_is_refused() -> None:
    rows = _rows()
    assert relabel(rows, "off", _labels([FACT], [], [CHAT, SHARED])) == rows
    with pytest.raises(ValueError, match="one of off, drop, tell"):
        relabel(rows, "flip", _labels([FACT], [], [CHAT, SHARED]))


@pytest.mark.parametrize(
    ("mode", "source", "keep", "asks"), [("tell", "told", 1, "tell"), ("drop", "fact", None, None)]
)
def test_a_fact_line_leaves_the_chitchat_in_place(
    mode: str, source: str, keep: int | None, asks: str | None
) -> None:
    rows = _rows()
    got = relabel(rows, mode, _labels([FACT], ["maybe"], [CHAT, SHARED]))
    assert len(got) == len(rows) and [e.text for e in got] == [e.text for e in rows]
    fact = got[1]
    assert (fact.source, fact.keep, fact.asks) == (f"dailydialog-{source}", keep, asks)
    assert not fact.source.endswith("-train"), "the cut's chit-chat lines no longer count it"
    assert got[2:4] == rows[2:4], "lines judged no stay chit-chat"
    unlabelled = {e.text for e in got if e.source == "dailydialog-fact-clauses"}
    assert unlabelled == set(_clauses(FACT)) - set(_clauses(SHARED)), "a clause of a no line keeps its label"
    assert all(e.keep is None for e in got if e.source == "dailydialog-fact-clauses")
    kept_as_chat = [e for e in got if e.source == "dailydialog-train-clauses"]
    assert {e.text for e in kept_as_chat} == set(_clauses(CHAT)) | (
        set(_clauses(FACT)) & set(_clauses(SHARED))
    )
    assert got[0] == rows[0] and got[-1] == rows[-1], "other sources, other corpora's labels"
    assert told_lines.is_told(fact.source) == (mode == "tell") and not told_lines.is_told("persona-en")


@pytest.mark.parametrize("mode", ["tell", "drop"])
def test_the_gate_sees_no_unlabelled_row(mode: str) -> None:
    got = relabel(_rows(), mode, _labels([FACT], [], [CHAT, SHARED]))
    seen = [e for e, used in zip(got, gate_rows(got), strict=True) if used]
    assert all(e.asks is not None for e in seen), "a row without a gate label would be read as 'other'"
    assert any(e.source == "dailydialog-told" for e in seen) == (mode == "tell")


def test_the_trainer_flag_sets_the_mode_and_training_examples_relabel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory.head import train
    from memory.head.arguments import arguments, round_flags
    from tests.support.training_sources import stub_other_sources

    monkeypatch.setattr(told_lines, "MODE", "off")
    round_flags(
        arguments(
            ["--chitchat-facts", "tell"],
            "train",
            {"seed": 1, "l2": 0.1, "hidden": 2, "iterations": 1, "tell_false_rate": 0.02},
        )
    )
    assert told_lines.MODE == "tell"
    stub_other_sources(monkeypatch)
    monkeypatch.setattr(train, "build", lambda root, chat8=False: _rows())
    monkeypatch.setattr(told_lines, "load_labels", lambda: _labels([FACT], [], [CHAT, SHARED]))
    examples, _, _ = train.training_examples(DATA, None)
    assert [e.source for e in examples if e.text == FACT] == ["dailydialog-told", "lccc-train"]
    with pytest.raises(SystemExit):
        arguments(
            ["--chitchat-facts", "flip"],
            "train",
            {"seed": 1, "l2": 0.1, "hidden": 2, "iterations": 1, "tell_false_rate": 0.02},
        )


def test_an_unsure_line_stays_chitchat() -> None:
    rows = _rows()
    got = relabel(rows, "tell", _labels([], [FACT], [CHAT, SHARED]))
    assert got == rows


def test_the_label_file_refuses_a_fact_nobody_judged(tmp_path: Path) -> None:
    part = {"judged": [line_key("a")], "facts": [line_key("b")], "unsure": []}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"lccc": part, "dailydialog": part}), encoding="utf-8")
    with pytest.raises(ValueError, match="must be judged"):
        load_labels(path)


def test_the_shipped_labels_are_consistent() -> None:
    labels = load_labels()
    for corpus in told_lines.CORPORA:
        part = labels[corpus]
        assert part.facts and part.facts <= part.judged and not part.facts & part.unsure
        assert len(part.facts) < len(part.judged) / 5, "most chit-chat states no lasting fact"


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
@pytest.mark.parametrize("corpus", told_lines.CORPORA)
def test_every_training_line_and_the_first_held_out_lines_were_judged(corpus: str) -> None:
    import random

    labels = load_labels()[corpus]
    lines = list(dict.fromkeys(chitchat_split(DATA, corpus, held_out=False)))
    random.Random(f"{SEED}-{corpus}").shuffle(lines)
    assert all(labels.label(t) is not None for t in lines[:CHITCHAT_PER_CORPUS])
    held = list(dict.fromkeys(chitchat_split(DATA, corpus, held_out=True)))
    assert all(labels.label(t) is not None for t in held[:1000])


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
def test_the_bench_reports_the_judged_shares_beside_the_false_keeps() -> None:
    import asyncio

    from bench.everyday_measures import corpus_lines, false_keeps
    from memory.model.keeper import FactKeeper

    rows = [*corpus_lines(DATA, 40), {"text": "My name is Ron.", "lang": "en", "source": "dailydialog"}]
    got = asyncio.run(false_keeps(FactKeeper(), rows))  # the keyword rules: no embedder
    for source, n in (("lccc", 40), ("dailydialog", 41)):
        part = got[source]
        assert part["n"] == n and part["judged"] == 40, "the made-up line was never judged"
        assert 0 <= part["kept_without_fact"] <= part["false_keeps"] * n / 40
        assert part["labelled_facts"] is not None
