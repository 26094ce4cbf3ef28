"""What the trainer writes (issue 35): the head file, and the out-of-fold scores for choosing thresholds
again (``--scores``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from memory.head.calibrate import Longer
from memory.head.corpus import Example
from memory.head.model import LANGUAGES, Classifier


def save_scores(
    path: str | None,
    examples: list[Example],
    scores: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None],
    composed: Longer | None,
    own: np.ndarray | None = None,
) -> None:
    """The out-of-fold scores of the gate's rows (keep, gate, lines, spreads; with ``train --sentence``
    their sentences' tell, ``own``), with the rows, and the composed messages' features, for choosing
    thresholds again (``memory.head.gap``). Nothing without a ``path`` (``--scores`` not given)."""
    if path is None:
        return
    rows = [json.dumps([e.text, e.lang, e.source, e.keep, e.asks]) for e in examples]
    keep, gate, lines, spreads = scores
    parts = {} if composed is None else {k: getattr(composed, k) for k in Longer.__slots__}
    more = {f"composed_{k}": v for k, v in parts.items() if v is not None}
    if spreads is not None:
        more["spreads"] = spreads
    if own is not None:
        more["own"] = own
    np.savez(path, keep=keep, gate=gate, lines=lines, examples=np.array(rows), **more)


def save_head(out: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Write a head file compressed: the issue's ceiling is 2 MB, which four float32 ensembles of 5
    (keep, category, gate, question) pass only compressed (~1.9 MB; loading, ~20 ms, unzips it)."""
    np.savez_compressed(out, **arrays)  # type: ignore[arg-type]  # numpy's stub types only the first keyword


def write_head(
    out: str, models: dict[str, Classifier], rows: dict[str, np.ndarray], meta: Mapping[str, object]
) -> None:
    arrays: dict[str, np.ndarray] = {k: v for name, m in models.items() for k, v in m.arrays(name).items()}
    arrays.update({name: np.array(values, dtype=np.float32) for name, values in rows.items()})
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    save_head(out, arrays)


def head_rows(
    thresholds: Mapping[str, tuple[float, ...]], combined: Mapping[str, tuple[float, ...]]
) -> dict[str, np.ndarray]:
    """The per-language rows of the head file: ``thresholds``, ``combined`` (a, b, c, threshold) and, when
    the combined score has round 9's length terms, ``combined_spread`` (d, e, f), and with round 13's
    sentence weight ``combined_sentence`` (g)."""
    rows = {"thresholds": np.array([thresholds[lang] for lang in LANGUAGES])}
    rows["combined"] = np.array([combined[lang][:4] for lang in LANGUAGES])
    if all(len(combined[lang]) > 4 for lang in LANGUAGES):
        rows["combined_spread"] = np.array([combined[lang][4:7] for lang in LANGUAGES])
    if all(len(combined[lang]) > 7 for lang in LANGUAGES):  # round 13: the sentence's weight g
        rows["combined_sentence"] = np.array([combined[lang][7:] for lang in LANGUAGES])
    return rows


# The columns of ``thresholds`` (keep, gate, own, tell) that belong to the keep classifier's verdict: a
# ``--only keep`` run writes these and takes the gate's (gate, own) from the head it starts from.
KEEP_COLUMNS = (0, 3)


def read_arrays(path: str) -> dict[str, np.ndarray]:
    """Every array of a head file, read into memory (the file may be overwritten next)."""
    with np.load(path) as data:
        return {name: np.array(data[name]) for name in data.files}


def merge_keep(base: Mapping[str, np.ndarray], out: str, report: Mapping[str, object]) -> None:
    """``train --only keep``: rewrite ``out`` (just written by a run whose category and gate networks are
    ``base``'s, the arrays of the head file it started from) so that every array but ``keep_*``,
    ``combined*`` and the keep and tell columns of ``thresholds`` is ``base``'s bit for bit (the category
    and gate arrays, the gate and own thresholds); ``meta`` is ``base``'s with ``out``'s version and
    sources and ``report`` as the keep's report."""
    arrays = {name: a for name, a in base.items() if not name.startswith(("keep_", "combined"))}
    with np.load(out) as new:
        arrays.update({name: new[name] for name in new.files if name.startswith(("keep_", "combined"))})
        thresholds = np.array(base["thresholds"], copy=True)
        for column in KEEP_COLUMNS:
            thresholds[:, column] = new["thresholds"][:, column]
        fresh = json.loads(str(new["meta"]))
    arrays["thresholds"] = thresholds
    meta = json.loads(str(arrays["meta"]))
    meta.update(version=fresh["version"], sources=fresh["sources"])
    meta["report"] = {**meta.get("report", {}), "keep_only": dict(report)}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    save_head(out, arrays)


def write_run(
    out: str,
    models: dict[str, Classifier],
    rows: dict[str, np.ndarray],
    meta: Mapping[str, Any],
    keep_only: str | None = None,
    gate_only: str | None = None,
) -> None:
    """The trainer's head file; with ``keep_only`` (``train --only keep``: the file the run started from)
    every array but the keep side's as in that file (``merge_keep``; read before ``out`` is written, which
    may be the same file); with ``gate_only`` (``train --gate-only``: the file whose keep and category
    networks the run took) that file's arrays the trainer does not write (the question classifier's,
    round 14) carried over as they are — but not a language's own gate (``gate_<lang>_*``): the run's new
    gate network and thresholds are for every language. (``--only keep`` keeps it, and fits the combined
    rows on the shared gate's scores: retrain that language's gate after it.)"""
    base = read_arrays(keep_only) if keep_only else None
    carried = read_arrays(gate_only) if gate_only else {}
    write_head(out, models, rows, meta)
    if base is not None:
        merge_keep(base, out, meta["report"])
    if carried:
        written = read_arrays(out)
        own_gates = tuple(f"gate_{lang}_" for lang in LANGUAGES)
        kept = {k: v for k, v in carried.items() if k not in written and not k.startswith(own_gates)}
        save_head(out, {**kept, **written})


def term_meta(base: Mapping[str, np.ndarray], version: str, term: str, report: dict[str, Any]) -> np.ndarray:
    """``base``'s meta with a new ``version`` and ``report[term]`` set to ``report`` (a rewrite of one term of
    a head file, ``--only grams`` or ``--only latent``); its ``shipped`` note names the command in ``report``
    (the base's own note described the base): what rebuilds this file."""
    meta = json.loads(str(base["meta"]))
    meta["version"] = version
    meta["report"] = {**meta.get("report", {}), term: report}
    meta["shipped"] = {"from": report.get("command"), "networks": report.get("networks_version")}
    return np.array(json.dumps(meta, sort_keys=True))
