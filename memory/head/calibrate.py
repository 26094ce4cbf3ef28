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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory.head.corpus import Example
from memory.head.floor import floored
from memory.head.model import (
    GATE_CLASSES,
    LANGUAGES,
    PARTS,
    Classifier,
    gate_odds,
    keep_odds,
    read_head,
    spread,
)
from memory.model.quick_extract import SENTENCE_TELL, candidates, said_in

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
    prior: np.ndarray | None = None,
) -> tuple[Classifier, np.ndarray]:
    """(the ensemble of one member per fold, out-of-fold logits of every row). Member k is trained on the
    rows of ``use`` outside fold k (class weights by ``weights``, shared inside a class by ``prior`` when
    given: ``shared_by``) and scores the rows of fold k."""
    members = []
    oof = np.zeros((len(y), classes))
    for k in range(int(folds.max()) + 1):
        rows = use & (folds != k)
        w = weights(y[rows], classes)
        if prior is not None:
            w = shared_by(w, y[rows], prior[rows], classes)
        model = train(x[rows], y[rows], classes, w)
        members.append(model)
        oof[folds == k] = model.logits(x[folds == k])[0]
    return Classifier.stack(members), oof


def shared_by(weights: np.ndarray, y: np.ndarray, prior: np.ndarray, classes: int) -> np.ndarray:
    """``weights`` with each class's total as it was, shared among the class's rows in proportion to
    ``prior`` (round 15: a kind of row that outnumbers another in a class does not outweigh it; the
    classes still weigh what ``weights`` gave them)."""
    out = np.zeros(len(y))
    for c in range(classes):
        rows = y == c
        if rows.any() and prior[rows].sum() > 0:
            out[rows] = prior[rows] * weights[rows].sum() / prior[rows].sum()
    return out


