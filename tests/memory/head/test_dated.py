"""Round 17's gate rows (memory/head/dated.py): dated and scheduled statements about one's people and things
said without I/my/our, as "tell", beside public dates as "other" — gate rows only, never an evaluation item,
the same every run, off unless asked for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory.head import dated
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.dated import dated_examples, dated_statements, dated_written, ordinal, world_dated
from memory.head.train import evaluation_texts

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|our|ours|we|us)\b", re.I)


def test_statements_are_tell_gate_rows_without_the_first_person() -> None:
    rows = dated_statements()
    assert rows == dated_statements() and len(rows) == dated.TELL_PER_LANGUAGE
    assert len({e.text for e in rows}) == len(rows)
    assert all(e.asks == "tell" and e.keep is None and e.category is None for e in rows)
    assert {e.source for e in rows} == {"gate-dated-en"} and {e.lang for e in rows} == {"en"}
    assert not [e.text for e in rows if FIRST_PERSON.search(e.text)]
    assert not [e.text for e in rows if "{" in e.text or "}" in e.text]  # every slot filled
    assert dated_statements(seed=7) != rows  # the seed draws other fillings


def test_public_dates_are_other_gate_rows() -> None:
    rows = world_dated()
    assert len(rows) == dated.WORLD_PER_LANGUAGE and len({e.text for e in rows}) == len(rows)
    assert all(e.asks == "other" and e.keep is None and e.source == "gate-dated-world-en" for e in rows)
    assert not [e.text for e in rows if FIRST_PERSON.search(e.text) or "{" in e.text]
    assert not {e.text for e in rows} & {e.text for e in dated_statements()}


def test_the_statements_cover_many_kinds_and_time_phrasings() -> None:
    texts = [e.text for e in dated_statements()]
    said = {
        "weekday": r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day",
        "every other": r"\bevery (?:other|second|third)\b",
        "nth weekday of the month": r"\b(?:first|second|last) \w+day of\b",
        "clock time": r"\b\d{1,2}[:.]\d\d\b|\bhalf (?:six|past)|\bquarter to\b|\d(?:am|pm)\b",
        "month": r"\b(?:January|March|July|October|Dec|Sept)\b",
        "day of the month": r"\b\d{1,2}(?:st|nd|rd|th)\b",
        "birthday": r"\bbirthday\b",
        "bill": r"\b(?:comes out|goes out|gets paid|payday)\b",
        "due": r"\b(?:due|expires|renewing|deadline)\b",
        "chore or visitor": r"\b(?:recycling|cleaner|bins?|laundry|lawn|delivery)\b",
        "class": r"\b(?:class|lecture|seminar|tutorial)\b",
        "casual": r"^(?:btw|fyi|heads up)|\b(?:btw|fyi|lol)$",
    }
    for what, pattern in said.items():
        hits = [t for t in texts if re.search(pattern, t, re.I)]
        assert len(hits) >= 8, (what, len(hits))
    kinds = dated_written()["kinds_en"]
    assert len(kinds) >= 10 and sum(len(k["forms"]) for k in kinds.values()) >= 80


def test_ordinals() -> None:
    assert [ordinal(d) for d in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 28, 30)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "28th", "30th",
    ]  # fmt: skip


def test_off_unless_asked_and_never_trusted_for_thresholds() -> None:
    assert dated.ON is False and dated_examples() == []
    rows = dated_examples(on=True)
    assert len(rows) == dated.TELL_PER_LANGUAGE + dated.WORLD_PER_LANGUAGE
    assert not trusted(rows).any()  # the thresholds stay chosen on rows a person labelled
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    asked = arguments(["--dated", "--round14"], "", defaults)
    assert asked.dated and asked.round14 and not arguments([], "", defaults).dated


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
def test_no_row_is_an_evaluation_item() -> None:
    banned = evaluation_texts(DATA, REPO)  # the trainer's refusal check
    assert len(banned) > 1000
    rows = dated_examples(on=True)
    assert not [e.text for e in rows if e.text.strip() in banned]
