"""One plural helper and one language test for every count and reply shown (memory/text/wording.py)."""

from __future__ import annotations

import pytest

from memory.text.wording import is_chinese, noun, plural, speaks_chinese


@pytest.mark.parametrize(
    ("count", "word", "shown"),
    [
        (0, "memory", "0 memories"),
        (1, "memory", "1 memory"),
        (2, "memory", "2 memories"),
        (1, "message", "1 message"),
        (3, "message", "3 messages"),
        (1, "attempt", "1 attempt"),
        (1, "dead letter", "1 dead letter"),
        (2, "dead letter", "2 dead letters"),
        (2, "daily summary", "2 daily summaries"),
        (2, "day", "2 days"),
        (2, "match", "2 matches"),
        (2, "person", "2 people"),
    ],
)
def test_plural(count: int, word: str, shown: str) -> None:
    assert plural(count, word) == shown


def test_noun_alone_and_an_explicit_plural() -> None:
    assert noun(1, "message") == "message" and noun(5, "message") == "messages"
    assert plural(2, "owner", "owners") == "2 owners"


def test_language() -> None:
    assert is_chinese("我每天用Go") and not is_chinese("I like 火锅") and not is_chinese("ok")
    assert speaks_chinese(["hello", "我住在杭州", "  "])
    assert not speaks_chinese(["我住在杭州", "What about you?"])
    assert not speaks_chinese([])
