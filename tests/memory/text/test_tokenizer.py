"""Tokenizer: jieba segmentation for zh/en, stop words, stemming, and FTS5-safe query expressions."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.text import tokenizer
from memory.text.tokenizer import (
    MAX_QUERY_CHARS,
    MAX_QUERY_TERMS,
    STOP_WORDS,
    index_text,
    match_expression,
    query_terms,
    quote_term,
    segment,
)


def test_mixed_chinese_english_segmentation() -> None:
    text = "我用Python写了一个Telegram机器人"
    tokens = segment(text)
    assert {"python", "telegram", "机器人"} <= set(tokens)
    assert {"python", "telegram", "机器人"} <= set(index_text(text).split())
    assert {"python", "telegram", "机器人"} <= set(query_terms(text))


def test_segment_lowercases_and_drops_punctuation_emoji_and_controls() -> None:
    assert segment("Hello, World! 😀") == ["hello", "world"]
    assert segment("coffee\x00tea") == ["coffee", "tea"]
    assert segment("ＰＹＴＨＯＮ３") == ["python3"]  # full-width folded by NFKC
    assert segment("") == []
    assert segment("  \t\n ") == []


def test_chinese_is_split_into_words() -> None:
    tokens = segment("用户在北京的一家互联网公司做后端开发")
    assert {"北京", "公司", "互联网"} <= set(tokens)
    # unicode61 alone would keep the whole run as one token; jieba must not.
    assert "用户在北京的一家互联网公司做后端开发" not in tokens


def test_stop_words_removed_from_query_terms() -> None:
    for word in ("的", "了", "the", "is"):
        assert word in STOP_WORDS
    terms = query_terms("我的咖啡了，the coffee is good")
    assert not {"的", "了", "the", "is"} & set(terms)
    assert "咖啡" in terms
    assert "coffe" in terms  # stemmed


def test_query_terms_only_stop_words_is_empty() -> None:
    assert query_terms("the is of 的 了 是") == ()
    assert match_expression(query_terms("the is of 的 了 是")) == ""


def test_lone_ascii_letters_and_digits_are_not_terms() -> None:
    assert query_terms("a b c 7 coffee") == ("coffe",)


def test_query_terms_are_distinct_and_in_order() -> None:
    assert query_terms("coffee tea coffee Coffee tea server") == ("coffe", "tea", "server")


def test_stemming_consistent_between_index_and_query() -> None:
    words = ["running", "runs", "deployment", "deployed", "connections", "databases", "happily"]
    for word in words:
        assert set(query_terms(word)) == set(index_text(word).split()), word
    assert query_terms("running") == query_terms("runs")
    assert query_terms("databases") == query_terms("database")
    # Stemming applies to ASCII words only; Chinese tokens are kept verbatim.
    assert index_text("咖啡") == "咖啡"


def test_stemmed_query_matches_index_in_real_fts5() -> None:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 0')")
        conn.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (index_text("He runs every morning"),))
        conn.execute(
            "INSERT INTO t(rowid, x) VALUES (2, ?)", (index_text("我用Python写了一个Telegram机器人"),)
        )
        expr = match_expression(query_terms("running"))
        assert [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))] == [1]
        expr = match_expression(query_terms("机器人"))
        assert [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))] == [2]
    finally:
        conn.close()


def test_quote_term_doubles_quotes() -> None:
    assert quote_term("coffee") == '"coffee"'
    assert quote_term('say "hi"') == '"say ""hi"""'
    assert quote_term('"') == '""""'
    assert quote_term("OR") == '"OR"'
    assert quote_term("NEAR(") == '"NEAR("'


def test_match_expression_ors_quoted_terms() -> None:
    assert match_expression(("a", "b")) == '"a" OR "b"'
    assert match_expression(["x"]) == '"x"'
    assert match_expression(()) == ""


def test_query_terms_caps_number_of_terms() -> None:
    letters = "bcdfghjklmnpqrstvwxz"
    words = [f"zork{a}{b}q" for a in letters for b in letters][: 3 * MAX_QUERY_TERMS]
    assert len({tokenizer.stem(w) for w in words}) == len(words)  # distinct terms, no stem collisions
    terms = query_terms(" ".join(words))
    assert len(terms) == MAX_QUERY_TERMS
    assert terms == tuple(tokenizer.stem(w) for w in words[:MAX_QUERY_TERMS])
    assert len(query_terms(" ".join(words), max_terms=5)) == 5


def test_query_terms_truncates_very_long_input() -> None:
    filler = "the " * (MAX_QUERY_CHARS // 4 + 10)  # stop words only, longer than the cap
    assert len(filler) > MAX_QUERY_CHARS
    assert query_terms("zanzibar " + filler) == ("zanzibar",)
    assert query_terms(filler + " zanzibar") == ()


def test_query_terms_on_a_megabyte_is_bounded() -> None:
    big = "咖啡 coffee " * 110_000
    assert len(big) > 1_000_000
    terms = query_terms(big)
    assert set(terms) == {"咖啡", "coffe"}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_match_expression_is_valid_fts5_for_any_text(text: str) -> None:
    terms = query_terms(text)
    assert len(terms) <= MAX_QUERY_TERMS
    assert all(isinstance(t, str) and t for t in terms)
    expr = match_expression(terms)
    if not expr:
        assert terms == ()
        return
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 0')")
        conn.execute("INSERT INTO t(rowid, x) VALUES (1, 'alpha beta'), (2, ?)", (index_text(text),))
        rows = conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()
    finally:
        conn.close()
    # The text's own index form contains every query term, so its row must match.
    assert (2,) in rows
