"""Cutting long replies (channels/chunks.py): best boundaries first, code fences kept whole or reopened."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channels.chunks import split_text

FENCE = re.compile(r"^\s*(```+|~~~+)", re.MULTILINE)


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_short_text_is_one_piece_and_empty_text_none() -> None:
    assert split_text("  hello  ", 4096) == ["hello"]
    assert split_text(" \n ", 4096) == []
    assert split_text("x" * 4096, 4096) == ["x" * 4096]


def test_limit_below_sixteen_is_refused() -> None:
    with pytest.raises(ValueError):
        split_text("hello", 15)


def test_cuts_between_paragraphs_before_lines() -> None:
    first, second = "a" * 30 + "\nline two", "b" * 30
    assert split_text(f"{first}\n\n{second}", 50) == [first, second]


def test_cuts_between_lines_when_a_paragraph_is_too_long() -> None:
    lines = [f"line {i} " + "x" * 20 for i in range(6)]
    pieces = split_text("\n".join(lines), 60)
    assert all(len(p) <= 60 for p in pieces)
    assert [line for p in pieces for line in p.split("\n")] == lines


def test_cuts_after_sentences_when_a_line_is_too_long() -> None:
    text = "One sentence here. Another one follows! Is this the third? Yes it is."
    pieces = split_text(text, 40)
    assert pieces == ["One sentence here. Another one follows!", "Is this the third? Yes it is."]


def test_chinese_sentences_are_cut_after_their_full_stops() -> None:
    sentence = "今天天气很好，我们去公园散步吧。"
    text = sentence * 12
    pieces = split_text(text, 50)
    assert all(len(p) <= 50 for p in pieces)
    assert all(p.endswith("。") for p in pieces)
    assert "".join(pieces) == text


def test_a_word_longer_than_the_limit_is_cut_hard() -> None:
    pieces = split_text("y" * 100, 30)
    assert pieces == ["y" * 30] * 3 + ["y" * 10]


def test_a_code_block_that_fits_is_never_cut() -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(8)) + "\n```"
    text = "Here is the code:\n\n" + code + "\n\nAnd some words after it."
    pieces = split_text(text, len(code) + 5)
    assert code in pieces
    for piece in pieces:
        assert len(FENCE.findall(piece)) % 2 == 0


def test_a_code_block_longer_than_the_limit_is_closed_and_reopened() -> None:
    body = [f"x{i} = {i}" for i in range(40)]
    text = "intro\n\n```python\n" + "\n".join(body) + "\n```\n\nafter"
    pieces = split_text(text, 100)
    assert all(len(p) <= 100 for p in pieces)
    code_pieces = [p for p in pieces if "```" in p]
    assert len(code_pieces) > 2
    for piece in code_pieces:
        assert piece.count("```python") == 1 and len(FENCE.findall(piece)) == 2  # opened and closed
    found = [line for p in pieces for line in p.split("\n") if line.startswith("x")]
    assert found == body  # every code line once, in order


def test_an_unclosed_fence_runs_to_the_end() -> None:
    text = "before\n\n```\n" + "\n".join(f"line {i}" for i in range(30))
    pieces = split_text(text, 80)
    assert all(len(p) <= 80 for p in pieces)
    assert all(p.count("```") == 2 for p in pieces[1:])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(codec="utf-8", exclude_characters="`~"), max_size=120),
            st.builds(lambda s: "```\n" + s + "\n```", st.text(alphabet="ab \n", max_size=200)),
        ),
        max_size=12,
    ),
    st.integers(min_value=16, max_value=300),
)
def test_pieces_fit_keep_every_character_and_balance_fences(parts: list[str], limit: int) -> None:
    text = "\n".join(parts)
    pieces = split_text(text, limit)
    assert all(0 < len(p) <= limit for p in pieces)
    for piece in pieces:
        assert len(FENCE.findall(piece)) % 2 == 0
    # reopened fences add fence lines; everything else is kept, in order
    assert squash(FENCE.sub("", "\n".join(pieces))) == squash(FENCE.sub("", text))


def test_a_longer_fence_is_not_closed_by_a_shorter_one() -> None:
    inner = "\n".join(["```", "shown literally"] * 30)
    text = "intro\n\n````md\n" + inner + "\n````\n\nafter"
    pieces = split_text(text, 200)
    assert all(len(p) <= 200 for p in pieces)
    fenced = [p for p in pieces if "shown literally" in p]
    assert len(fenced) > 1  # the block was cut, and every piece is reopened and closed with four backticks
    assert all(p.startswith("````md\n") and "\n````" in p.removeprefix("````md") for p in fenced)
    assert pieces[-1].endswith("after")


# --- issue 37, item 8: a line without sentence ends is cut between words, never inside one -------------


def words_of(pieces: list[str]) -> list[str]:
    return [word for piece in pieces for word in piece.split()]


def test_a_long_line_of_words_is_cut_between_words() -> None:
    text = " ".join(f"word{i}" for i in range(1, 901))  # ~6,000 characters, no sentence end
    pieces = split_text(text, 4096)
    assert len(pieces) == 2 and all(len(p) <= 4096 for p in pieces)
    assert words_of(pieces) == text.split()  # every word whole, in order
    assert len(pieces[0]) > 4096 - len("word900 ")  # filled up to the last word that fits


def test_a_long_sentence_is_cut_between_words_too() -> None:
    text = "This sentence goes on " + "and on " * 1000 + "until it stops."
    pieces = split_text(text, 500)
    assert all(len(p) <= 500 for p in pieces)
    assert words_of(pieces) == text.split()


def test_chinese_without_punctuation_is_cut_between_characters_and_words_stay_whole() -> None:
    text = "我们今天去公园散步" * 100 + " tierclaw " + "天气很好" * 100
    pieces = split_text(text, 200)
    assert all(len(p) <= 200 for p in pieces)
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert sum("tierclaw" in p for p in pieces) == 1  # the Latin word is never cut


def test_only_a_word_longer_than_the_limit_is_cut_inside() -> None:
    url = "https://example.com/" + "a" * 120
    text = f"see {url} and then more words here"
    pieces = split_text(text, 50)
    assert all(len(p) <= 50 for p in pieces)
    assert pieces[0] == "see"  # the dots inside the URL end no sentence
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert words_of(pieces)[-5:] == ["and", "then", "more", "words", "here"]


def test_a_full_stop_inside_a_word_is_no_sentence_end() -> None:
    text = "Version 3.11 of example.com works. " * 40
    pieces = split_text(text, 100)
    assert all(p.endswith("works.") for p in pieces)


def test_a_code_line_longer_than_the_limit_is_cut_between_its_words() -> None:
    line = " ".join(f"arg{i}" for i in range(60))
    pieces = split_text(f"```\n{line}\n```", 80)
    assert all(len(p) <= 80 for p in pieces)
    assert words_of([p.replace("```", "") for p in pieces]) == line.split()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=12), min_size=1, max_size=300),
    st.sampled_from([" ", "\n", ". ", ", "]),
    st.integers(min_value=16, max_value=200),
)
def test_words_shorter_than_the_limit_are_never_cut(words: list[str], sep: str, limit: int) -> None:
    text = sep.join(words)
    pieces = split_text(text, limit)
    assert all(0 < len(p) <= limit for p in pieces)
    assert [w for p in pieces for w in re.split(r"[\s.,]+", p) if w] == words
