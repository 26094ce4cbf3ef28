"""Round 48: clauses that go on as said, and a statement after a question (memory/model/clauses.py,
``WHOLE_CONTINUATIONS``; memory/model/quick_extract.py, ``statement_after_question``). Each case fails with
its switch off, the cutter every shipped head was trained with."""

from __future__ import annotations

import pytest

from memory.model import clauses as cut
from memory.model import quick_extract as quick


@pytest.mark.parametrize(
    ("sentence", "whole", "before"),
    [
        # a subjectless piece after a clause about something else goes on with that clause
        (
            "I'm doing the course online, it's Thursday nights, finishes in June",
            ["I'm doing the course online", "it's Thursday nights, finishes in June"],
            ["I'm doing the course online", "it's Thursday nights", "I finishes in June"],
        ),
        (
            "I took over the bakery lease in March 2022, it used to be a fish and chip shop",
            ["I took over the bakery lease in March 2022", "it used to be a fish and chip shop"],
            ["I took over the bakery lease in March 2022", "it used to be a fish", "I chip shop"],
        ),
        (
            "我在苏州上班，我老公是老师，在二中教数学",
            ["我在苏州上班", "我老公是老师，在二中教数学"],
            ["我在苏州上班", "我老公是老师", "我在二中教数学"],
        ),
        # in English a clause naming its topic is what the piece after it goes on about
        (
            "I'm coeliac so gluten is a hard no, even a crumb is too much",
            ["I'm coeliac", "gluten is a hard no, even a crumb is too much"],
            ["I'm coeliac", "gluten is a hard no", "I even a crumb is too much"],
        ),
        # a number in words says how much of the clause before
        (
            "I'm on amlodipine 5 mg now, one every morning",
            ["I'm on amlodipine 5 mg now, one every morning"],
            ["I'm on amlodipine 5 mg now", "I one every morning"],
        ),
        # "not …" is a contrast with the clause before
        (
            "I report to Perry now, not Hamilton",
            ["I report to Perry now, not Hamilton"],
            ["I report to Perry now", "I not Hamilton"],
        ),
    ],
)
def test_a_piece_that_goes_on_stays_with_its_clause(
    monkeypatch: pytest.MonkeyPatch, sentence: str, whole: list[str], before: list[str]
) -> None:
    """Only the speaker's own clause gives "I"/"我" to the piece after it; a number in words or "not" opens
    no clause of its own."""
    assert cut.clauses(sentence) == whole
    monkeypatch.setattr(cut, "WHOLE_CONTINUATIONS", False)
    assert cut.clauses(sentence) == before


def test_the_speaker_still_gives_a_subject_after_their_own_clause() -> None:
    """The rule the switch narrows, unchanged where it holds: after the speaker's clause, a subjectless clause
    gets the speaker ("I live in Lyon, work as a nurse")."""
    assert cut.clauses("I live in Lyon, work as a nurse") == ["I live in Lyon", "I work as a nurse"]
    assert cut.clauses("我在杭州上班，喜欢用Go") == ["我在杭州上班", "我喜欢用Go"]
    # a Chinese topic keeps the speaker for the piece after it
    assert cut.clauses("我有高血压，腰不好，不能搬重的东西") == ["我有高血压", "腰不好", "我不能搬重的东西"]


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        (
            "can you add up the energy bills for me, Bord Gáis was 312 for Oct and Nov",
            "Bord Gáis was 312 for Oct and Nov",
        ),
        ("what do i put for net monthly income, 1.65 lakh is my take home", "1.65 lakh is my take home"),
        ("how are you - I just got back from Lagos", "I just got back from Lagos"),
        (
            "can ye book us a table for Friday, Moira's birthday is on the Saturday",
            "Moira's birthday is on the Saturday",
        ),
        ("can you add up the energy bills for me, Bord Gáis was 312?", None),  # ends asking
        ("did my degree in Carlow, finished in 2007", None),  # "did my …": the head reads it whole
        ("I moved to Leeds in May, it's lovely", None),  # no question first
        ("what's 15 percent of 1850, ok", None),  # too short after the comma to say anything
    ],
)
def test_a_statement_after_a_question_is_judged(
    monkeypatch: pytest.MonkeyPatch, said: str, statement: str | None
) -> None:
    """A sentence that opens with a question or request and goes on with a statement after a comma or dash
    offers the statement to the head; the question is never a candidate. Off with ``QUESTION_HEADS``."""
    assert quick.statement_after_question(said) == statement
    if statement is not None:
        assert [c.sentence for c in quick.candidates(said)] == [statement]
        monkeypatch.setattr(quick, "QUESTION_HEADS", False)
        assert quick.candidates(said) == []


def test_a_trainer_cuts_as_the_shipped_heads_were_trained_unless_asked() -> None:
    """``round_flags`` turns the switch off for a trainer's process unless ``--whole-continuations`` is
    given, so every shipped head's command still cuts its training sentences as it did (conftest puts the
    switch back after the test)."""
    from memory.head.arguments import arguments, round_flags

    defaults = {"seed": 0, "l2": 0.0, "hidden": 0, "iterations": 0, "tell_false_rate": 0.0}
    round_flags(arguments([], "train", defaults))
    assert cut.WHOLE_CONTINUATIONS is False
    round_flags(arguments(["--whole-continuations"], "train", defaults))
    assert cut.WHOLE_CONTINUATIONS is True
