"""Round 33's Chinese statements in more registers (memory/head/zh_told.py, zh_said_written.json): lasting
facts about one's life as "tell", the same registers with no lasting fact as "other"; written as said (no
typing step), gate rows only, untrusted, the same every run, screened, off unless asked for."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from memory.head import train, zh_told
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.corpus import read_written
from memory.head.zh_told import SAID_COUNTS, SAID_WRITTEN, _fill, said_rows, zh_told_examples
from memory.model import quick_extract
from tests.support.training_sources import stub_other_sources

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
CJK = re.compile(r"[\u4e00-\u9fff]")
SOURCES = {"gate-zh-said-tell": "tell", "gate-zh-said-other-say": "other"}


def test_each_side_makes_its_rows_with_its_label_the_same_every_run() -> None:
    rows = said_rows()
    assert Counter(e.source for e in rows) == Counter(
        {f"gate-zh-said-{side.replace('_', '-')}": n for side, n in SAID_COUNTS.items()}
    )
    assert all(e.asks == SOURCES[e.source] and e.lang == "zh" and CJK.search(e.text) for e in rows)
    assert all(e.keep is None and e.category is None for e in rows)  # gate rows: no keep, no category
    assert len({e.text for e in rows}) == len(rows)
    assert [e.text for e in rows] == [e.text for e in said_rows()]
    assert [e.text for e in rows] != [e.text for e in said_rows(seed=1)]
    assert not trusted(rows).any()  # the thresholds stay on labelled rows


def test_every_form_fills_and_no_form_repeats_an_earlier_round() -> None:
    data = read_written(SAID_WRITTEN)
    forms = [f for side in SAID_COUNTS for group in data[side].values() for f in group]
    rng = random.Random(3)
    assert all("{" not in _fill(f, data["slots"], rng) for f in forms)
    earlier: set[str] = set()
    for path in (zh_told.WRITTEN, zh_told.FAST_WRITTEN, zh_told.REGIONAL_WRITTEN):
        for key, part in read_written(path).items():
            if key not in ("about", "slots"):
                earlier.update(*(part.values() if isinstance(part, dict) else [part]))
    assert not set(forms) & earlier
    # written with spaces as typed; every other row of each side with commas in their place instead
    rows = said_rows()
    for side in ("gate-zh-said-tell", "gate-zh-said-other-say"):
        commas = [("，" in e.text) for e in rows if e.source == side]
        assert 0.3 < sum(commas) / len(commas) < 0.55


def test_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag in ("ON", "REGIONAL", "FAST", "SAID"):
        monkeypatch.setattr(zh_told, flag, False)
    assert zh_told_examples() == []
    assert [e.text for e in zh_told_examples(said=True)] == [e.text for e in said_rows()]
    assert not [e for e in zh_told_examples(fast=True) if "said" in e.source]
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--zh-said"], "", defaults).zh_said
    assert not arguments([], "", defaults).zh_said


def test_the_flag_turns_the_rows_on_in_training(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag in ("ON", "REGIONAL", "FAST", "SAID"):
        monkeypatch.setattr(zh_told, flag, False)
    for rule in ("QUESTION_HEADS", "SUBJECTLESS_STATEMENTS"):  # main sets them: restored after the test
        monkeypatch.setattr(quick_extract, rule, getattr(quick_extract, rule))
    monkeypatch.setattr(train, "_train", lambda args: 0)
    assert train.main(["--zh-said"]) == 0 and zh_told.SAID and not zh_told.FAST
    stub_other_sources(monkeypatch)
    examples, _, _ = train.training_examples(Path("nowhere"), None)
    assert Counter(e.source for e in examples) == Counter(
        {"gate-zh-said-tell": 300, "gate-zh-said-other-say": 300}
    )
    monkeypatch.setattr(zh_told, "SAID", False)
    assert train.training_examples(Path("nowhere"), None)[0] == []


def test_no_row_is_an_evaluation_text() -> None:
    if not (DATA / "locomo" / "locomo10.json").exists():
        pytest.skip("shared data not present")
    banned = train.evaluation_texts(DATA, REPO)
    rows = zh_told_examples(banned | set(train.chitchat_split(DATA, "lccc", held_out=True)), said=True)
    assert len(rows) >= 550
    assert not [e.text for e in rows if e.text.strip() in banned]
