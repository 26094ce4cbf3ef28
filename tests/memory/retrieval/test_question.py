"""memory.retrieval.question: how many memories a question wants, the block's budget, and the question
inside chatter."""

from __future__ import annotations

import pytest

from memory.records import Retrieved
from memory.retrieval.question import (
    FOCUS_MIN_CHARS,
    MEMORY_BLOCK_CHARS,
    SEVERAL_FACTOR,
    budget_memories,
    memories_wanted,
    question_focus,
)


@pytest.mark.parametrize(
    "text",
    [
        "How many times have I been to Paris?",
        "Which books have I read this year?",
        "List my hobbies",
        "What activities do I do with my kids?",
        "我一共去过几次北京？",
        "我养过哪些宠物",
        "我都去过哪些国家",
    ],
)
def test_gathering_questions_want_more_memories(text: str) -> None:
    assert memories_wanted(text, 5) == 5 * SEVERAL_FACTOR


@pytest.mark.parametrize(
    "text", ["Where do I live?", "What is my sister's name?", "我住在哪？", "我对什么过敏"]
)
def test_single_answer_questions_keep_top_k(text: str) -> None:
    assert memories_wanted(text, 5) == 5


def _mem(i: int, chars: int) -> Retrieved:
    return Retrieved(i, "x" * chars, 2, "_global", "_general", "event", 0.5, "2026-01-01", 1.0, 1.0)


def test_budget_keeps_the_best_memories_that_fit_and_always_the_first() -> None:
    third = MEMORY_BLOCK_CHARS // 3
    kept = budget_memories([_mem(i, third) for i in range(6)])
    assert [m.id for m in kept] == [0, 1, 2]
    assert [m.id for m in budget_memories([_mem(9, MEMORY_BLOCK_CHARS * 2), _mem(10, 5)])] == [9]


def test_a_question_after_a_paragraph_of_chatter_is_what_is_searched() -> None:
    chatter = (
        "Work was long today, the train was late again and the office coffee machine broke. "
        "Then it rained all the way home and my umbrella turned inside out on the bridge. "
        "Anyway, enough about that. "
    )
    text = chatter + "By the way, what was the name of the vet my sister recommended?"
    assert len(text) >= FOCUS_MIN_CHARS
    assert question_focus(text) == (
        "Anyway, enough about that. By the way, what was the name of the vet my sister recommended?"
    )


def test_short_messages_and_messages_not_ending_with_a_question_are_searched_whole() -> None:
    short = "I had a long day. Where did I park?"
    assert question_focus(short) == short
    statement = "What a day. " * 20 + "I am going to bed now."
    assert question_focus(statement) == statement
    zh = (
        "今天上班特别累，地铁又晚点了，到公司的时候咖啡机也坏了。" * 7
        + "对了，我妹妹推荐的那个兽医叫什么名字？"
    )
    assert question_focus(zh).endswith("对了，我妹妹推荐的那个兽医叫什么名字？")
    assert len(question_focus(zh)) < len(zh)
