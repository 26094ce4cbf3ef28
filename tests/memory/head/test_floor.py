"""Round 20 (memory/head/floor.py): the combined cut with a floor on plain statements kept, on small made-up
out-of-fold scores where the chit-chat lines read as "tell"-like as the statements near the cut."""

from __future__ import annotations

import numpy as np
import pytest

from memory.head.calibrate import Rates, choose_thresholds
from memory.head.corpus import Example
from memory.head.floor import floor_for, floored, parse_floor
from memory.head.model import Combined


def _rows(seed: int = 5) -> tuple[list[Example], np.ndarray, np.ndarray, np.ndarray]:
    """Per language 200 trusted statements, 300 chit-chat lines and 100 own questions; the lines' tell
    overlaps the statements' so that a cut at 2 % of the lines loses about a fifth of the statements."""
    rng = np.random.default_rng(seed)
    examples, keep, gate, lines = [], [], [], []
    for lang in ("en", "zh"):
        for i in range(600):
            kind = "statement" if i < 200 else "chat" if i < 500 else "own"
            source = "lccc-train" if kind == "chat" else "written"
            asks = {"statement": "tell", "chat": "other", "own": "own"}[kind]
            examples.append(Example(f"{lang}{i}", lang, source, int(kind == "statement"), asks=asks))
            keep.append(rng.normal(1.0 if kind == "statement" else -1.0, 1.0))
            told = rng.normal(1.0 if kind == "statement" else -1.0, 1.0)
            gate.append([(2.0 if kind == "own" else -3.0), told, 0.0])  # logits: own, tell, other
            lines.append(kind == "chat")
    return examples, np.array(keep), np.array(gate), np.array(lines)


def _rates(floor: dict[str, float] | None) -> Rates:
    return Rates({"en": 0.02, "zh": 0.02}, 0.95, {"en": 0.15, "zh": 0.15}, {"en": 0.01, "zh": 0.01}, floor)


def _kept(combined: tuple[float, ...], keep: np.ndarray, tell: np.ndarray) -> np.ndarray:
    rule = Combined(*combined[:4])
    return np.array([rule.passes(float(k), float(t)) for k, t in zip(keep, tell, strict=True)])


def test_the_floor_lowers_the_cut_until_the_share_of_statements_is_kept() -> None:
    examples, keep, gate, lines = _rows()
    tell = np.logaddexp(gate[:, 0], gate[:, 1]) - gate[:, 2]
    plain, chosen = (choose_thresholds(examples, keep, gate, lines, _rates(f)) for f in (None, {"en": 0.95}))
    langs = np.array([e.lang for e in examples])
    told = np.array([e.keep == 1 for e in examples])
    en, zh = langs == "en", langs == "zh"
    # without a floor the chit-chat rate alone decides, and it loses more than 5 % of the statements
    assert _kept(plain[1]["en"], keep, tell)[en & told].mean() < 0.9
    assert _kept(plain[1]["en"], keep, tell)[en & lines].mean() <= 0.02
    # with it, the cut is the lower one: at least 95 % of the statements are kept, the lines pay for it
    assert chosen[1]["en"][3] < plain[1]["en"][3]
    assert chosen[1]["en"][:3] == plain[1]["en"][:3]  # the weights are fitted as before
    assert _kept(chosen[1]["en"], keep, tell)[en & told].mean() >= 0.95
    report = chosen[2]["en"]
    assert isinstance(report, dict)
    assert report["bound"] == "statements" and report["statement_floor"] == 0.95
    assert report["cut_chitchat"] == pytest.approx(plain[1]["en"][3])
    # a language not named keeps its cut and its report bit for bit
    assert chosen[1]["zh"] == plain[1]["zh"] and chosen[0]["zh"] == plain[0]["zh"]
    other = chosen[2]["zh"]
    assert isinstance(other, dict) and "bound" not in other
    assert _kept(chosen[1]["zh"], keep, tell)[zh & told].mean() < 0.9


def test_a_floor_already_met_leaves_the_cut_and_says_the_chit_chat_bound() -> None:
    examples, keep, gate, lines = _rows()
    plain = choose_thresholds(examples, keep, gate, lines, _rates(None))
    low = choose_thresholds(examples, keep, gate, lines, _rates({"en": 0.2, "zh": 0.2}))
    assert low[1] == plain[1]
    assert all(isinstance(r, dict) and r["bound"] == "chitchat" for r in low[2].values())


def test_the_tell_threshold_of_a_head_without_a_combined_score_has_the_floor_too() -> None:
    examples, keep, gate, lines = _rows()
    plain = choose_thresholds(examples, keep, gate, lines, _rates(None))[0]
    chosen = choose_thresholds(examples, keep, gate, lines, _rates({"en": 0.9}))[0]
    assert chosen["en"][3] < plain["en"][3]  # (keep, gate, own, tell): only tell moves
    assert chosen["en"][:3] == plain["en"][:3] and chosen["zh"] == plain["zh"]


def test_floor_for_is_the_highest_cut_keeping_the_share() -> None:
    scores = np.arange(10, dtype=float)  # 0 … 9
    every = np.ones(10, dtype=bool)
    assert floor_for(scores, every, 0.8) == 2.0  # 2 … 9: eight of ten
    assert floor_for(scores, every, 0.75) == 2.0  # ceil: at least the share
    assert floor_for(scores, every, 1.0) == 0.0
    assert floor_for(scores, every, 0.0) == float("inf")
    assert floored(5.0, scores, every, None) == (5.0, {})
    assert floored(5.0, scores, every, 0.8)[0] == 2.0
    assert floored(1.0, scores, every, 0.8) == (
        1.0,
        {"cut_chitchat": 1.0, "cut_statements": 2.0, "bound": "chitchat"},
    )


def test_the_option_reads_a_share_per_language_or_one_for_both() -> None:
    assert parse_floor("en=0.96,zh=0.8") == {"en": 0.96, "zh": 0.8}
    assert parse_floor("en=0.96") == {"en": 0.96}
    assert parse_floor("0.9") == {"en": 0.9, "zh": 0.9}
    for bad in ("fr=0.9", "en=1.5", "1.5", "-0.1"):
        with pytest.raises(ValueError):
            parse_floor(bad)
