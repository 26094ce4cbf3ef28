"""How the head's thresholds are chosen (issue 35, round 6): cross-fitting and one combined score.

Until round 5 each classifier was trained once on 85 % of the training texts and its thresholds were
picked on the other 15 % — a few hundred chit-chat lines per language, where 1.5–3 % is 5–15 lines — and
the (keep, tell) pair was the arg-max of a flat surface: near-identical retrains moved the English tell
threshold from 0.08 to 0.52 and single sentences flipped. Now:

* **cross-fitting**: the texts are cut into ``FOLDS`` folds (by a seeded hash of the text, so a row keeps
  its fold when rows are added; a chit-chat line's clauses go with the line); one member per fold is
  trained on the other folds, and every training text gets an *out-of-fold* score from the member that
  never saw it. The shipped classifier is the ensemble of the members (their probabilities averaged).
  Thresholds are chosen on the out-of-fold scores of *all* the training texts, six times the rows of the
  old validation part, and the ensemble's scores move less between retrains than one network's.
* **one combined score** (``model.Combined``): whether a clause is kept weighs the clause's keep score and
  the whole message's tell score together — a logistic regression on their logits, fitted on the
  out-of-fold scores (statements against chit-chat lines, classes balanced) — with one threshold: the
  lowest at which at most ``TELL_FALSE_RATE`` of the chit-chat lines pass. The clause that carries the
  fact decides together with the message, instead of one strict check vetoing the other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memory.head.corpus import Example
from memory.head.model import GATE_CLASSES, LANGUAGES, PARTS, Classifier, gate_odds, keep_odds
from memory.model.quick_extract import candidates

FOLDS = 5
# L2 of the combined score's logistic regression (three weights on thousands of rows: barely matters).
COMBINE_L2 = 1e-3

Trainer = Callable[[np.ndarray, np.ndarray, int, np.ndarray], Classifier]


def fold_ids(examples: Sequence[Example], seed: int, folds: int = FOLDS) -> np.ndarray:
    """The fold of each example: a seeded hash of its text, so the same text is always in the same fold
    (duplicates across sources too) and appending rows moves no other row; the clause rows of a
    chit-chat line (``-train-clauses``) go with the first line they were cut from."""
    parent: dict[str, str] = {}
    for e in examples:
        if e.source.endswith("-train"):
            for c in candidates(e.text):
                for t in c.texts():
                    parent.setdefault(t, e.text)
    keys = [parent.get(e.text, e.text) if e.source.endswith("-train-clauses") else e.text for e in examples]
    return np.array([int(hashlib.sha1(f"{seed}\0{k}".encode()).hexdigest()[:8], 16) % folds for k in keys])


def member(model: Classifier, index: int) -> Classifier:
    """One member of an ensemble."""
    return Classifier(*(np.asarray(getattr(model, part))[index] for part in PARTS))


def cross_fit(
    x: np.ndarray,
    y: np.ndarray,
    folds: np.ndarray,
    use: np.ndarray,
    classes: int,
    train: Trainer,
    weights: Callable[[np.ndarray, int], np.ndarray],
) -> tuple[Classifier, np.ndarray]:
    """(the ensemble of one member per fold, out-of-fold logits of every row). Member k is trained on the
    rows of ``use`` outside fold k (class weights by ``weights``) and scores the rows of fold k."""
    members = []
    oof = np.zeros((len(y), classes))
    for k in range(int(folds.max()) + 1):
        rows = use & (folds != k)
        model = train(x[rows], y[rows], classes, weights(y[rows], classes))
        members.append(model)
        oof[folds == k] = model.logits(x[folds == k])[0]
    return Classifier.stack(members), oof


def fit_combined(keep: np.ndarray, tell: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(a, b, c) of ``a·keep + b·tell + c`` (log-odds) by a class-balanced, lightly regularised logistic
    regression (Newton's method: deterministic, converges in a few steps)."""
    f = np.column_stack([keep, tell, np.ones(len(y))])
    counts = np.bincount(y, minlength=2).astype(np.float64)
    w = (1.0 / np.maximum(counts, 1))[y]
    w /= w.sum()
    beta = np.zeros(3)
    for _ in range(50):
        p = 1 / (1 + np.exp(-(f @ beta)))
        grad = f.T @ (w * (p - y)) + COMBINE_L2 * np.r_[beta[:2], 0]
        hess = (f * (w * p * (1 - p))[:, None]).T @ f + COMBINE_L2 * np.diag([1.0, 1.0, 0.0])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(beta[0]), float(beta[1]), float(beta[2])


def combined_scores(weights: tuple[float, float, float], keep: np.ndarray, tell: np.ndarray) -> np.ndarray:
    a, b, c = weights
    return np.asarray(a * keep + b * tell + c)


