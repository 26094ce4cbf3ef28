"""Training pairs for the re-ranker (issue 35): a question about one's own life → the statement answering it.

Mined from the persona dialogues in ``../shared/data/persona/`` (XPersona en/zh, Synthetic-Persona-Chat),
never from an evaluation set. In those dialogues each speaker has a few persona lines ("I have two dogs.",
"我是博物馆导游。"); when one speaker asks the other about their life ("do you have pets?",
"你做什么工作的？") and the answer is close to one of the answerer's persona lines, the question — turned to
the first person ("do I have pets?", "我做什么工作的？") — is asked of that line, and the answerer's other
persona lines are the hard negatives: many facts of one person, as in the bench.

"Close" is measured against a baseline from the data (as ``memory/head/dialogues.py`` labels clauses):
the passage cosine of the answer's best clause to its own speaker's lines must beat ``MATCH_PERCENTILE`` %
of answers' best cosine to a stranger's lines, and the best line must stand ``MATCH_MARGIN`` above the
speaker's second best (so the answer names one fact). Deterministic: the same files give the same
pairs. ``DATA_CARD_RERANK.md``.
"""

from __future__ import annotations

import csv
import itertools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory.head.dialogues import persona_lines, xpersona_pairs
from memory.model.quick_extract import candidates

SEED = 20261129
MATCH_PERCENTILE = 99.0
MATCH_MARGIN = 0.02
# Question turns kept per source before matching (all 844 Chinese ones; the English sources have 3.3k and
# 10k: a sample, as embedding every answer costs ~30 min on the shared 2 cores).
QUESTIONS_PER_SOURCE = {"xpersona-zh": 4000, "xpersona-en": 1000, "synthetic-en": 1500}
_SPEAKER = re.compile(r"^User ([12]):\s*(.*)$")
_SENTENCE = re.compile(r"[^.!?。！？]*[?？]")
_EN_YOU = re.compile(r"\b(?:you|your|yours|yourself|you're|youre|you've|you'd|you'll)\b", re.I)
# Questions that carry no topic of their own ("what about you?"): the answer would be the only clue.
_EN_EMPTY = re.compile(r"^(?:and |so |what |how )?(?:about )?(?:you|u)\b\W*$|^(?:how|what) about you\b", re.I)
_ZH_EMPTY = re.compile(r"^[那你您呢吗呀啊？?，,。！\s]*$")
_PREPOSITIONS = frozenset(["to", "for", "with", "about", "at", "from", "of", "by", "like", "than"])
_EN_SWAPS = {
    "you're": "I'm",
    "youre": "I'm",
    "you've": "I've",
    "you'd": "I'd",
    "you'll": "I'll",
    "yourself": "myself",
    "yours": "mine",
    "your": "my",
}
_EN_VERBS = {("are", "you"): ("am", "I"), ("were", "you"): ("was", "I"), ("you", "are"): ("I", "am")}


@dataclass(frozen=True, slots=True)
class Exchange:
    """One question asked of a speaker, that speaker's answer and persona lines."""

    question: str
    answer: str
    lang: str
    source: str
    persona: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pair:
    """A first-person question, the persona line that answers it, the speaker's other lines."""

    question: str
    line: str
    negatives: tuple[str, ...]
    lang: str
    source: str
    persona_key: str


def first_person(question: str, lang: str) -> str:
    """The question as the person would ask it about themself ("do you have pets?" → "do I have pets?")."""
    if lang == "zh":
        return question.replace("你们", "我们").replace("您", "我").replace("你", "我")
    words = question.split()
    out: list[str] = []
    for i, word in enumerate(words):
        core = re.sub(r"^\W+|\W+$", "", word)
        low = core.lower()
        pair = (low, re.sub(r"\W+$", "", words[i + 1]).lower()) if i + 1 < len(words) else None
        if pair in _EN_VERBS:
            new = _EN_VERBS[pair][0]
        elif i > 0 and (re.sub(r"\W+$", "", words[i - 1]).lower(), low) in _EN_VERBS:
            new = _EN_VERBS[(re.sub(r"\W+$", "", words[i - 1]).lower(), low)][1]
        elif low in _EN_SWAPS:
            new = _EN_SWAPS[low]
        elif low in ("you", "u"):
            previous = re.sub(r"\W+$", "", words[i - 1]).lower() if i > 0 else ""
            new = "me" if previous in _PREPOSITIONS else "I"
        else:
            out.append(word)
            continue
        if core[:1].isupper() and new not in ("I", "I'm", "I've", "I'd", "I'll"):
            new = new.capitalize()
        out.append(word.replace(core, new, 1))
    return " ".join(out)


def asked_question(turn: str, lang: str) -> str | None:
    """The last question of a turn when it asks the other speaker about themself, else None."""
    text = "".join(turn.split()) if lang == "zh" else " ".join(turn.split())
    found = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    if not found:
        return None
    question = found[-1]
    if lang == "zh":
        if not re.search("[你您]", question) or _ZH_EMPTY.match(question) or len(question) < 5:
            return None
        return question
    if not _EN_YOU.search(question) or _EN_EMPTY.match(question) or len(question.split()) < 4:
        return None
    return question


