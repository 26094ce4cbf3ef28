"""``bench.everyday_misses.weighed``: the terms it reports add up to the combined score the head reads."""

from __future__ import annotations

import itertools

import pytest

from bench.everyday_misses import held_back_by, weighed
from memory.head.model import Combined

RULES = [
    Combined(a=0.2, b=0.13, c=-0.5, threshold=1.5, h=0.54),  # a Chinese row with the n-gram term
    Combined(a=0.15, b=0.1, c=0.2, threshold=1.2, h=0.3, k=0.7),  # and the latent term (round 36)
    Combined(a=0.11, b=0.36, c=0.1, threshold=0.8, d=0.05, e=-0.02, f=0.03, g=0.2),  # spread and sentence
]


@pytest.mark.parametrize("rule", RULES)
def test_the_margin_of_the_terms_is_the_verdict(rule: Combined) -> None:
    """A clause passes exactly when its terms, with ``c``, reach the cut — the n-gram term included (the
    margin left it out before stop 63, so Chinese misses looked nearer than they were) and the latent one."""
    values = (-4.0, -0.5, 0.0, 1.2, 6.0)
    kinds = itertools.product(values, values, values, (-3.0, 0.0, 2.5), (-2.0, 1.5))
    for keep, own, message, grams, latent in kinds:
        share = 0.7
        terms = weighed(rule, keep, (own, message), share, (grams, latent))
        margin = sum(terms.values()) + rule.c - rule.threshold
        if abs(margin) < 1e-9:
            continue
        # passes() reads one tell value for the message and an own value for the sentence.
        assert (margin >= 0) == rule.passes(keep, message, share, own, grams, latent)


def test_a_term_is_zero_when_its_weight_is() -> None:
    terms = weighed(Combined(a=0.2, b=0.1, c=0.0, threshold=1.0), 3.0, (2.0, 2.0), 0.5, (4.0, 5.0))
    assert terms["grams"] == 0.0 and terms["spread"] == 0.0 and terms["latent"] == 0.0
    assert terms["keep"] == pytest.approx(0.6) and terms["tell"] == pytest.approx(0.2)


def _row(kept: bool, margin: float, **terms: float) -> dict:
    clause = {"margin": margin, "terms": {"keep": 0.0, "tell": 0.0, "spread": 0.0, "grams": 0.0, **terms}}
    return {"kept": kept, "steps": {"clauses": [clause]}}


def test_held_back_by_names_the_term_that_would_have_kept_a_lost_tell() -> None:
    kept = [_row(True, 0.5, keep=1.0, grams=3.0), _row(True, 1.0, keep=1.0, grams=3.0)]
    lost = [
        _row(False, -2.0, keep=1.0, grams=1.0),  # the n-gram term, at the kept median (3.0), would keep it
        _row(False, -0.5, keep=0.5, grams=2.25),  # either term would
        _row(False, -9.0, keep=0.0, grams=0.0),  # no single term would
        {"kept": False, "steps": {"clauses": []}},  # refused by the rules: not weighed
    ]
    assert held_back_by(kept + lost) == {"grams": 2, "keep": 1, "none": 1}
    assert held_back_by(lost) == {}  # nothing kept: no median to compare with
