"""Text emoji (memory/text/text_emoji.py): a chat app's emoji codes come out, code's indexes and other
brackets stay, and what is left reads as the person wrote it."""

from __future__ import annotations

import pytest

from memory.text.text_emoji import without_text_emoji


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("谢谢[抱拳]", "谢谢"),
        ("[捂脸][捂脸]", ""),
        ("我家狗叫旺财[捂脸]，今年三岁了", "我家狗叫旺财，今年三岁了"),
        ("旺財[捂臉]今年三歲", "旺財 今年三歲"),  # between two words it leaves a space, Traditional too
        ("糗大了[糗大了]", "糗大了"),
        ("My dog is Rex[Smile]", "My dog is Rex"),
        ("Rex[Smile]and me", "Rex and me"),
        ("great news [ThumbsUp] [OK]!", "great news  !"),
    ],
)
def test_a_chat_apps_text_emoji_comes_out(typed: str, expected: str) -> None:
    assert without_text_emoji(typed) == expected


@pytest.mark.parametrize(
    "typed",
    [
        "x = a[i] + b[N]",  # an index: lower case or one letter
        "see [1] and [2]",
        "[a link](https://example.com)",
        "I work at [Acme](https://acme.com)",  # a Markdown link's text, even when it reads like a code
        "[这是一个很长的括号说明]",  # five Han or more: a note in brackets, not an emoji's name
        "I live in Lyon",
    ],
)
def test_other_brackets_stay(typed: str) -> None:
    assert without_text_emoji(typed) == typed