def _xpersona(root: Path, lang: str) -> list[Exchange]:
    """XPersona: each dialogue pair is (other speaker, persona speaker); the persona's lines are given."""
    out: list[Exchange] = []
    source = f"xpersona-{lang}"
    for persona, asked, said in xpersona_pairs(root, lang):
        question = asked_question(asked, lang) if persona else None
        if question is not None:
            answer = "".join(said.split()) if lang == "zh" else " ".join(said.split())
            out.append(Exchange(question, answer, lang, source, persona))
    return out


def _synthetic(root: Path) -> list[Exchange]:
    """Synthetic-Persona-Chat: both speakers have persona lines; a question, then the other's turn."""
    out: list[Exchange] = []
    for split in ("valid", "test"):
        path = root / "persona" / f"Synthetic-Persona-Chat_{split}.csv"
        with open(path, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                personas = {k: persona_lines(row.get(f"user {k} personas")) for k in ("1", "2")}
                spoken = (row.get("Best Generated Conversation") or "").splitlines()
                turns = [m.groups() for m in (_SPEAKER.match(line.strip()) for line in spoken) if m]
                for (asker, said), (answerer, reply) in itertools.pairwise(turns):
                    question = asked_question(said, "en")
                    if asker != answerer and question is not None and personas[answerer]:
                        out.append(Exchange(question, reply, "en", "synthetic-en", personas[answerer]))
    return out


def exchanges(root: Path, excluded: set[str]) -> list[Exchange]:
    """A seeded sample of each source's question exchanges, minus any question in ``excluded``."""
    out: list[Exchange] = []
    for found in (_xpersona(root, "zh"), _xpersona(root, "en"), _synthetic(root)):
        if not found:
            continue
        kept = [e for e in found if not {e.question, first_person(e.question, e.lang)} & excluded]
        random.Random(f"{SEED}-{found[0].source}").shuffle(kept)
        out += kept[: QUESTIONS_PER_SOURCE[found[0].source]]
    return out


def _clauses(answer: str) -> list[str]:
    """The clauses of an answer as the keeper splits a message (``quick_extract.candidates``)."""
    return list(dict.fromkeys(part for candidate in candidates(answer) for part in candidate.parts))


def matched_pairs(
    found: list[Exchange], embed: Callable[[list[str]], np.ndarray]
) -> tuple[list[Pair], dict[str, dict[str, float]]]:
    """The exchanges whose answer names one persona line (module docstring), as training pairs; per
    language the cosine threshold and counts. An answer is compared clause by clause (a clause names one
    fact; a whole turn mixes it with small talk); an answer with no clause is dropped. ``embed``: unit
    passage vectors of texts."""
    lines = sorted({p for e in found for p in e.persona})
    index = {p: i for i, p in enumerate(lines)}
    line_vectors = embed(lines)
    clauses = [_clauses(e.answer) for e in found]
    distinct = sorted({c for found_clauses in clauses for c in found_clauses})
    clause_vectors = dict(zip(distinct, embed(distinct), strict=True)) if distinct else {}

    def best(i: int, persona: tuple[str, ...]) -> list[tuple[float, str]]:
        answer = np.stack([clause_vectors[c] for c in clauses[i]])
        own = answer @ line_vectors[[index[p] for p in persona]].T  # (clauses, lines)
        return sorted(zip(own.max(axis=0).tolist(), persona, strict=True), reverse=True)

    rng = random.Random(f"{SEED}-strangers")
    report: dict[str, dict[str, float]] = {}
    pairs: list[Pair] = []
    for lang in ("en", "zh"):
        rows = [i for i, e in enumerate(found) if e.lang == lang and clauses[i]]
        if not rows:
            continue
        personas = sorted({found[i].persona for i in rows})
        stranger = []
        for i in rows:
            other = found[i].persona
            while other == found[i].persona and len(personas) > 1:
                other = personas[rng.randrange(len(personas))]
            stranger.append(best(i, other)[0][0])
        threshold = float(np.percentile(stranger, MATCH_PERCENTILE))
        kept = 0
        for i in rows:
            exchange = found[i]
            cosines = best(i, exchange.persona)
            second = cosines[1][0] if len(cosines) > 1 else -1.0
            if cosines[0][0] < threshold or cosines[0][0] - second < MATCH_MARGIN:
                continue
            kept += 1
            line = cosines[0][1]
            pairs.append(
                Pair(
                    first_person(exchange.question, lang),
                    line,
                    tuple(p for p in exchange.persona if p != line),
                    lang,
                    exchange.source,
                    "\n".join(exchange.persona),
                )
            )
        asked = sum(1 for e in found if e.lang == lang)
        report[lang] = {"threshold": threshold, "questions": asked, "with_clauses": len(rows), "pairs": kept}
    return pairs, report
