"""PostgreSQL's candidate query keeps a few statement texts (``fulltext.bm25_join``): the terms take a
padded number of places (the ones past the terms switched off), so a pooled connection's prepared
statement can reach a generic plan instead of being planned again for each new number of terms. The
padding must change no score (``test_same_results.py`` compares the scores with SQLite's and Python's,
with queries of 1 to 5 terms)."""

from __future__ import annotations

from memory.store.postgres.fulltext import Statistics, bm25_join, padded_size


def _stats(terms: list[str]) -> Statistics:
    return Statistics(rows=100, average_length=7.5, frequencies=dict.fromkeys(terms, 3))


def test_padded_sizes_are_powers_of_two_from_four() -> None:
    assert [padded_size(n) for n in (0, 1, 4, 5, 8, 9, 17)] == [4, 4, 4, 8, 8, 16, 32]


def test_one_to_four_terms_share_one_text_and_five_take_the_next() -> None:
    texts = {bm25_join(terms, _stats(terms))[0] for terms in (["a"], ["a", "b"], ["a", "b", "c", "d"])}
    assert len(texts) == 1
    five = ["a", "b", "c", "d", "e"]
    assert bm25_join(five, _stats(five))[0] not in texts


def test_padding_places_are_switched_off_with_no_weight() -> None:
    terms = ["tea", "tea", "kyoto"]  # a repeated term counts once
    join, params = bm25_join(terms, _stats(terms))
    assert join.count("?") == len(params)
    assert params[4:12] == [True, "tea", True, "kyoto", False, None, False, None]
    weights = params[12:]
    assert len(weights) == 8 and weights[4::2] == [0.0, 0.0]
