"""The latent-term term of a language's combined score (issue 35, round 36): ``train --only latent
--networks FILE --latent en,zh`` with the flags FILE's networks were trained with (its rows).

Why: ``latent_terms.py``. What it does, per language named by ``--latent``, on the gate's training rows as a
full run builds them (same data, seed and folds; ``grams_training.GateRows``):

1. each row's latent terms (``embedding.latent``, cached beside the vectors), the terms that occur in at
   least ``MIN_ROWS`` of the language's fitted rows kept (a rarer term is a row's name, not a kind);
2. the logistic score of "a statement worth keeping" (``Example.keep``) against every other row on those
   terms (``char_grams.fit`` with values), learned on the rows the n-gram term learns on
   (``GateRows.fitted_on``), each row scored by the model fitted on the other folds;
3. that score a column ``k`` of the combined score beside the keep and tell columns and, where FILE reads
   the n-gram term (``combined_grams``), the n-gram's column (out of fold, ``grams_training.oof_grams``),
   fitted by ``calibrate.fit_combined`` on the trusted statements against the chit-chat lines; the cut the
   lowest score at which at most the language's rate of the lines pass;
4. the latent weights refitted on every such row, written as ``latent_<lang>`` (float16), ``k`` in
   ``combined_latent``, ``h`` in ``combined_grams``, the language's ``combined`` row replaced.

Every other array of FILE — the networks, the n-gram weights, thresholds — is written bit for bit.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory.head import char_grams, latent_terms
from memory.head.calibrate import fit_combined, languages, threshold_for, trusted
from memory.head.embedding import latent
from memory.head.grams_training import GateRows, oof_grams
from memory.head.model import LANGUAGES, VERSION
from memory.head.outputs import read_arrays, save_head, term_meta

# A term kept only where this many of the language's fitted rows have it (the probe's floor, DATA_CARD
# "Probe 35").
MIN_ROWS = 30
# The latent fits' weight decay: stronger than the n-gram's (``char_grams.L2``), as the terms are dense
# per row (~150 each) and correlated.
LATENT_L2 = 1e-4
# The share of the training chit-chat lines the cut lets through without ``--tell-false-rate``: the rates
# the shipped rows were cut at (Chinese ``grams_training.GRAMS_TELL_FALSE_RATE``, English
# ``train.TELL_FALSE_RATE``), so a change in what is kept is the term's, not a new rate's.
LATENT_TELL_FALSE_RATE = {"en": 0.025, "zh": 0.02}


@dataclass(frozen=True, slots=True)
class Fitted:
    """One language's latent term: its weights, the combined row (a, b, c, cut), ``h``, ``k``, a report."""

    weights: np.ndarray
    row: tuple[float, float, float, float]
    h: float
    k: float  # the combined score's weight of this term (``model.Combined.k``)
    report: dict[str, object]


def keep_labels(examples: list[Any]) -> np.ndarray:
    """1 for a statement worth keeping, 0 for any other row."""
    return np.array([int(e.keep == 1) for e in examples])


def common_terms(terms: list[tuple[np.ndarray, np.ndarray]], fitted: np.ndarray) -> np.ndarray:
    """Which of the 2^14 terms occur in at least ``MIN_ROWS`` of the fitted rows."""
    seen = [terms[int(i)][0] for i in np.flatnonzero(fitted)]
    counts = np.bincount(
        np.concatenate([*seen, np.zeros(0, dtype=np.int32)]), minlength=1 << latent_terms.BITS
    )
    return counts >= MIN_ROWS


def fit_language(
    rows: GateRows,
    lang: str,
    terms: list[tuple[np.ndarray, np.ndarray]],
    rate: float,
    grams: np.ndarray | None = None,
    l2: float = LATENT_L2,
) -> Fitted:
    """``lang``'s latent weights and combined row (module docstring, steps 1–4); ``terms`` every gate row's
    (indices, values); ``grams`` the n-gram column out of fold where the language reads it."""
    index = np.flatnonzero(languages(rows.examples)[lang])
    trained = rows.fitted_on()[index]
    y = keep_labels(rows.examples)
    used = common_terms([terms[int(i)] for i in index], trained)
    picked = [terms[int(i)] for i in index]
    idx = [np.asarray(i[used[i]], dtype=np.int64) for i, _ in picked]
    vals = [latent_terms.features(v[used[i]]) for i, v in picked]
    column = np.zeros(len(rows.examples))
    column[index] = char_grams.oof_scores(
        idx, y[index], rows.folds[index], latent_terms.BITS, trained, l2, vals
    )
    good = trusted(rows.examples)
    statements = np.array([e.keep == 1 for e in rows.examples]) & good
    mine = languages(rows.examples)[lang]
    labelled = mine & (statements | rows.lines) & good
    told, chat = mine & statements, mine & rows.lines
    extra = [c for c in (grams, column) if c is not None]
    parts = (rows.keep[labelled], rows.personal[labelled], statements[labelled].astype(np.int64))
    beta = fit_combined(*parts, own=np.column_stack([c[labelled] for c in extra]))
    a, b, c, k = beta[0], beta[1], beta[2], beta[-1]
    h = beta[3] if grams is not None else 0.0
    score = a * rows.keep + b * rows.personal + c + h * (0 if grams is None else grams) + k * column
    cut = threshold_for(score, chat, rate)
    weights = char_grams.fit(
        [r for r, t in zip(idx, trained, strict=True) if t],
        y[index][trained],
        latent_terms.BITS,
        l2,
        [v for v, t in zip(vals, trained, strict=True) if t],
    )
    report = {
        "l2": l2,
        "rate": rate,
        "rows": int(trained.sum()),
        "positive": int(y[index][trained].sum()),
        "terms": int(used.sum()),
        "statements": int(told.sum()),
        "chitchat_lines": int(chat.sum()),
        "combined": [round(v, 4) for v in (a, b, c, cut)],
        "h": round(h, 4),
        "k": round(k, 4),
        "oof_statements_kept": float((score >= cut)[told].mean()),
        "oof_chitchat_kept": float((score >= cut)[chat].mean()),
        "without_latent": _without(rows, parts, labelled, (told, chat), grams, rate),
    }
    return Fitted(weights, (a, b, c, cut), h, k, report)


