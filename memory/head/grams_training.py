"""The character n-gram term of a language's combined score (issue 35, round 22): ``train --only grams
--networks FILE --grams zh [--grams-bits 15] [--tell-false-rate zh=0.02]``.

Why: the embedder alone does not separate Chinese statements about one's life from LCCC chatter at the
rates the combined score is cut at; the message's characters do (DATA_CARD "Round 21, Chinese tell": out of
fold, the n-gram term kept 0.919 of the trusted Chinese statements at held-out LCCC 0.016, the shipped row
0.838 at 0.032). Round 21 measured it with a scratch script; this is the trainer's way to build it, so the
shipped file is rebuilt from its command.

What it does, per language named by ``--grams``, on the gate's training rows as a full run builds them
(same data, seed and folds):

1. the hashed character 1–3-gram logistic score (``char_grams``) of "asks or tells about one's own life"
   against "other", learned on the language's gate rows a person labelled (``GateRows.fitted_on``), each
   row scored by the model fitted on the other folds;
2. that score as a fourth column ``h`` beside the combined score's keep and tell columns, fitted by
   ``calibrate.fit_combined`` on the trusted statements against the chit-chat lines (the keep and tell
   log-odds those of FILE's networks out of fold, as ``choose_thresholds`` reads them), the cut the lowest
   score at which at most the language's tell rate of the lines pass;
3. the n-gram weights refitted on every such row, written as ``grams_<lang>`` (float16), ``h`` in
   ``combined_grams``, the language's ``combined`` row replaced.

Every other array of FILE — the networks, thresholds, the other languages' combined rows — is written bit
for bit; ``read_head`` reads the term only where ``h`` is not zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.head import char_grams
from memory.head.calibrate import fit_combined, languages, threshold_for, trusted
from memory.head.corpus import Example
from memory.head.model import LANGUAGES, VERSION
from memory.head.outputs import read_arrays, save_head, term_meta

# The version a head file carries once a language's n-gram term is fitted here: the shipped head's
# (``model.VERSION``), which a round bumps before it trains (round 22: 2026.12-22g).
GRAMS_VERSION = VERSION
# 2^15 buckets stored as float16: the head file stays under the 2 MB (2^16 was 8.6 kB over; out of
# fold 2^15 kept as many statements as 2^18 at the 0.02 rate: DATA_CARD "Round 21").
GRAMS_BITS = 15
# The share of the language's training chit-chat lines the combined cut lets through without
# ``--tell-false-rate``: round 21's candidates were cut at 0.02 (0.03, the shipped rows' rate, let held-out
# LCCC 0.038 through with the term).
GRAMS_TELL_FALSE_RATE = 0.02
# Gate classes read as the n-gram's positive class (``Example.asks``).
POSITIVE = ("own", "tell")


@dataclass(frozen=True, slots=True)
class GateRows:
    """The gate's training rows with the out-of-fold scores the combined score is fitted on."""

    examples: list[Example]
    keep: np.ndarray  # keep log-odds (a chit-chat line's: its best clause's)
    personal: np.ndarray  # "own or tell" log-odds the keep side reads (``calibrate.told_as_kept``)
    lines: np.ndarray  # which rows are chit-chat lines
    folds: np.ndarray
    usable: np.ndarray  # the rows the gate trains on (not a chit-chat self-statement)
    # Round 27 (``train --grams-also gate-zh-fast-``): sources fitted on besides the trusted rows — written
    # forms of each class apart, whose frames (not shared parts) tell the classes apart.
    also: tuple[str, ...] = ()

    def fitted_on(self) -> np.ndarray:
        """The rows the n-gram is fitted on: the gate's, less the ones no person labelled (the dialogue
        clauses labelled by cosine, round 14's composed and framed rows, templated world questions —
        ``calibrate.trusted``) unless their source begins with one of ``also``: composed rows share their
        parts' characters across classes by construction, and a weak label is the embedder's own reading,
        which the term is there to add to."""
        named = np.array([bool(self.also) and e.source.startswith(self.also) for e in self.examples])
        return self.usable & (trusted(self.examples) | named)


@dataclass(frozen=True, slots=True)
class Fitted:
    """One language's n-gram term: its weights, the combined row (a, b, c, cut), ``h``, a report."""

    weights: np.ndarray
    row: tuple[float, float, float, float]
    h: float
    report: dict[str, object]


def labels(examples: list[Example]) -> np.ndarray:
    """1 for a row that asks or tells about the speaker's own life, 0 for any other."""
    return np.array([int((e.asks or "other") in POSITIVE) for e in examples])


