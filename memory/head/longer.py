"""Long messages for the combined score (issue 35, round 9): a fact said inside a message of chatter.

The combined score (``model.Combined``) was fitted on the training texts as they are — one statement, or
one chit-chat line — so it never saw the message that fails in use: a fact clause inside a long chatty
message ("ah grand so, busy day here, the wife's sister is over from Ennis since Monday, she's a nurse,
anyway how's things"). On such texts the message's tell score is low (−5 to −12) while the fact clause
scores high, and the fit, which leaned on the message, refused the clause (blind6: 76 of 77 lost tells).

``compose`` builds such messages from training texts only: a trusted statement (persona line, written or
composed statement) with one to three chit-chat lines of the corpora's **training halves** around it
("kept"), and two to four chit-chat lines joined ("not kept"), in the separators people use (". ", ", ",
a space; "，", "。", a space, none — voice-to-text Chinese has no punctuation). Every part of a message is
of one cross-fitting fold, so the member of that fold never saw any of it and its scores are out of fold.
The combination learns from these how much the message should count when the clause is a small part of
it (``spread``); no weight is set by hand. Tried in round 9 and not shipped (``train --longer``, off by
default): the fact clauses of the lost tells score no higher on keep than the best clause of held-out
chatter of the same length, so no weighing of clause and message keeps them at the same false-keep rate
(DATA_CARD, "Round 9").
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory.head.calibrate import Chosen, Longer, best_clause_oof, gate_oof, member, sentence_gate_oof
from memory.head.corpus import Example
from memory.head.model import Classifier, gate_odds, keep_odds, language, spread
from memory.model.quick_extract import candidates, said_in

__all__ = ["Composed", "compose", "composed_inputs", "long_messages", "sentence_features", "spread"]

# Composed messages of each kind ("kept", "not kept") per language.
PER_LANGUAGE = 400
_JOINS = {"en": [". ", ", ", " ", "! ", " lol "], "zh": ["，", "。", " ", "", "！"]}
# Round 13 (``train --sentence``): the failing shape is a fact *sentence* beside a question or a mood in
# another sentence, so mostly joins that end a sentence (and some that do not, as people type).
SENTENCE_JOINS = {"en": [". ", "! ", ". ", " "], "zh": ["。", "！", "。", "，", " "]}
# Statement sources a composed message may carry (a person's label; not the dialogue clauses).
_STATEMENTS = ("persona-", "written", "people-")


@dataclass(frozen=True, slots=True)
class Composed:
    """One composed message: its text, language, whether it carries a statement, and its fold."""

    text: str
    lang: str
    keep: int
    fold: int


def compose(
    examples: Sequence[Example],
    folds: np.ndarray,
    usable: np.ndarray,
    seed: int,
    n: int = PER_LANGUAGE,
    joins: dict[str, list[str]] | None = None,
) -> list[Composed]:
    """``n`` messages with a statement inside chatter and ``n`` of chatter alone per language, each made of
    rows of one fold (``usable``: the rows that may be used — not the chit-chat rows left out as real
    self-statements), joined by ``joins`` (default ``_JOINS``). Deterministic given the rows and the seed."""
    rng = random.Random(seed)
    out: list[Composed] = []
    for lang in sorted({e.lang for e in examples}):
        told: dict[int, list[str]] = {}
        chat: dict[int, list[str]] = {}
        for e, fold, ok in zip(examples, folds, usable, strict=True):
            if not ok or e.lang != lang:
                continue
            if e.source.endswith("-train"):
                chat.setdefault(int(fold), []).append(e.text)
            elif e.keep == 1 and e.source.startswith(_STATEMENTS):
                told.setdefault(int(fold), []).append(e.text)
        shared = sorted(set(told) & set(chat))
        if not shared:
            continue
        for keep in (1, 0):
            for _ in range(n):
                fold = rng.choice(shared)
                parts = rng.sample(chat[fold], min(rng.randint(1, 3) + (1 - keep), len(chat[fold])))
                if keep:
                    parts.insert(rng.randint(0, len(parts)), rng.choice(told[fold]))
                out.append(Composed(_join(parts, (joins or _JOINS)[lang], rng), lang, keep, fold))
    return out


def _join(parts: Sequence[str], joins: Sequence[str], rng: random.Random) -> str:
    text = parts[0].strip()
    for part in parts[1:]:
        joint = rng.choice(joins)
        text = text.rstrip(" .。!！") + joint + part.strip() if joint.strip() else text + joint + part.strip()
    return text


def long_messages(
    made: Sequence[Composed],
    models: tuple[Classifier, Classifier],
    embed_passages: Callable[[list[str]], np.ndarray],
    embed_queries: Callable[[list[str]], np.ndarray],
    sentences: bool = False,
) -> Longer:
    """Out-of-fold features of composed messages (``compose``), each scored by the keep and gate members
    (``models``) of the fold it was made from, which never saw any of its parts; with ``sentences`` (round
    13) also the tell of the best clause's own sentence (``calibrate.sentence_gate_oof``)."""
    texts, made_folds = [m.text for m in made], np.array([m.fold for m in made], dtype=np.int64)
    keep, spreads = best_clause_oof(texts, made_folds, models[0], embed_passages)
    tell = gate_odds(gate_oof(texts, made_folds, models[1], embed_queries))[1]
    langs, y = np.array([m.lang for m in made]), np.array([m.keep for m in made], dtype=np.int64)
    own = None
    if sentences:
        pair = (embed_passages, embed_queries)
        own = gate_odds(sentence_gate_oof(texts, made_folds, *models, pair, sentences=True))[1]
    return Longer(langs, keep, tell, spreads, y, own)


