"""Round 19's gate rows (memory/head/passing.py): facts said in passing — inside a request, a mood, a
correction, brackets, after "because"/"so" — as "tell", and the same requests and moods with no lasting
personal fact as "other"; gate rows only, never an evaluation item nor near one, the same every run, off
unless asked for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory.head import passing
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.corpus import Example
from memory.head.passing import (
    passing_examples,
    passing_others,
    passing_statements,
    passing_written,
    screened,
    too_near,
)
from memory.head.train import evaluation_texts

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"
PERSONAL = re.compile(r"\b(?:my|our|we've|we're|I'm|I've|I)\b", re.I)


def test_statements_and_counterparts_are_distinct_gate_rows() -> None:
    tells, others = passing_statements(), passing_others()
    assert tells == passing_statements() and len(tells) == passing.TELL_PER_LANGUAGE
    assert len(others) == passing.OTHER_PER_LANGUAGE and len({e.text for e in others}) == len(others)
    assert len({e.text for e in tells}) == len(tells)
    assert all(e.asks == "tell" and e.keep is None and e.category is None for e in tells)
    assert all(e.asks == "other" and e.keep is None and e.category is None for e in others)
    assert {e.source for e in tells} == {"gate-passing-en"} and {e.source for e in others} == {
        "gate-passing-other-en"
    }
    assert not [e.text for e in tells + others if "{" in e.text or "}" in e.text]  # every slot filled
    assert not {e.text for e in tells} & {e.text for e in others}
    assert passing_statements(seed=7) != tells  # the seed draws other fillings


def test_the_counterparts_hold_no_fact_of_the_written_lists() -> None:
    """An "other" row is made of requests, moods and world remarks only: no fact form's text is in it."""
    data = passing_written()
    fact_starts = {f.split("{")[0].strip().lower() for f in data["facts_en"] if len(f.split("{")[0]) > 12}
    assert fact_starts
    others = [e.text.lower() for e in passing_others()]
    assert not [t for t in others for f in fact_starts if f in t]


def test_the_statements_cover_the_kinds_said_in_passing() -> None:
    texts = [e.text for e in passing_statements()]
    said = {
        "request": r"\b(?:can you|could you|help me|give me|write me|make me|recommend|suggest|remind me)\b",
        "how/what question": r"\b(?:how do I|what's a good|what should I|any tips)\b",
        "brackets": r"\(my \w+\)|\([^)]*\)",
        "because/so/since": r"\b(?:because|since)\b|, so\b",
        "correction": r"\b(?:scratch that|correction|wait no|got that wrong|ignore the last|update:)",
        "mood": r"\b(?:ugh|honestly|knackered|sigh|rant|what a day|so annoyed)\b",
        "partner": r"\bmy (?:husband|wife|partner|boyfriend|girlfriend|fianc)",
        "children": r"\bmy (?:son|daughter|eldest|youngest|stepson|little one)\b",
        "parents or siblings": r"\bmy (?:mum|dad|mother|nan|grandad|stepdad|brother|sister|twin)\b",
        "colleague": r"\b(?:colleague|manager|from work)\b",
        "pet": r"\b(?:dog|cat|greyhound|tortoise|budgie|spaniel|kitten|hamster|guinea pig|lurcher)\b",
        "health": r"\b(?:allergic|levothyroxine|sertraline|metformin|inhaler|tablets|op|replacement)\b",
        "document or number": r"\b(?:passport|licence|NI number|membership number|MOT)\b",
        "thing without I/my": r"\bthe (?:car's|spare key|wifi password|mortgage|council tax)\b",
        "negation": r"\b(?:not|don't|doesn't|isn't|haven't|never)\b",
        "casual": r"^(?:ok so|hey|quick q|right,|hiya|morning!|random but)|(?:pls|thx|lol| x| ta|cheers)$",
        "btw": r"\bbtw\b",
    }
    for what, pattern in said.items():
        hits = [t for t in texts if re.search(pattern, t, re.I)]
        assert len(hits) >= 8, (what, len(hits))
    assert sum(bool(re.search(r"\b(?:I|my|our|we)\b", t, re.I)) for t in texts) < len(texts)  # some not


def test_off_unless_asked_and_never_trusted_for_thresholds() -> None:
    assert passing.ON is False and passing_examples() == []
    rows = passing_examples(on=True)
    assert len(rows) == passing.TELL_PER_LANGUAGE + passing.OTHER_PER_LANGUAGE
    assert not trusted(rows).any()  # the thresholds stay chosen on rows a person labelled
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--passing"], "", defaults).passing and not arguments([], "", defaults).passing


def test_the_screen_drops_a_row_too_like_an_evaluation_text() -> None:
    near = Example("btw my sister is a nurse in Leeds, can you suggest a gift?", "en", "x", asks="tell")
    far = Example("Help me plan a road trip.", "en", "x", asks="other")
    evaluation = ["My sister is a nurse in Leeds", "Can you suggest a gift"]
    assert too_near("my sister is a nurse in leeds!", evaluation) == "My sister is a nurse in Leeds"
    assert too_near(far.text, evaluation) is None
    kept = screened([near, far], ["btw my sister's a nurse in Leeds, can you suggest a gift"])
    assert kept == [far]


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")
def test_no_row_is_an_evaluation_item_nor_near_one() -> None:
    banned = evaluation_texts(DATA, REPO)
    assert banned  # the check reads the evaluation sets
    rows = passing_examples(on=True)
    assert not [e.text for e in rows if e.text.strip() in banned]  # the trainer's refusal check refuses none
    kept = passing_examples(on=True, evaluation=banned)
    assert len(kept) >= len(rows) - 5  # the screen drops at most a few (one at the time of writing)
    assert all(too_near(e.text, banned) is None for e in kept[:: max(1, len(kept) // 40)])