def _without(
    rows: GateRows,
    parts: tuple[np.ndarray, np.ndarray, np.ndarray],
    labelled: np.ndarray,
    told_chat: tuple[np.ndarray, np.ndarray],
    grams: np.ndarray | None,
    rate: float,
) -> dict[str, object]:
    """The same fit and cut without the latent column: what the term adds, out of fold."""
    own = None if grams is None else grams[labelled]
    beta = fit_combined(*parts, own=own)
    h = beta[3] if grams is not None else 0.0
    score = beta[0] * rows.keep + beta[1] * rows.personal + beta[2] + h * (0 if grams is None else grams)
    told, chat = told_chat
    cut = threshold_for(score, chat, rate)
    return {
        "combined": [round(v, 4) for v in (*beta, cut)],
        "oof_statements_kept": float((score >= cut)[told].mean()),
        "oof_chitchat_kept": float((score >= cut)[chat].mean()),
    }


def merge_latent(base: dict[str, np.ndarray], fitted: dict[str, Fitted], meta_extra: dict[str, Any]) -> dict:
    """``base``'s arrays with each fitted language's ``combined`` row, ``combined_grams``,
    ``combined_latent`` and ``latent_<lang>`` set; the meta's version and ``report["latent"]`` too."""
    arrays = dict(base)
    combined = np.array(base["combined"], copy=True)
    zeros = np.zeros(len(LANGUAGES))
    h = np.array(base.get("combined_grams", zeros), dtype=np.float32, copy=True)
    k = np.array(base.get("combined_latent", zeros), dtype=np.float32, copy=True)
    for row, lang in enumerate(LANGUAGES):
        if lang in fitted:
            combined[row] = np.array(fitted[lang].row, dtype=combined.dtype)
            h[row], k[row] = fitted[lang].h, fitted[lang].k
            arrays[f"latent_{lang}"] = fitted[lang].weights.astype(np.float16)
    arrays["combined"], arrays["combined_grams"], arrays["combined_latent"] = combined, h, k
    report = {lang: f.report for lang, f in fitted.items()}
    arrays["meta"] = term_meta(base, VERSION, "latent", {**report, **meta_extra})
    return arrays


def latent_run(args: argparse.Namespace, rows: GateRows, command: str) -> dict:
    """Write ``args.out``: the head file ``args.networks`` with the latent term of the ``args.latent``
    languages (each cut at its ``--tell-false-rate``, default ``LATENT_TELL_FALSE_RATE``; the n-gram column,
    where the file reads one, as ``--grams-bits``/``--grams-l2`` say); ``command`` is recorded in the meta.
    Returns the report."""
    langs = args.latent.split(",")
    unknown = [lang for lang in langs if lang not in LANGUAGES]
    if unknown:
        raise ValueError(f"--latent: languages of {LANGUAGES}, not {unknown}")
    rates = args.tell_false_rate or LATENT_TELL_FALSE_RATE
    base = read_arrays(args.networks)
    terms = latent([e.text for e in rows.examples], Path(args.cache) if args.cache else None)
    reads_grams = np.asarray(base.get("combined_grams", np.zeros(len(LANGUAGES))))
    fitted = {}
    for lang in langs:
        grams = None
        if reads_grams[LANGUAGES.index(lang)] != 0:
            grams = oof_grams(rows, lang, int(args.grams_bits), float(args.grams_l2))[0]
        fitted[lang] = fit_language(rows, lang, terms, float(rates[lang]), grams)
    from_version = json.loads(str(base["meta"])).get("version")
    extra = {"networks": args.networks, "networks_version": from_version, "command": command}
    save_head(args.out, merge_latent(base, fitted, extra))
    return {lang: f.report for lang, f in fitted.items()}