def out_of_fold(model: Classifier, x: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Each row's logits from the member of its fold (the one that never saw it): ``cross_fit``'s
    out-of-fold logits again, from an ensemble already trained on these folds."""
    oof = np.zeros((len(x), int(np.asarray(model.b2).shape[-1])))
    for k in sorted({int(f) for f in folds}):
        oof[folds == k] = member(model, k).logits(x[folds == k])[0]
    return oof


def fit_combined(
    keep: np.ndarray,
    tell: np.ndarray,
    y: np.ndarray,
    spreads: np.ndarray | None = None,
    own: np.ndarray | None = None,
) -> tuple[float, ...]:
    """(a, b, c) of ``a·keep + b·tell + c`` (log-odds) by a class-balanced, lightly regularised logistic
    regression (Newton's method: deterministic, converges in a few steps); with ``spread`` (round 9: how
    small a part of its message the clause is, ``longer.spread``) also (d, e, f) of ``d·s + e·keep·s +
    f·tell·s``, so how much the message counts is learned per message length; with ``own`` (round 13: the
    tell log-odds of the clause's own sentence) also its weight g, last."""
    columns = [keep, tell, np.ones(len(y))]
    if spreads is not None:
        columns += [spreads, keep * spreads, tell * spreads]
    if own is not None:
        columns.append(own)
    f = np.column_stack(columns)
    counts = np.bincount(y, minlength=2).astype(np.float64)
    w = (1.0 / np.maximum(counts, 1))[y]
    w /= w.sum()
    penalty = np.ones(f.shape[1])
    penalty[2] = 0.0  # the intercept is not shrunk
    beta = np.zeros(f.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(f @ beta)))
        grad = f.T @ (w * (p - y)) + COMBINE_L2 * penalty * beta
        hess = (f * (w * p * (1 - p))[:, None]).T @ f + COMBINE_L2 * np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return tuple(float(v) for v in beta)


def combined_scores(
    weights: Sequence[float],
    keep: np.ndarray,
    tell: np.ndarray,
    spreads: np.ndarray | None = None,
    own: np.ndarray | None = None,
) -> np.ndarray:
    """``model.Combined``'s score of rows: (a, b, c), with ``spreads`` (d, e, f) next, with ``own`` g last."""
    a, b, c, *rest = weights
    score = a * keep + b * tell + c
    if spreads is not None and len(rest) >= 3:
        d, e, f = rest[:3]
        score = score + d * spreads + e * keep * spreads + f * tell * spreads
    if own is not None:
        score = score + rest[-1] * own
    return np.asarray(score)


def best_clause_oof(
    lines: Sequence[str],
    line_folds: np.ndarray,
    keep: Classifier,
    embed_passages: Callable[[list[str]], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """The out-of-fold keep log-odds of each message as the keeper judges it: its best clause or sentence
    (``quick_extract.candidates``; -50 without any), scored by the member that did not see the message
    (a chit-chat line's clause rows are in the line's fold); and that clause's ``longer.spread``."""
    texts = [[t for c in candidates(line) for t in c.texts()] for line in lines]
    flat = sorted({t for ts in texts for t in ts})
    if not flat:
        return np.full(len(lines), -50.0), np.zeros(len(lines))
    vectors = embed_passages(flat)
    index = {t: i for i, t in enumerate(flat)}
    per_fold = {
        k: keep_odds(member(keep, k).logits(vectors)[0]) for k in sorted({int(f) for f in line_folds})
    }
    scores, spreads = np.full(len(lines), -50.0), np.zeros(len(lines))
    for i, (line, ts, k) in enumerate(zip(lines, texts, line_folds, strict=True)):
        if ts:
            best = max(ts, key=lambda t: per_fold[int(k)][index[t]])
            scores[i], spreads[i] = per_fold[int(k)][index[best]], spread(best, line)
    return scores, spreads


def sentence_gate_oof(
    lines: Sequence[str],
    line_folds: np.ndarray,
    keep: Classifier,
    gate: Classifier,
    embed: tuple[Callable[[list[str]], np.ndarray], Callable[[list[str]], np.ndarray]],
    sentences: bool | None = None,
) -> np.ndarray:
    """Round 12: each line's out-of-fold gate logits read on the sentence its best clause was said in
    (``quick_extract.said_in``; the keeper weighs a clause with its sentence, not the whole message) — the
    line itself for a line of one sentence. ``embed``: (passages, queries); ``sentences``: ``said_in``'s."""
    said = []
    for line in lines:
        found = candidates(line)
        heard = zip(found, said_in(found, line, sentences), strict=True)
        texts = [(t, s) for c, s in heard for t in c.texts()]
        said.append(texts or [(line, line)])
    flat = sorted({t for pairs in said for t, _ in pairs})
    vectors, index = embed[0](flat), {t: i for i, t in enumerate(flat)}
    chosen = []
    for pairs, k in zip(said, line_folds, strict=True):
        scores = keep_odds(member(keep, int(k)).logits(vectors[[index[t] for t, _ in pairs]])[0])
        chosen.append(pairs[int(np.argmax(scores))][1])
    return gate_oof(chosen, line_folds, gate, embed[1])


def told_as_kept(
    gate: np.ndarray,
    line_mask: np.ndarray,
    lines: Sequence[str],
    line_folds: np.ndarray,
    networks: tuple[Classifier, Classifier],
    embed: Mapping[str, Callable[[list[str]], np.ndarray]],
) -> np.ndarray:
    """The gate logits the keep side's thresholds read (``choose_thresholds``' ``said``): ``gate``, with
    the chit-chat lines' (``line_mask``) read on their best clause's sentence when the keeper reads it so
    (round 12, ``quick_extract.SENTENCE_TELL``). ``networks``: (keep, gate); ``embed``: by mode."""
    said = np.array(gate, copy=True)
    if SENTENCE_TELL:
        pair = (embed["passage"], embed["query"])
        said[line_mask] = sentence_gate_oof(lines, line_folds, *networks, pair)
    return said


def gate_oof(
    texts: Sequence[str],
    folds: np.ndarray,
    gate: Classifier,
    embed_queries: Callable[[list[str]], np.ndarray],
) -> np.ndarray:
    """Out-of-fold gate logits of texts no member trained on, each by the member of its fold (the fold
    its parts came from, ``longer.compose``)."""
    out = np.zeros((len(texts), len(GATE_CLASSES)))
    if not texts:
        return out
    vectors = embed_queries(list(texts))
    for k in sorted({int(f) for f in folds}):
        rows = folds == k
        out[rows] = member(gate, k).logits(vectors[rows])[0]
    return out


def threshold_for(scores: np.ndarray, negatives: np.ndarray, rate: float) -> float:
    """The lowest threshold at which at most ``rate`` of the negative rows score at or above it."""
    neg = np.sort(scores[negatives])[::-1]
    allowed = int(np.floor(rate * len(neg)))
    return float(neg[allowed]) + 1e-6 if allowed < len(neg) else float(neg.min(initial=0.0))


def trusted(examples: Sequence[Example]) -> np.ndarray:
    """Rows whose label a person gave (written sentences, persona lines, the chit-chat corpora), not the
    dialogue clauses labelled by cosine nor round 11's templated world questions (``world.py``) nor round
    14's composed and framed gate rows (``prodrop.py``): thresholds are chosen on these."""
    return np.array([not e.source.startswith(("dialogue", "world-", "gate-")) for e in examples])


def languages(examples: Sequence[Example]) -> dict[str, np.ndarray]:
    """The rows of each language of ``LANGUAGES``."""
    langs = np.array([e.lang for e in examples])
    return {lang: langs == lang for lang in LANGUAGES}


# What ``choose_thresholds`` gives: (keep, gate, own, tell) and the combined score per language, a report.
Chosen = tuple[dict[str, tuple[float, float, float, float]], dict[str, tuple[float, ...]], dict[str, object]]


@dataclass(frozen=True, slots=True)
class Rates:
    """What the thresholds allow, per language where it differs (``train.py`` has the reasons)."""

    tell_false: dict[str, float]  # chit-chat lines kept
    keep_recall: float  # statements a clause's keep threshold alone keeps
    gate_fire: dict[str, float]  # chit-chat lines that make retrieval run (per language: round 13)
    own_false: dict[str, float]  # other texts read as a question about one's own life
    # Round 20: the share of trusted statements the combined cut (and a tell threshold) keeps at least, out
    # of fold, per language; a language not named (or None) has no floor (``floored``).
    statement_floor: dict[str, float] | None = None


@dataclass(frozen=True, slots=True)
class Longer:
    """Out-of-fold features of the composed long messages (``longer.compose``), one entry per message:
    language, best clause's keep log-odds and ``spread``, the message's "own or tell" log-odds, label."""

    langs: np.ndarray
    keep: np.ndarray
    tell: np.ndarray
    spread: np.ndarray
    y: np.ndarray
    own: np.ndarray | None = None  # round 13: the best clause's sentence's "own or tell" log-odds


def choose_thresholds(
    examples: Sequence[Example],
    keep: np.ndarray,
    gate: np.ndarray,
    lines: np.ndarray,
    rates: Rates,
    spreads: np.ndarray | None = None,
    composed: Longer | None = None,
    said: np.ndarray | None = None,
    own: np.ndarray | None = None,
) -> Chosen:
    """Per language, from out-of-fold scores of the gate's rows (``keep``: a row's keep log-odds, a
    chit-chat line's best clause's; ``gate``: the gate's logits; ``lines``: the chit-chat lines):
    (keep, gate, own, tell) thresholds (``_two_checks``), the combined score (a, b, c, threshold) and a
    report. With ``spreads`` (each row's best clause's ``longer.spread``) and ``composed`` (round 9) the
    combined score weighs the clause's share of its message too: (a, b, c, threshold, d, e, f). ``said``
    (round 12, ``sentence_gate_oof``): the logits the keep, tell and combined thresholds read instead of
    ``gate``, which the gate and own thresholds read (the whole message, as retrieval does). ``own`` (round
    13): each row's sentence's "own or tell" log-odds, weighed beside the message's (g; ``_combined``)."""
    gates, gate_report = gate_thresholds(examples, gate, lines, rates)
    whole = gate_odds(gate)[1]
    personal = gate_odds(said)[1] if said is not None else whole
    good = trusted(examples)
    statements = np.array([e.keep == 1 for e in examples]) & good
    labelled = (statements | lines) & good
    thresholds: dict[str, tuple[float, float, float, float]] = {}
    combined: dict[str, tuple[float, ...]] = {}
    report: dict[str, object] = {}
    for lang, rows in languages(examples).items():
        told, chat = rows & statements, rows & lines
        gate_threshold, own_threshold = gates[lang]
        keep_threshold, tell_threshold = _two_checks(keep, personal, told, chat, rates, lang)
        both = (keep >= keep_threshold) & (personal >= tell_threshold)
        mine = rows & labelled
        parts = [keep[mine], personal[mine], statements[mine].astype(np.int64)]
        extra = composed.langs == lang if composed is not None else None
        weights, score = _combined(parts, mine, (keep, personal, spreads, own), composed, extra)
        floor = (rates.statement_floor or {}).get(lang)
        cut, bounds = floored(threshold_for(score, chat, rates.tell_false[lang]), score, told, floor)
        thresholds[lang] = (keep_threshold, gate_threshold, own_threshold, tell_threshold)
        combined[lang] = (*weights[:3], cut, *weights[3:])
        report[lang] = {
            "statements": int(told.sum()),
            "chitchat_lines": int(chat.sum()),
            "keep_threshold": keep_threshold,
            "tell_threshold": tell_threshold,
            "combined": [round(v, 4) for v in combined[lang]],
            **_composed_report(composed, extra, weights, cut),
            "oof_statements_kept_combined": float((score >= cut)[told].mean()),
            "oof_chitchat_kept_combined": float((score >= cut)[chat].mean()),
            "oof_statements_kept_and_told": float(both[told].mean()),
            "oof_chitchat_kept_and_told": float(both[chat].mean()),
            **({"statement_floor": floor, **bounds} if bounds else {}),
            **gate_report[lang],
        }
    return thresholds, combined, report


def gate_thresholds(
    examples: Sequence[Example], gate: np.ndarray, lines: np.ndarray, rates: Rates
) -> tuple[dict[str, tuple[float, float]], dict[str, dict[str, float]]]:
    """Per language, (gate, own) thresholds from the out-of-fold gate logits ``gate`` of the gate's rows
    (``lines``: the chit-chat lines): the gate the lowest whole-message "own or tell" score at which at most
    ``rates.gate_fire`` of the language's lines fire, own the lowest "own" score at which at most
    ``rates.own_false`` of its other trusted texts read as an own question; and a report of each."""
    is_own = np.array([(e.asks or "other") == "own" for e in examples])
    own, whole = gate_odds(gate)
    good = trusted(examples)
    chosen: dict[str, tuple[float, float]] = {}
    report: dict[str, dict[str, float]] = {}
    for lang, rows in languages(examples).items():
        chat = rows & lines
        gate_threshold = threshold_for(whole, chat, rates.gate_fire[lang])
        own_threshold = threshold_for(own, rows & ~is_own & good, rates.own_false[lang])
        chosen[lang] = (gate_threshold, own_threshold)
        report[lang] = {
            "threshold": gate_threshold,
            "own_threshold": own_threshold,
            "oof_own_fired": _share((whole >= gate_threshold)[rows & is_own]),
            "oof_own_as_own": _share((own >= own_threshold)[rows & is_own]),
            "oof_chitchat_fired": _share((whole >= gate_threshold)[chat]),
        }
    return chosen, report


def _share(hits: np.ndarray) -> float:
    """The share of true values; NaN, without numpy's "mean of empty slice" warning, when there are none (a
    language without own questions among the rows)."""
    return float(hits.mean()) if hits.size else float("nan")


def _two_checks(
    keep: np.ndarray, personal: np.ndarray, told: np.ndarray, chat: np.ndarray, rates: Rates, lang: str
) -> tuple[float, float]:
    """(keep, tell) thresholds of heads without a combined score: ``keep`` alone keeps
    ``rates.keep_recall`` of the statements, ``tell`` with it lets ``rates.tell_false`` of the lines by —
    and, with a statement floor (round 20), keeps at least that share of the statements ``keep`` passes."""
    keep_threshold = float(np.quantile(keep[told], 1 - rates.keep_recall))
    passing = chat & (keep >= keep_threshold)
    share = rates.tell_false[lang] * chat.sum() / max(passing.sum(), 1)
    tell = threshold_for(personal, passing, min(float(share), 1.0))
    floor = (rates.statement_floor or {}).get(lang)
    kept = told & (keep >= keep_threshold)
    if floor is None or not kept.any():
        return keep_threshold, tell
    return keep_threshold, floored(tell, personal, kept, floor)[0]


def _fit_with(
    parts: list[np.ndarray], spreads: np.ndarray | None, composed: Longer | None, extra: np.ndarray | None
) -> tuple[float, ...]:
    """``fit_combined`` on (keep, tell, label) rows, with their spreads and the composed messages of the
    language (``extra``) beside them when there are spreads."""
    if spreads is None:
        return fit_combined(*parts)
    rows = [*parts, spreads]
    if composed is not None and extra is not None:
        rows = [np.r_[p, q[extra]] for p, q in zip(rows, _features(composed), strict=True)]
    return fit_combined(*rows)


def _combined(
    parts: list[np.ndarray],
    mine: np.ndarray,
    rows: tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None],
    composed: Longer | None,
    extra: np.ndarray | None,
) -> tuple[tuple[float, ...], np.ndarray]:
    """(the combined weights fitted on ``parts``, the rows of ``mine``; every row's score): ``rows`` =
    (keep, tell, spreads, own) of all rows; with ``own`` (round 13) the weights are (a, b, c, 0, 0, 0, g)."""
    keep, personal, spreads, own = rows
    if own is not None:
        weights = _fit_own([*parts, own[mine]], composed, extra)
        score = combined_scores(weights, keep, personal, None, own)
        return (*weights[:3], 0.0, 0.0, 0.0, weights[3]), score
    weights = _fit_with(parts, spreads[mine] if spreads is not None else None, composed, extra)
    return weights, combined_scores(weights, keep, personal, spreads)


def _fit_own(parts: list[np.ndarray], composed: Longer | None, extra: np.ndarray | None) -> tuple[float, ...]:
    """Round 13: ``fit_combined`` on (keep, tell, label, own) rows and the composed messages of the
    language (``extra``) beside them: (a, b, c, g)."""
    if composed is not None and extra is not None and composed.own is not None:
        more = [composed.keep, composed.tell, composed.y, composed.own]
        parts = [np.r_[p, q[extra]] for p, q in zip(parts, more, strict=True)]
    keep, tell, y, own = parts
    return fit_combined(keep, tell, y, None, own)


def _features(composed: Longer) -> list[np.ndarray]:
    return [composed.keep, composed.tell, composed.y, composed.spread]


def _composed_report(
    composed: Longer | None, extra: np.ndarray | None, weights: Sequence[float], cut: float
) -> dict[str, object]:
    """The composed messages of one language kept at the chosen threshold (out of fold)."""
    if composed is None or extra is None or not extra.any():
        return {}
    keep, tell, y, share = (f[extra] for f in _features(composed))
    if composed.own is not None:
        passed = combined_scores(weights, keep, tell, share, composed.own[extra]) >= cut
    else:
        passed = combined_scores(weights, keep, tell, share) >= cut
    return {
        "composed": int(extra.sum()),
        "oof_composed_told_kept": float(passed[y == 1].mean()),
        "oof_composed_chatter_kept": float(passed[y == 0].mean()),
    }


def given_networks(
    path: str, passages: np.ndarray, queries: np.ndarray, folds: np.ndarray, in_gate: np.ndarray
) -> tuple[Classifier, Classifier, Classifier, np.ndarray, np.ndarray, dict[str, object]]:
    """``--networks``: the keep, category and gate networks of a head file trained on these folds, and
    their members' out-of-fold keep log-odds and gate logits (as training them would have given)."""
    with np.load(path) as data:
        given = read_head(data)
    keep = keep_odds(out_of_fold(given.keep_w, passages, folds))
    gate = out_of_fold(given.gate_w, queries, folds[in_gate])
    return given.keep_w, given.category_w, given.gate_w, keep, gate, {"networks": path}
