"""What the trainer writes (issue 35): the head file, and the out-of-fold scores for choosing thresholds
again (``--scores``)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from memory.head.calibrate import Longer
from memory.head.corpus import Example
from memory.head.model import LANGUAGES, Classifier


def save_scores(
    path: str,
    examples: list[Example],
    scores: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None],
    composed: Longer | None,
) -> None:
    """The out-of-fold scores of the gate's rows (keep, gate, lines, spreads), with the rows, and the
    composed messages' features, for choosing thresholds again."""
    rows = [json.dumps([e.text, e.lang, e.source, e.keep, e.asks]) for e in examples]
    keep, gate, lines, spreads = scores
    more = {} if composed is None else {f"composed_{k}": getattr(composed, k) for k in Longer.__slots__}
    if spreads is not None:
        more["spreads"] = spreads
    np.savez(path, keep=keep, gate=gate, lines=lines, examples=np.array(rows), **more)


def write_head(
    out: str, models: dict[str, Classifier], rows: dict[str, np.ndarray], meta: Mapping[str, object]
) -> None:
    arrays: dict[str, np.ndarray] = {k: v for name, m in models.items() for k, v in m.arrays(name).items()}
    arrays.update({name: np.array(values, dtype=np.float32) for name, values in rows.items()})
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stub types only the first keyword


def head_rows(
    thresholds: Mapping[str, tuple[float, ...]], combined: Mapping[str, tuple[float, ...]]
) -> dict[str, np.ndarray]:
    """The per-language rows of the head file: ``thresholds``, ``combined`` (a, b, c, threshold) and, when
    the combined score has round 9's length terms, ``combined_spread`` (d, e, f)."""
    rows = {"thresholds": np.array([thresholds[lang] for lang in LANGUAGES])}
    rows["combined"] = np.array([combined[lang][:4] for lang in LANGUAGES])
    if all(len(combined[lang]) > 4 for lang in LANGUAGES):
        rows["combined_spread"] = np.array([combined[lang][4:] for lang in LANGUAGES])
    return rows