def sentence_features(
    examples: Sequence[Example],
    folds: np.ndarray,
    usable: np.ndarray,
    seed: int,
    n: int,
    lines: tuple[np.ndarray, np.ndarray, np.ndarray, Sequence[str], np.ndarray],
    models: tuple[Classifier, Classifier],
    embed: Mapping[str, Callable[[list[str]], np.ndarray]],
    choose: Callable[..., Chosen],
) -> tuple[np.ndarray, np.ndarray, Longer]:
    """Round 13 (``train --sentence``): (the gate rows' keep log-odds, their "own or tell" log-odds of the
    sentence — a statement row's own, a chit-chat line's that of the clause it is judged by — and ``n``
    composed messages per kind and language with the same features), all out of fold. The keeper keeps
    a message when *any* clause passes, so a line is judged by its clause with the highest ``a·keep +
    g·own``: a first fit (``choose``: ``calibrate.choose_thresholds`` given all but keep, composed and
    own) on the best clause by keep, then every line and composed
    message read again on its best clause by that score. ``lines``: (the gate rows' keep log-odds and
    logits, which gate rows are chit-chat lines, their texts and folds)."""
    keep, gate, mask, texts, line_folds = lines
    keep, own = np.array(keep, copy=True), np.array(gate_odds(gate)[1], copy=True)
    made = compose(examples, folds, usable, seed, n, SENTENCE_JOINS)
    plain = long_messages(made, models, embed["passage"], embed["query"])
    tables = clause_table(texts, line_folds, models, embed)
    made_tables = clause_table([m.text for m in made], np.array([m.fold for m in made]), models, embed)
    line_langs = [language(t) for t in texts]
    weights = {lang: (1.0, 0.0) for lang in ("en", "zh")}  # first: the best clause by keep alone
    composed = plain
    for second in (False, True):
        if second:
            fitted = choose(keep=keep, composed=composed, own=own)[1]
            weights = {lang: (float(w[0]), float(w[-1])) for lang, w in fitted.items()}
        picked = [_pick(t, weights[lang]) for t, lang in zip(tables, line_langs, strict=True)]
        keep[mask] = [k for k, _ in picked]
        own[mask] = [o for _, o in picked]
        again = [_pick(t, weights[m.lang]) for t, m in zip(made_tables, made, strict=True)]
        made_keep, made_own = np.array([k for k, _ in again]), np.array([o for _, o in again])
        composed = Longer(plain.langs, made_keep, plain.tell, plain.spread, plain.y, made_own)
    return keep, own, composed


