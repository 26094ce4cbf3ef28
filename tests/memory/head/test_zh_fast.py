"""Round 27's Chinese gate rows typed fast (memory/head/zh_told.py, zh_fast_written.json): own questions as
"own", questions about the world as "other", lasting facts about one's life as "tell", moods, reactions and
requests with no lasting fact as "other" — all typed the way people type on a phone in a hurry, one typing
step for every label alike; gate rows only, untrusted, the same every run, screened, off unless asked for."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from memory.head import train, zh_told
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.corpus import Example
from memory.head.zh_told import (
    FAST_COUNTS,
    TYPED_TAILS,
    fast_rows,
    fast_written,
    regional_rows,
    zh_rows,
    zh_told_examples,
)
from memory.model import quick_extract
from tests.support.training_sources import stub_other_sources

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
CJK = re.compile(r"[\u4e00-\u9fff]")
SOURCES = {
    "gate-zh-fast-own": "own",
    "gate-zh-fast-other-ask": "other",
    "gate-zh-fast-tell": "tell",
    "gate-zh-fast-other-say": "other",
}
MARKS = tuple(
    t.strip() for t in TYPED_TAILS if not CJK.search(t) and t.strip() != "～"
)  # tails no form ends in


def by_source(rows: list[Example]) -> dict[str, list[str]]:
    return {source: [e.text for e in rows if e.source == source] for source in SOURCES}


def test_rows_are_deterministic_untrusted_gate_rows_of_the_counts_asked() -> None:
    rows = fast_rows()
    assert [(e.text, e.asks, e.source) for e in rows] == [(e.text, e.asks, e.source) for e in fast_rows()]
    assert [e.text for e in fast_rows(seed=7)] != [e.text for e in rows]
    assert FAST_COUNTS == {"own": 200, "other_ask": 200, "tell": 300, "other_say": 300}
    counts = Counter(e.source for e in rows)
    assert counts == {f"gate-zh-fast-{side.replace('_', '-')}": n for side, n in FAST_COUNTS.items()}
    assert {e.source: e.asks for e in rows} == SOURCES
    assert Counter(e.asks for e in rows) == Counter(own=200, tell=300, other=500)
    assert all(e.lang == "zh" and e.keep is None and e.category is None for e in rows)  # gate only
    assert not trusted(rows).any()  # thresholds stay chosen on the rows a person labelled
    assert all(len(CJK.findall(e.text)) >= 2 for e in rows)  # every row Chinese
    assert not [e.text for e in rows if "{" in e.text or "}" in e.text]  # every slot filled
    assert len({e.text for e in rows}) == len(rows)  # distinct after dedup
    assert not {e.text for e in rows} & ({e.text for e in zh_rows()} | {e.text for e in regional_rows()})


def test_the_written_forms_are_enough_and_typed_fast() -> None:
    data = fast_written()
    assert "no evaluation set" in data["about"]
    sizes = {side: sum(map(len, data[side].values())) for side in FAST_COUNTS}
    assert sizes["own"] >= 80 and sizes["other_ask"] >= 80
    assert sizes["tell"] >= 100 and sizes["other_say"] >= 100
    slots = set(data["slots"])
    for side in FAST_COUNTS:
        for forms in data[side].values():
            for form in forms:
                assert set(re.findall(r"\{(\w+)\}", form)) <= slots, form
    texts = by_source(fast_rows())
    for source, rows in texts.items():
        assert len([t for t in rows if re.search(r"\d", t)]) >= 30, source  # digits for numbers and money
        assert len([t for t in rows if not re.search(r"[？?]", t)]) >= 0.6 * len(rows), source
        assert len([t for t in rows if re.search(r"[a-zA-Z]{2,}", t)]) >= 5, source  # yyds, KPI, 60v …
    own = texts["gate-zh-fast-own"]
    assert 0.2 * len(own) <= len([t for t in own if "我" in t]) <= 0.6 * len(own)  # about a third with 我
    assert len([t for t in own if re.search(r"[没冇]$|了没|了冇|木有", re.sub(r"[？?\W]+$", "", t))]) >= 20
    tell = texts["gate-zh-fast-tell"]
    assert len([t for t in tell if "我" not in t]) >= 0.8 * len(tell)  # without 我, often
    assert len([t for t in tell if "还没" in t]) >= 10  # not yet done
    assert len([t for t in tell if "以前" in t or "改" in t]) >= 10  # updates


def test_the_typing_step_is_the_same_for_every_label(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zh_told, "TYPED_SHARE", 1.0)
    for source, rows in by_source(fast_rows()).items():
        assert not [t for t in rows if re.search(r"[，。？?、]", t)], (
            source
        )  # no comma, stop or question mark
    monkeypatch.setattr(zh_told, "TYPED_SHARE", 0.0)
    for source, rows in by_source(fast_rows()).items():
        assert [t for t in rows if re.search(r"[，？]", t)], source  # as written: some marks
        assert not [t for t in rows if t.endswith(MARKS)], source
    monkeypatch.setattr(zh_told, "TYPED_SHARE", 0.5)
    monkeypatch.setattr(zh_told, "_typed", lambda text, rng: text + "·typed")
    for source, rows in by_source(fast_rows()).items():  # exactly half of every side's rows typed
        assert len([t for t in rows if t.endswith("·typed")]) == len(rows) // 2, source
    monkeypatch.undo()
    for source, rows in by_source(fast_rows()).items():
        # about half typed: a tail on some, the rest as written (some marks kept)
        assert len([t for t in rows if t.endswith(MARKS)]) >= 0.02 * len(rows), source
        assert [t for t in rows if re.search(r"[，？]", t)], source


def test_the_typing_step_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zh_told, "TYPO_RATE", 0.0)
    monkeypatch.setattr(zh_told, "TYPED_TAIL_RATE", 0.0)
    assert zh_told._typed("房租交了没？", random.Random(1)) == "房租交了没"
    assert zh_told._typed("工资5000，每月10号发。", random.Random(1)) == "工资5000 每月10号发"
    monkeypatch.setattr(zh_told, "TYPO_RATE", 1.0)
    typo = {zh_told._typed("我已经在公司了", random.Random(i)) for i in range(40)}
    assert typo <= {"我以经在公司了", "我已经再公司了"} and len(typo) == 2  # one homophone typo each
    assert zh_told._typed("好的", random.Random(1)) == "好得"
    monkeypatch.setattr(zh_told, "TYPED_TAIL_RATE", 1.0)
    assert zh_told._typed("今天好冷", random.Random(1)).endswith(TYPED_TAILS)


def test_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag in ("ON", "REGIONAL", "FAST"):
        monkeypatch.setattr(zh_told, flag, False)
    assert zh_told_examples() == []
    assert not [e for e in zh_told_examples(on=True, regional=True) if "fast" in e.source]
    assert [e.text for e in zh_told_examples(fast=True)] == [e.text for e in fast_rows()]
    monkeypatch.setattr(zh_told, "FAST", True)
    assert len(zh_told_examples()) == 1000  # independent of ON and REGIONAL
    assert len(zh_told_examples(regional=True)) == 1400
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--zh-fast"], "", defaults).zh_fast
    assert not arguments([], "", defaults).zh_fast


def test_a_row_near_a_screened_text_is_dropped() -> None:
    rows = fast_rows()
    own, say = rows[0].text, rows[-1].text
    near = [re.sub(r"[？?]", "", own) + "。", "完全不相干的一句话", "hello there"]
    kept = [e.text for e in zh_told_examples(near, on=False, regional=False, fast=True)]
    assert own not in kept and say in kept and len(kept) == 999


def test_the_flag_turns_the_rows_on_in_training(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag in ("ON", "REGIONAL", "FAST"):
        monkeypatch.setattr(zh_told, flag, False)
    for rule in ("QUESTION_HEADS", "SUBJECTLESS_STATEMENTS"):  # main sets them: restored after the test
        monkeypatch.setattr(quick_extract, rule, getattr(quick_extract, rule))
    monkeypatch.setattr(train, "_train", lambda args: 0)
    assert train.main(["--zh-fast"]) == 0 and zh_told.FAST and not zh_told.ON and not zh_told.REGIONAL
    # training_examples adds them with rounds 19 and 26 off (every other source stubbed)
    stub_other_sources(monkeypatch)
    examples, _, _ = train.training_examples(Path("nowhere"), None)
    assert Counter(e.source for e in examples) == Counter(
        {
            "gate-zh-fast-own": 200,
            "gate-zh-fast-other-ask": 200,
            "gate-zh-fast-tell": 300,
            "gate-zh-fast-other-say": 300,
        }
    )
    monkeypatch.setattr(zh_told, "FAST", False)
    assert train.training_examples(Path("nowhere"), None)[0] == []


def test_no_row_is_an_evaluation_text() -> None:
    if not (DATA / "locomo" / "locomo10.json").exists():
        pytest.skip("shared data not present")
    banned = train.evaluation_texts(DATA, REPO)
    rows = zh_told_examples(banned | set(train.chitchat_split(DATA, "lccc", held_out=True)), fast=True)
    assert len(rows) >= 900
    assert not [e.text for e in rows if e.text.strip() in banned]
    assert all(isinstance(e, Example) for e in rows)
