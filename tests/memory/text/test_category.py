"""One classifier files everyday facts in a category that does not fade (memory/text/category.py)."""

from __future__ import annotations

import pytest

from memory.retrieval.decay import MEDIUM_DECAY, NEVER_DECAY, relevance_score
from memory.text.category import category_for, everyday_class, refine_category

FADING = MEDIUM_DECAY | {"temp", "debug"}

# (statement, class) in both languages, one or more per class.
BY_CLASS = [
    ("My daughter is called Mia", "people"),
    ("我女儿叫小雨", "people"),
    ("My dog is called Biscuit", "pets"),
    ("我家的猫叫咪咪", "pets"),
    ("I'm allergic to penicillin", "health"),
    ("I take metformin", "health"),
    ("我有高血压", "health"),
    ("I'm vegetarian", "health"),
    ("我乳糖不耐受", "health"),
    ("My boss is called Linda", "work"),
    ("我的领导姓李", "work"),
    ("I drive a blue Golf", "home"),
    ("我的护照放在抽屉里", "home"),
    ("I studied biology at Leeds", "education"),
    ("我是复旦大学毕业的", "education"),
    ("My mother's birthday is 3 May", "dates"),
    ("我们的结婚纪念日是五月二十号", "dates"),
    ("I love spicy food", "tastes"),
    ("我讨厌香菜", "tastes"),
    ("I go running every morning", "routines"),
    ("我每周三晚上练瑜伽", "routines"),
    ("I want to learn Japanese next year", "plans"),
    ("我打算明年去冰岛看极光", "plans"),
    ("I have a dentist appointment on 3 June", "appointments"),
    ("我预约了下周二复查", "appointments"),
]


@pytest.mark.parametrize(("text", "kind"), BY_CLASS)
def test_each_everyday_class_is_recognised(text: str, kind: str) -> None:
    assert everyday_class(text) == kind


@pytest.mark.parametrize(("text", "kind"), BY_CLASS)
def test_a_statement_written_without_a_category_never_fades(text: str, kind: str) -> None:
    category = category_for(text)
    assert category not in FADING, (text, category)
    if kind not in ("plans", "appointments"):
        assert category in NEVER_DECAY
        assert relevance_score(category, 1.0, 365) == 1.0


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("My wifi password is in the blue notebook", "credential"),
        ("我的邮箱密码记在本子上", "credential"),
        ("Buy milk on the way back today", "temp"),
        ("今天下午三点开会", "temp"),
        ("The release went out on Tuesday", "event"),
        ("项目上线了", "event"),
    ],
)
def test_what_is_not_everyday_life_keeps_its_own_category(text: str, category: str) -> None:
    assert category_for(text) == category


def test_refine_lifts_only_a_plain_event() -> None:
    assert refine_category("event", "I have a dog") == "identity"
    assert refine_category("event", "I went to Tokyo last month") == "event"
    assert refine_category("temp", "I walk my dog today") == "temp"
    assert refine_category("decision", "We decided to adopt a cat") == "decision"


def test_words_inside_other_words_do_not_count() -> None:
    assert everyday_class("The scatter plot looks fine") is None  # "cat" inside "scatter"
    assert everyday_class("我马上回来") is None  # "马" of "马上" is not a horse
    assert everyday_class("请记住这个") is None  # "住" of "记住" is not where one lives