def _pick(table: np.ndarray, weights: tuple[float, float]) -> tuple[float, float]:
    """(keep, own) of the clause with the highest ``a·keep + g·own`` (``weights``: (a, g))."""
    row = table[int(np.argmax(table[:, 0] * weights[0] + table[:, 1] * weights[1]))]
    return float(row[0]), float(row[1])


def clause_table(
    texts: Sequence[str],
    text_folds: np.ndarray,
    models: tuple[Classifier, Classifier],
    embed: Mapping[str, Callable[[list[str]], np.ndarray]],
) -> list[np.ndarray]:
    """Per text, one row per clause (``quick_extract.candidates``): its out-of-fold keep log-odds and the
    "own or tell" log-odds of its own sentence (``said_in``), by the members of the text's fold; a text
    without a clause: one row (-50, the text's own tell)."""
    said = []
    for text in texts:
        found = candidates(text)
        pairs = [(t, s) for c, s in zip(found, said_in(found, text, True), strict=True) for t in c.texts()]
        said.append(pairs or [("", text)])
    clauses = sorted({t for pairs in said for t, _ in pairs if t})
    sentences = sorted({s for pairs in said for _, s in pairs})
    at, sat = {t: i for i, t in enumerate(clauses)}, {s: i for i, s in enumerate(sentences)}
    passages, queries = embed["passage"](clauses), embed["query"](sentences)
    keep_w, gate_w = models
    scores = {
        k: (
            keep_odds(member(keep_w, k).logits(passages)[0]),
            gate_odds(member(gate_w, k).logits(queries)[0])[1],
        )
        for k in sorted({int(f) for f in text_folds})
    }
    tables = []
    for pairs, k in zip(said, text_folds, strict=True):
        keep, tell = scores[int(k)]
        tables.append(np.array([[keep[at[t]] if t else -50.0, tell[sat[s]]] for t, s in pairs]))
    return tables


def composed_inputs(
    how_many: tuple[int, int],
    base: tuple[Sequence[Example], np.ndarray, np.ndarray, int],
    lined: tuple[np.ndarray, np.ndarray, np.ndarray, Sequence[str], np.ndarray, np.ndarray],
    models: tuple[Classifier, Classifier],
    embed: Mapping[str, Callable[[list[str]], np.ndarray]],
    choose: Callable[..., Chosen],
) -> tuple[np.ndarray | None, Longer | None, np.ndarray, np.ndarray | None]:
    """The trainer's composed messages: (spreads, composed, the gate rows' keep log-odds, own) for
    ``how_many`` = (``--longer``, round 9: message length; ``--sentence``, round 13: the sentence's tell,
    ``sentence_features``); ``base``: (examples, folds, usable rows, seed); ``lined``: the gate rows' keep
    log-odds and logits, which gate rows are chit-chat lines, their texts, folds and best clauses' spreads."""
    examples, folds, usable, seed = base
    keep, gate, mask, texts, line_folds, line_spreads = lined
    spreads, composed, own = None, None, None
    if how_many[0] > 0:
        spreads = np.zeros(len(keep))
        spreads[mask] = line_spreads
        made = compose(examples, folds, usable, seed, how_many[0])
        composed = long_messages(made, models, embed["passage"], embed["query"])
    if how_many[1] > 0:
        lines = (keep, gate, mask, texts, line_folds)
        keep, own, composed = sentence_features(
            examples, folds, usable, seed, how_many[1], lines, models, embed, choose
        )
    return spreads, composed, keep, own
