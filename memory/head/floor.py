"""A floor on plain statements kept (issue 35, round 20): ``train --statement-floor en=0.96,zh=0.8``.

Why: every combined cut until round 20 was chosen at a fixed chit-chat false rate alone
(``calibrate.threshold_for`` at ``train.TELL_FALSE_RATE``), so anything that moves the chit-chat lines'
scores moves the cut. Round 19's rows of facts said in passing taught English's gate that a request or a
mood may carry a fact: the training chit-chat lines read more "tell"-like, the cut rose about 1.2
log-odds, and plain short statements that sat just over the old cut fell under the new one (everyday,
dev, blind3 −0.025 to −0.032, DATA_CARD "Round 19, in passing"). With a floor, the cut is the lower of
that one and the one that still keeps a given share of the trusted statements (``calibrate.trusted``:
sentences a person labelled, never the written gate rows) out of fold: the false rate is then an upper
bound the statements may overrule, and the report says which bound held.
"""

from __future__ import annotations

import numpy as np

from memory.head.model import LANGUAGES


def values_by_language(text: str) -> dict[str, float]:
    """``en=0.96,zh=0.8`` as {language: value} (only the languages named), or one number for every language
    of ``LANGUAGES``: the trainer's per-language flags (``parse_floor``, ``operating.parse_rates``)."""
    if "=" not in text:
        return {lang: float(text) for lang in LANGUAGES}
    values = {}
    for part in text.split(","):
        lang, _, value = part.partition("=")
        values[lang.strip()] = float(value)
    return values


def parse_floor(text: str) -> dict[str, float]:
    """``en=0.96,zh=0.8`` (a language left out has no floor) or one share for every language of
    ``LANGUAGES``: ``train --statement-floor``."""
    floors = values_by_language(text)
    if not set(floors) <= set(LANGUAGES) or not all(0.0 <= v <= 1.0 for v in floors.values()):
        raise ValueError(f"shares between 0 and 1 for languages of {LANGUAGES}: {text!r}")
    return floors


def floor_for(scores: np.ndarray, positives: np.ndarray, share: float) -> float:
    """The highest threshold at which at least ``share`` of the positive rows score at or above it (round
    20's floor on plain statements kept; ``inf`` when there are none or ``share`` is 0: no floor)."""
    pos = np.sort(scores[positives])[::-1]
    needed = int(np.ceil(share * len(pos)))
    return float(pos[min(needed, len(pos)) - 1]) if needed > 0 and len(pos) else float("inf")


def floored(
    cut: float, scores: np.ndarray, positives: np.ndarray, share: float | None
) -> tuple[float, dict[str, object]]:
    """(the lower of ``cut`` — chosen at a chit-chat false rate — and ``floor_for``'s on ``positives``, a
    report of both and which bound held); ``share`` None: no floor, ``cut`` as it is (every head before
    round 20)."""
    if share is None:
        return cut, {}
    low = floor_for(scores, positives, share)
    report: dict[str, object] = {"cut_chitchat": cut, "cut_statements": low}
    report["bound"] = "statements" if low < cut else "chitchat"
    return min(cut, low), report
