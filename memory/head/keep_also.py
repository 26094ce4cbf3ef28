"""Keep labels for written gate rows (issue 35, round 28): ``train --keep-also PREFIXES``.

Why (DATA_CARD "Round 28"): the written Chinese statement rows of rounds 19 and 27 (``zh_told.py``) are gate
rows only — ``keep`` unknown — so the keep network has never seen Chinese typed fast or said in passing, and
round 27 found that it is what limits Chinese tell on such text. Their gate label already says what the keep
network needs: a "tell" row states a lasting fact about one's life (worth keeping), an "other" statement says
none (not worth keeping). An "own" row is a question, which the keep network is not asked about: it stays
unlabelled.

What: while ``PREFIXES`` is set (``train`` sets it from ``--keep-also``; empty by default), the keep network's
labels (``train.train_keep``, and nothing else: not the first model of ``train.self_statements``, not the
category, gate or thresholds) come from ``for_keep``: a row whose source begins with one of the prefixes
and whose ``keep`` is unknown takes 1 for "tell", 0 for "other"; its category stays unknown. Empty: the
examples as given, the same object, so every run without the flag is what it was.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memory.head.corpus import Example

# The row sources (by their beginning) whose gate label becomes a keep label; ``train --keep-also``.
PREFIXES: tuple[str, ...] = ()
# A gate label → the keep label it gives ("own", a question, gives none).
KEEP_FROM_ASKS = {"tell": 1, "other": 0}


def parse_prefixes(text: str) -> tuple[str, ...]:
    """``--keep-also``'s value: comma-separated source prefixes, blanks dropped."""
    return tuple(p.strip() for p in text.split(",") if p.strip())


def for_keep(examples: list[Example], prefixes: Sequence[str] | None = None) -> list[Example]:
    """``examples`` as the keep network is trained on them: with ``prefixes`` (default ``PREFIXES``) each row
    of those sources with no keep label takes one from its gate label (``KEEP_FROM_ASKS``); without prefixes
    the list itself."""
    chosen = tuple(PREFIXES if prefixes is None else prefixes)
    if not chosen:
        return examples
    return [
        dataclasses.replace(e, keep=KEEP_FROM_ASKS[e.asks])
        if e.keep is None and e.asks in KEEP_FROM_ASKS and e.source.startswith(chosen)
        else e
        for e in examples
    ]


def labelled(examples: Sequence[Example], prefixes: Sequence[str]) -> dict[str, dict[int, int]]:
    """How many rows of each source ``for_keep`` labels, by keep label (for the run's report and notes)."""
    counts: dict[str, dict[int, int]] = {}
    for before, after in zip(examples, for_keep(list(examples), prefixes), strict=True):
        if before.keep is None and after.keep is not None:
            by = counts.setdefault(after.source, {})
            by[after.keep] = by.get(after.keep, 0) + 1
    return counts