def fit_language(rows: GateRows, lang: str, bits: int, rate: float, l2: float = char_grams.L2) -> Fitted:
    """``lang``'s n-gram weights and combined row (module docstring, steps 1–3); ``l2`` the weight decay of
    the n-gram's fits (``char_grams.fit``)."""
    mine = languages(rows.examples)[lang]
    index = np.flatnonzero(mine)
    grams, buckets = oof_grams(rows, lang, bits, l2)
    y = labels(rows.examples)
    trained = rows.fitted_on()[index]
    good = trusted(rows.examples)
    statements = np.array([e.keep == 1 for e in rows.examples]) & good
    labelled = mine & (statements | rows.lines) & good
    parts = (rows.keep[labelled], rows.personal[labelled], statements[labelled].astype(np.int64))
    a, b, c, h = fit_combined(*parts, own=grams[labelled])
    told, chat = mine & statements, mine & rows.lines
    score = a * rows.keep + b * rows.personal + c + h * grams
    cut = threshold_for(score, chat, rate)
    kept = [row for row, used in zip(buckets, trained, strict=True) if used]
    weights = char_grams.fit(kept, y[index][trained], bits, l2)
    without = fit_combined(*parts)  # the row this language would have without the term (a check)
    report: dict[str, object] = {
        "bits": bits,
        "l2": l2,
        "rate": rate,
        "rows": int(trained.sum()),
        "positive": int(y[index][trained].sum()),
        "statements": int(told.sum()),
        "chitchat_lines": int(chat.sum()),
        "combined": [round(v, 4) for v in (a, b, c, cut)],
        "h": round(h, 4),
        "oof_statements_kept": float((score >= cut)[told].mean()),
        "oof_chitchat_kept": float((score >= cut)[chat].mean()),
        "refit_without_grams": [round(v, 4) for v in without],
    }
    return Fitted(weights, (a, b, c, cut), h, report)


def oof_grams(rows: GateRows, lang: str, bits: int, l2: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """Every gate row's n-gram log-odds out of fold (zero for the other languages' rows) and the buckets of
    ``lang``'s rows, in order (step 1 of the module docstring; round 36 reads the column beside its own)."""
    index = np.flatnonzero(languages(rows.examples)[lang])
    buckets = [char_grams.grams(rows.examples[int(i)].text, bits) for i in index]
    grams = np.zeros(len(rows.examples))
    trained = rows.fitted_on()[index]
    y = labels(rows.examples)[index]
    grams[index] = char_grams.oof_scores(buckets, y, rows.folds[index], bits, trained, l2)
    return grams, buckets


def merge_grams(base: dict[str, np.ndarray], fitted: dict[str, Fitted], meta_extra: dict[str, Any]) -> dict:
    """``base``'s arrays with each fitted language's ``combined`` row, ``combined_grams`` and ``grams_<lang>``
    set; the meta's version and ``report["grams"]`` too. Every other array bit for bit."""
    arrays = dict(base)
    combined = np.array(base["combined"], copy=True)
    h = np.array(base.get("combined_grams", np.zeros(len(LANGUAGES))), dtype=np.float32, copy=True)
    for row, lang in enumerate(LANGUAGES):
        if lang in fitted:
            combined[row] = np.array(fitted[lang].row, dtype=combined.dtype)
            h[row] = fitted[lang].h
            arrays[f"grams_{lang}"] = fitted[lang].weights.astype(np.float16)
    arrays["combined"], arrays["combined_grams"] = combined, h
    report = {lang: f.report for lang, f in fitted.items()}
    arrays["meta"] = term_meta(base, GRAMS_VERSION, "grams", {**report, **meta_extra})
    return arrays


def grams_run(
    networks: str,
    out: str,
    rows: GateRows,
    langs: list[str],
    bits: int,
    rates: dict,
    command: str = "",
    l2: float = char_grams.L2,
) -> dict:
    """Write ``out``: ``networks``' head file with the n-gram term of ``langs`` (``rates``: each language's
    tell rate; ``command``: the trainer's command line, recorded in the meta; ``l2``: ``fit_language``'s);
    returns the report."""
    unknown = [lang for lang in langs if lang not in LANGUAGES]
    if unknown:
        raise ValueError(f"--grams: languages of {LANGUAGES}, not {unknown}")
    base = read_arrays(networks)
    for extra in ("combined_spread", "combined_sentence"):  # rounds 9 and 13's terms: not refitted here
        if extra in base and np.any(base[extra]):
            raise ValueError(f"--only grams refits (a, b, c) alone; {networks} has {extra} (rounds 9/13)")
    fitted = {lang: fit_language(rows, lang, bits, float(rates[lang]), l2) for lang in langs}
    from_version = json.loads(str(base["meta"])).get("version")
    save_head(
        out,
        merge_grams(
            base, fitted, {"networks": networks, "networks_version": from_version, "command": command}
        ),
    )
    return {lang: f.report for lang, f in fitted.items()}
