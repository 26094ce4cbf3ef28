"""Round 18's gate rows (memory/head/own_asked.py): plain first-person questions about one's own life, as
"own" — gate rows only, never an evaluation item, the same every run, off unless asked for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory.head import own_asked
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.own_asked import own_asked_examples, own_asked_written
from memory.head.train import evaluation_texts

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
I_ASK = re.compile(r"\b(?:I|I'd|my|me|our)\b")


def _plain(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()


def test_rows_are_distinct_first_person_own_gate_rows() -> None:
    rows = own_asked.own_asked()
    assert rows == own_asked.own_asked() and len(rows) == own_asked.PER_LANGUAGE
    assert len({e.text for e in rows}) == len(rows)
    assert all(e.asks == "own" and e.keep is None and e.category is None for e in rows)
    assert {e.source for e in rows} == {"gate-own-asked-en"} and {e.lang for e in rows} == {"en"}
    assert not [e.text for e in rows if "{" in e.text or "}" in e.text]  # every slot filled
    slots = own_asked_written()["slots_en"]
    people = [p for p in slots["relation"] + slots["relation_poss"] if not I_ASK.search(p)]  # "Tomasz"
    # the speaker asks about their own life: in the first person, or about one of their people by name
    assert not [e.text for e in rows if not I_ASK.search(e.text) and not any(p in e.text for p in people)]
    assert sum(bool(I_ASK.search(e.text)) for e in rows) >= 0.95 * len(rows)
    assert own_asked.own_asked(seed=7) != rows  # the seed draws other fillings


def test_the_rows_cover_many_question_shapes_and_times() -> None:
    texts = [e.text for e in own_asked.own_asked()]
    said = {
        "how many": r"^(?:\W*\w+\W+){0,3}how many\b.*\bdo I have\b",
        "what did I": r"\bwhat did I\b",
        "which do I like": r"\bwhich\b.*\bdo I like\b",
        "when did I": r"\bwhen did I\b",
        "where have I": r"\bwhere have I\b",
        "future": r"\b(?:am I|next week|tomorrow|this weekend|next month)\b",
        "dated": r"\b(?:\d{1,2}(?:st|nd|th|rd)?|January|March|May|October|20\d\d)\b",
        "casual": r"^(?:hey|quick one|wait|remind me|um|so)\b|\b(?:lol|btw)\b",
    }
    for what, pattern in said.items():
        hits = [t for t in texts if re.search(pattern, t, re.I)]
        assert len(hits) >= 8, (what, len(hits))
    assert len(own_asked_written()["forms_en"]) >= 60


def test_off_unless_asked_and_never_trusted_for_thresholds() -> None:
    assert own_asked.ON is False and own_asked_examples() == []
    rows = own_asked_examples(on=True)
    assert len(rows) == own_asked.PER_LANGUAGE
    assert not trusted(rows).any()  # the thresholds stay chosen on rows a person labelled
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--own-asked"], "", defaults).own_asked and not arguments([], "", defaults).own_asked


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")
def test_no_row_is_an_evaluation_item_even_up_to_case_and_punctuation() -> None:
    banned = {_plain(t) for t in evaluation_texts(DATA, REPO)}
    assert banned  # the check reads the evaluation sets
    assert not [e.text for e in own_asked.own_asked() if _plain(e.text) in banned]