def best_clause_oof(
    lines: Sequence[Example],
    line_folds: np.ndarray,
    keep: Classifier,
    embed_passages: Callable[[list[str]], np.ndarray],
) -> np.ndarray:
    """The out-of-fold keep log-odds of each chit-chat line as the keeper judges it: its best clause or
    sentence (``quick_extract.candidates``; -50 without any), scored by the member that did not see the line
    (its clause rows are in the line's fold)."""
    texts = [[t for c in candidates(line.text) for t in c.texts()] for line in lines]
    flat = sorted({t for ts in texts for t in ts})
    if not flat:
        return np.full(len(lines), -50.0)
    vectors = embed_passages(flat)
    index = {t: i for i, t in enumerate(flat)}
    per_fold = {
        k: keep_odds(member(keep, k).logits(vectors)[0]) for k in sorted({int(f) for f in line_folds})
    }
    return np.array(
        [
            max((per_fold[int(k)][index[t]] for t in ts), default=-50.0)
            for ts, k in zip(texts, line_folds, strict=True)
        ]
    )


def threshold_for(scores: np.ndarray, negatives: np.ndarray, rate: float) -> float:
    """The lowest threshold at which at most ``rate`` of the negative rows score at or above it."""
    neg = np.sort(scores[negatives])[::-1]
    allowed = int(np.floor(rate * len(neg)))
    return float(neg[allowed]) + 1e-6 if allowed < len(neg) else float(neg.min(initial=0.0))


def trusted(examples: Sequence[Example]) -> np.ndarray:
    """Rows whose label a person gave (written sentences, persona lines, the chit-chat corpora), not the
    dialogue clauses labelled by cosine: thresholds are chosen on these."""
    return np.array([not e.source.startswith("dialogue") for e in examples])


def languages(examples: Sequence[Example]) -> dict[str, np.ndarray]:
    """The rows of each language of ``LANGUAGES``."""
    langs = np.array([e.lang for e in examples])
    return {lang: langs == lang for lang in LANGUAGES}


@dataclass(frozen=True, slots=True)
class Rates:
    """What the thresholds allow, per language where it differs (``train.py`` has the reasons)."""

    tell_false: dict[str, float]  # chit-chat lines kept
    keep_recall: float  # statements a clause's keep threshold alone keeps
    gate_fire: float  # chit-chat lines that make retrieval run
    own_false: float  # other texts read as a question about one's own life


def choose_thresholds(
    examples: Sequence[Example], keep: np.ndarray, gate: np.ndarray, lines: np.ndarray, rates: Rates
) -> tuple[
    dict[str, tuple[float, float, float, float]],
    dict[str, tuple[float, float, float, float]],
    dict[str, object],
]:
    """Per language, from out-of-fold scores of the gate's rows (``keep``: a row's keep log-odds, a
    chit-chat line's best clause's; ``gate``: the gate's logits; ``lines``: the chit-chat lines):
    (keep, gate, own, tell) thresholds and the combined score (a, b, c, threshold), with a report.
    ``keep`` alone keeps ``rates.keep_recall`` of the statements; ``tell`` is the message threshold that,
    with it, lets ``rates.tell_false`` of the lines through (the rule of heads without a combined score)."""
    y_gate = np.array([GATE_CLASSES.index(e.asks or "other") for e in examples])
    own, personal = gate_odds(gate)
    is_own = y_gate == GATE_CLASSES.index("own")
    good = trusted(examples)
    statements = np.array([e.keep == 1 for e in examples]) & good
    labelled = (statements | lines) & good
    thresholds: dict[str, tuple[float, float, float, float]] = {}
    combined: dict[str, tuple[float, float, float, float]] = {}
    report: dict[str, object] = {}
    for lang, rows in languages(examples).items():
        told, chat = rows & statements, rows & lines
        gate_threshold = threshold_for(personal, chat, rates.gate_fire)
        own_threshold = threshold_for(own, rows & ~is_own & good, rates.own_false)
        keep_threshold = float(np.quantile(keep[told], 1 - rates.keep_recall))
        passing = chat & (keep >= keep_threshold)
        share = rates.tell_false[lang] * chat.sum() / max(passing.sum(), 1)
        tell_threshold = threshold_for(personal, passing, min(float(share), 1.0))
        both = (keep >= keep_threshold) & (personal >= tell_threshold)
        mine = rows & labelled
        weights = fit_combined(keep[mine], personal[mine], statements[mine].astype(np.int64))
        score = combined_scores(weights, keep, personal)
        cut = threshold_for(score, chat, rates.tell_false[lang])
        thresholds[lang] = (keep_threshold, gate_threshold, own_threshold, tell_threshold)
        combined[lang] = (*weights, cut)
        report[lang] = {
            "statements": int(told.sum()),
            "chitchat_lines": int(chat.sum()),
            "threshold": gate_threshold,
            "own_threshold": own_threshold,
            "keep_threshold": keep_threshold,
            "tell_threshold": tell_threshold,
            "combined": [round(v, 4) for v in (*weights, cut)],
            "oof_statements_kept_combined": float((score >= cut)[told].mean()),
            "oof_chitchat_kept_combined": float((score >= cut)[chat].mean()),
            "oof_statements_kept_and_told": float(both[told].mean()),
            "oof_chitchat_kept_and_told": float(both[chat].mean()),
            "oof_own_fired": float((personal >= gate_threshold)[rows & is_own].mean()),
            "oof_own_as_own": float((own >= own_threshold)[rows & is_own].mean()),
            "oof_chitchat_fired": float((personal >= gate_threshold)[chat].mean()),
        }
    return thresholds, combined, report
