"""Chit-chat lines that do state a lasting fact about the speaker (issue 35, round 31).

Why (DATA_CARD "Round 31"): the head learns "nothing to keep" from LCCC's and DailyDialog's lines, and
``bench.everyday --corpora`` counts every held-out line the keeper keeps as a false keep. But some of those
lines are what the keeper is for — a speaker saying they are getting divorced, were born in Guangzhou, sell
insurance on Saturdays. Round 5's ``train.self_statements`` leaves out the rows a first model *scores* as
statements; this module holds what a reader *judged*: every line of the training half and the first 1,000
held-out lines of each corpus, labelled "fact", "unsure" or no (``chitchat_facts.json``; lines by hash, so
no corpus text is copied here).

Two uses:
* training (``relabel``, ``train --chitchat-facts``): a training line judged "fact" is no longer chit-chat —
  ``tell`` makes it a statement (keep 1, gate "tell", trusted: a person's label), ``drop`` leaves it out of
  every label; either way the clauses cut from it lose their "not kept" label, and the cut the thresholds
  choose on the chit-chat lines (``source`` ending "-train") no longer counts it. "Unsure" lines stay
  chit-chat. Off by default (``MODE``), so older heads rebuild as they were.
* measuring (``bench.everyday_measures.false_keeps``): beside the share of lines kept, the share of judged
  lines kept that were not judged "fact" ("unsure" counts against the keeper), and the share of "fact" lines
  kept.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from memory.head.corpus import Example
from memory.model.quick_extract import candidates

LABELS = Path(__file__).with_name("chitchat_facts.json")
MODES = ("off", "drop", "tell")
# What ``relabel`` does with a training line judged "fact" (``train --chitchat-facts``).
MODE = "off"
# The chit-chat sources of ``corpus.build`` (their lines, and the clauses cut from those lines).
CORPORA = ("lccc", "dailydialog")


def line_key(text: str) -> str:
    """A line's key in the label file: the first 16 hex digits of the SHA-256 of its text, stripped."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class CorpusLabels:
    """One corpus's judgements; a line not in ``judged`` was never read."""

    judged: frozenset[str]
    facts: frozenset[str]
    unsure: frozenset[str]

    def label(self, text: str) -> str | None:
        """ "fact", "unsure", "no", or None for a line nobody judged."""
        key = line_key(text)
        if key not in self.judged:
            return None
        return "fact" if key in self.facts else "unsure" if key in self.unsure else "no"


@cache
def load_labels(path: Path = LABELS) -> dict[str, CorpusLabels]:
    """Each corpus's labels from ``path``. A fact or unsure key must be judged, and not both."""
    data = json.loads(path.read_text(encoding="utf-8"))
    labels: dict[str, CorpusLabels] = {}
    for corpus in CORPORA:
        part = data[corpus]
        judged, facts, unsure = (frozenset(part[k]) for k in ("judged", "facts", "unsure"))
        if not (facts | unsure) <= judged or facts & unsure:
            raise ValueError(f"{path}: {corpus}'s fact and unsure keys must be judged and apart")
        labels[corpus] = CorpusLabels(judged, facts, unsure)
    return labels


def judged_label(corpus: str, text: str) -> str | None:
    """The label a reader gave ``text`` as a line of ``corpus`` ("fact", "unsure", "no"), or None for a line
    nobody judged or a name that is not a judged corpus (the benches' groups: "tell", "chitchat", …)."""
    labels = load_labels().get(corpus)
    return labels.label(text) if labels else None


def relabel(
    examples: list[Example], mode: str | None = None, labels: dict[str, CorpusLabels] | None = None
) -> list[Example]:
    """``examples`` with each chit-chat training line judged "fact" (``labels``, default the shipped file's)
    relabelled as ``mode`` (default ``MODE``) says, in place, so no other row moves (the validation split is
    by position): ``tell`` — ``<corpus>-told``, keep 1, gate "tell"; ``drop`` — ``<corpus>-fact``, no label.
    The clauses cut from such a line (and from no line judged otherwise) become ``<corpus>-fact-clauses``
    with no label; the gate sees neither they nor a dropped line (``gate_training.GATE_ROWS_PER_SOURCE``).
    A relabelled row's fold is its text's own, as any row's outside the chit-chat sources (``calibrate.
    fold_ids``)."""
    mode = MODE if mode is None else mode
    if mode not in MODES:
        raise ValueError(f"chit-chat facts mode {mode!r}: one of {', '.join(MODES)}")
    if mode == "off":
        return examples
    labels = load_labels() if labels is None else labels
    facts = {
        (corpus, e.text)
        for e in examples
        if (corpus := _corpus(e.source, "-train")) and labels[corpus].label(e.text) == "fact"
    }
    pieces = _pieces(facts) - _pieces(
        {(corpus, e.text) for e in examples if (corpus := _corpus(e.source, "-train"))} - facts
    )  # a clause also cut from a line judged no ("Good morning") stays "not kept"
    told = mode == "tell"
    out = []
    for e in examples:
        if (corpus := _corpus(e.source, "-train")) and (corpus, e.text) in facts:
            source = f"{corpus}-{'told' if told else 'fact'}"
            e = replace(
                e, source=source, keep=1 if told else None, category=None, asks="tell" if told else None
            )
        elif (corpus := _corpus(e.source, "-train-clauses")) and (corpus, e.text) in pieces:
            e = replace(e, source=f"{corpus}-fact-clauses", keep=None)
        out.append(e)
    return out


def is_told(source: str) -> bool:
    """Whether a row is a chit-chat line ``relabel`` made a statement: the trainer reads it on its best
    clause, as the keeper reads a message and as it reads the chit-chat lines (``train._prepare``)."""
    return bool(_corpus(source, "-told"))


def _pieces(lines: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Each (corpus, line)'s clauses and sentences as the keeper cuts them (``corpus.build``'s clauses)."""
    return {(corpus, t) for corpus, line in lines for c in candidates(line) for t in c.texts()}


def _corpus(source: str, suffix: str) -> str:
    """The corpus a chit-chat source ``<corpus><suffix>`` belongs to, or "" for any other source."""
    head = source.removesuffix(suffix)
    return head if head != source and head in CORPORA else ""
