"""The subjectless rewrites the head is trained on (memory/head/registers.py), and the chat-register rows."""

from __future__ import annotations

import random

import pytest

from memory.head.corpus import chat_examples, written
from memory.head.registers import dropped_subject


@pytest.mark.parametrize(
    ("text", "lang", "body"),
    [
        ("我有两只狗。", "zh", "有两只狗"),
        ("我的第二份工作是做特技表演。", "zh", "第二份工作是做特技表演"),
        ("I have two dogs.", "en", "have two dogs"),
        ("My favorite food is pizza.", "en", "favorite food is pizza"),
        ("I'm allergic to cats.", "en", "allergic to cats"),
    ],
)
def test_the_subject_is_dropped_and_the_fact_kept(text: str, lang: str, body: str) -> None:
    for seed in range(5):
        shown = dropped_subject(text, lang, random.Random(seed))
        assert shown is not None and body.lower() in shown.lower().replace("'", "")
        assert not shown.startswith(("我", "I ", "i ", "My", "my"))


def test_an_article_keeps_im_so_the_statement_stays_a_sentence() -> None:
    assert "im a nurse" in (dropped_subject("I'm a nurse.", "en", random.Random(1)) or "")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("我们家有三口人", "zh"),
        ("咖啡是我的首选饮料。", "zh"),
        ("Knitting is my passion.", "en"),
        ("I am 27", "en"),
    ],
)
def test_nothing_without_a_speaker_subject_or_with_too_little_left(text: str, lang: str) -> None:
    assert dropped_subject(text, lang, random.Random(0)) is None


def test_the_same_generator_gives_the_same_rewrite() -> None:
    first = [dropped_subject("我喜欢喝茶", "zh", random.Random(7)) for _ in range(3)]
    assert len(set(first)) == 1


def test_my_home_becomes_at_home() -> None:
    shown = dropped_subject("我家孩子的班主任姓王", "zh", random.Random(3)) or ""
    assert "家里孩子的班主任姓王" in shown


def test_round_8s_sentences_are_their_own_source_and_say_who_one_is_or_nothing() -> None:
    rows = chat_examples(written(), "chat8")
    assert {e.source for e in rows} == {"written-chat8-en", "written-chat8-zh"}
    kept = [e for e in rows if e.keep == 1]
    assert kept and all(e.category == "identity" and e.asks == "tell" for e in kept)
    assert all(e.asks == "other" and e.category is None for e in rows if e.keep == 0)
    # round 7's rows are as they were (same seeded generator, same source names)
    assert {e.source for e in chat_examples(written())} == {"written-chat-en", "written-chat-zh"}
