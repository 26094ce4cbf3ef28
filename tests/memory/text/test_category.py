"""Categories without the head (memory/text/category.py): the keyword fallback files statements where the
guide says they fade, and a secret's whereabouts is a credential. The head's categories are tested in
tests/memory/head/."""

from __future__ import annotations

import pytest

from memory.retrieval.decay import CATEGORIES
from memory.text.category import category_for, fallback_category, names_secret


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("My wifi password is in the blue notebook", "credential"),
        ("我的邮箱密码记在本子上", "credential"),
        ("I'm working from home today", "temp"),
        ("今天下午三点开会", "temp"),
        ("I want to learn Japanese next year", "decision"),
        ("我打算明年去冰岛", "decision"),
        ("我在考虑要不要辞职", "decision"),
        ("I love spicy food", "config"),
        ("我每周三晚上练瑜伽", "config"),
        ("I went to Tokyo last month", "event"),
        ("My daughter is called Mia", "event"),
        ("我女儿叫小雨", "event"),
        ("I'm a nurse", "identity"),
        ("I live in Lyon", "identity"),
        ("我是程序员", "identity"),
    ],
)
def test_the_fallback_files_by_the_guide(text: str, category: str) -> None:
    assert category_for(text) == category


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("My bank PIN is in the blue notebook", True),
        ("银行卡PIN记在本子上", True),  # capitals beside Han
        ("the door code is on the fob", True),
        ("门禁码贴在门口", True),
        ("my pin is in my wallet", True),
        ("I keep my nan's rolling pin on the top shelf", False),
        ("we never tell anybody yet so keep it secret", False),
        ("the pin on my badge is broken", False),
        ("my security answers are in the blue notebook", True),  # they open an account as a password does
        ("密保答案写在红本子上", True),
        ("airport security was slow today", False),
        ("my daughter gave a memorable answer at her school interview", False),
        ("密保手机换成我老婆的号了", False),  # the phone an account's security is bound to, not a secret
        ("my bank login is on a post-it in the desk drawer", True),  # a login opens an account (round 47)
        ("my credentials for the VPN are in the IT email", True),
        ("淘宝登录账号记在蓝本子上", True),
        ("I login at 9 every morning", False),  # the verb, not the noun
        ("remember to log in to the portal before Friday", False),
        ("每天登录签到领积分", False),
    ],
)
def test_a_secrets_name_is_one_list_for_filing_and_refusing(text: str, named: bool) -> None:
    """``names_secret`` files a credential and ``quick_extract.holds_secret`` reads the same names."""
    assert names_secret(text) is named
    assert (category_for(text) == "credential") is named


def test_anything_else_is_an_event_and_every_answer_is_a_known_category() -> None:
    assert fallback_category("The release went out") == "event"
    for text in ("", "x", "我", "I"):
        assert fallback_category(text) in CATEGORIES
