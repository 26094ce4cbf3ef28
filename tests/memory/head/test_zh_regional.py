"""Round 26's Chinese gate rows in regional Mandarin (memory/head/zh_told.py, zh_regional_written.json):
questions about one's own life in 四川/东北/湖南/广东/北京/台湾 registers as "own", the same registers
about the world as "other" — gate rows only, untrusted, the same every run, screened, off unless asked for."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from memory.head import train, zh_told
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.corpus import Example
from memory.head.zh_told import REGIONAL_COUNTS, regional_rows, zh_rows, zh_told_examples
from memory.model import quick_extract
from tests.support.training_sources import stub_other_sources

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_rows_are_deterministic_untrusted_gate_rows_of_two_labels() -> None:
    rows = regional_rows()
    assert [(e.text, e.asks, e.source) for e in rows] == [(e.text, e.asks, e.source) for e in regional_rows()]
    assert [e.text for e in regional_rows(seed=7)] != [e.text for e in rows]
    assert Counter(e.asks for e in rows) == Counter(REGIONAL_COUNTS) == Counter(own=200, other=200)
    sources = {"gate-zh-regional-own": "own", "gate-zh-regional-other": "other"}
    assert {e.source: e.asks for e in rows} == sources
    assert all(e.lang == "zh" and e.keep is None and e.category is None for e in rows)  # gate only
    assert not trusted(rows).any()  # thresholds stay chosen on the rows a person labelled
    assert all(len(CJK.findall(e.text)) >= 3 for e in rows)  # every row Chinese
    assert not [e.text for e in rows if "{" in e.text or "}" in e.text]  # every slot filled
    assert len({e.text for e in rows}) == len(rows)
    assert not {e.text for e in rows} & {e.text for e in zh_rows()}


def test_registers_and_forms_are_on_both_labels() -> None:
    rows = regional_rows()
    marks = {
        "四川": r"好久|好多|哪个|咋个|啥子|没得|嗦",
        "东北": r"咋整|嘎哈|贼|搁哪|哪疙瘩",
        "湖南/湖北": r"么子|么样|冇得|哪么",
        "广东": r"几多|几时|边个|点样|有冇|未$|咗",
        "北京": r"多会儿",
        "台湾": r"喔|吼|齁|欸|礼拜",
        "either/or": r"还是",
        "来着": r"来着",
    }
    for label in ("own", "other"):
        texts = [re.sub(r"[？?😂🤔]+$", "", e.text) for e in rows if e.asks == label]
        for what, pattern in marks.items():
            assert len([t for t in texts if re.search(pattern, t)]) >= 3, (label, what)
    own = [e.text for e in rows if e.asks == "own"]
    assert len([t for t in own if re.search(r"[没冇]|了没有|未", t)]) >= 30  # A-not-A, 了没
    assert len([t for t in own if "我" not in t]) >= 120 and len([t for t in own if "我" in t]) >= 20
    assert len([t for t in own if not re.search(r"[？?]", t)]) >= 30  # no question mark


def test_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zh_told, "ON", False)
    monkeypatch.setattr(zh_told, "REGIONAL", False)
    assert zh_told_examples() == []
    assert not [e for e in zh_told_examples(on=True) if "regional" in e.source]
    assert [e.text for e in zh_told_examples(regional=True)] == [e.text for e in regional_rows()]
    monkeypatch.setattr(zh_told, "REGIONAL", True)
    assert len(zh_told_examples()) == 400  # independent of ON
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--zh-regional"], "", defaults).zh_regional
    assert not arguments([], "", defaults).zh_regional


def test_a_row_near_a_screened_text_is_dropped() -> None:
    rows = regional_rows()
    own, other = rows[0].text, rows[-1].text
    near = [re.sub(r"[？?]", "", own) + "！", "完全不相干的一句话", "hello there"]
    kept = [e.text for e in zh_told_examples(near, on=False, regional=True)]
    assert own not in kept and other in kept and len(kept) == 399


def test_the_flag_turns_the_rows_on_in_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zh_told, "ON", False)
    monkeypatch.setattr(zh_told, "REGIONAL", False)
    for rule in ("QUESTION_HEADS", "SUBJECTLESS_STATEMENTS"):  # main sets them: restored after the test
        monkeypatch.setattr(quick_extract, rule, getattr(quick_extract, rule))
    monkeypatch.setattr(train, "_train", lambda args: 0)
    assert train.main(["--zh-regional"]) == 0 and zh_told.REGIONAL and not zh_told.ON
    # training_examples adds them with round 19's rows off (every other source stubbed)
    stub_other_sources(monkeypatch)
    examples, _, _ = train.training_examples(Path("nowhere"), None)
    assert Counter(e.source for e in examples) == {"gate-zh-regional-own": 200, "gate-zh-regional-other": 200}
    monkeypatch.setattr(zh_told, "REGIONAL", False)
    assert train.training_examples(Path("nowhere"), None)[0] == []


def test_no_row_is_an_evaluation_text() -> None:
    if not (DATA / "locomo" / "locomo10.json").exists():
        pytest.skip("shared data not present")
    banned = train.evaluation_texts(DATA, REPO)
    rows = zh_told_examples(banned | set(train.chitchat_split(DATA, "lccc", held_out=True)), regional=True)
    assert len(rows) >= 380
    assert not [e.text for e in rows if e.text.strip() in banned]
    assert all(isinstance(e, Example) for e in rows)
