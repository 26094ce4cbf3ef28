"""Weak labels from the persona dialogues (issue 35, round 2): what people say about themselves in chat.

In PersonaChat-style data each speaker was given a few persona sentences ("我有两只狗。", "I am a nurse.")
and then chatted; their turns paraphrase those sentences in a casual register ("和我的两只狗一起放松",
"just taking a break from baking") between small talk ("那很好", "sounds good"). A clause of a turn is
labelled by its passage-vector cosine to the speaker's **own** persona sentences, against a baseline: the
same clause's cosine to a **stranger's** persona (the persona of another dialogue, seeded). Per language:

* worth keeping ("tell"): closer to the speaker's own persona than 99 % of clauses are to a stranger's;
* not worth keeping ("other"): further from it than half of them are from a stranger's, and not
  beginning with "I"/"my"/"我" (a first-person clause far from the persona may still be a fact the persona
  did not list: it is left out rather than called chatter);
* everything between is not used.

The thresholds come from the data (percentiles), not from a hand-picked cosine. Sources and licences:
``DATA_CARD.md``. Deterministic: the same files give the same clauses, samples and labels.

Round 10 (``Mining``; tried, not shipped, DATA_CARD "Round 10"): facts as people type them. More English
clauses (7,000 per source: ``ROUND10``, ``python -m memory.head.train --round10``); and, measured worse, the
English positive percentile 97 (read on a sample: clauses between the 97th and 99th percentile are still
mostly the speaker's own facts, "I'm half Italian", "my older brother does too"), every second labelled
clause of **both** labels typed casually (``corpus.casual``: lower case, no full stop, "btw"/"lol",
对了/啦/呢 — on both sides, so the register is no cue for either), and whole turns for the gate
(``turn_examples``): a turn holding a positive clause tells about the speaker's life ("cool! my older
sister lives with me right now."); a turn whose clauses are all chatter and none first person does not.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory.head.corpus import SEED, Example, casual, normalise_dailydialog
from memory.model.quick_extract import candidates

# Clauses sampled per source (the English sources are large; their yield of statements is lower).
CLAUSES_PER_SOURCE = {"dialogue-zh": 5000, "dialogue-en-xpersona": 4000, "dialogue-en-synthetic": 4000}
# The baseline percentiles: a positive beats this share of stranger cosines, a negative falls below it.
POSITIVE_PERCENTILE = 99.0
NEGATIVE_PERCENTILE = 50.0
# Whole turns per language and label for the gate (round 10, ``turn_examples``).
TURNS_PER_LABEL = 600
_FIRST_PERSON = re.compile(r"^(?:i|i'm|im|i've|i'd|i'll|my|me|we|our)\b|^(?:我|咱)", re.I)
_SPEAKER = re.compile(r"^User ([12]):\s*(.*)$")


@dataclass(frozen=True, slots=True)
class DialogueClause:
    """A clause one speaker said, with that speaker's persona sentences."""

    text: str
    lang: str
    source: str
    persona: tuple[str, ...]
    turn: str = ""


@dataclass(frozen=True, slots=True)
class Mining:
    """How the dialogues are mined: the round-2 defaults (2026.12-7's data), or round 10's (``ROUND10``)."""

    clauses_en: int = 4000
    positive_percentile_en: float = POSITIVE_PERCENTILE
    casual: bool = False
    turns: int = 0


ROUND2 = Mining()
# Round 10 as measured best (DATA_CARD "Round 10"): the larger English sample only. The percentile 97, the
# casual typing and the whole turns (``Mining(7000, 97.0, True, TURNS_PER_LABEL)``) were tried and cost tells.
ROUND10 = Mining(clauses_en=7000)


def _clauses(turn: str) -> list[str]:
    """The clauses the keeper would judge of a turn (questions and what a rule refuses are dropped)."""
    return [part for candidate in candidates(turn) for part in candidate.parts]


def xpersona_pairs(root: Path, lang: str) -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(persona lines, other speaker's turn, persona speaker's reply) of every dialogue pair of XPersona's
    valid and test files in ``lang`` (the training data of the head and of the re-ranker)."""
    for split in ("valid", "test"):
        name = (
            f"xpersona_Zh_persona_split_{split}_human_annotated.json"
            if lang == "zh"
            else f"xpersona_En_persona_{split}.json"
        )
        for item in json.loads((root / "persona" / name).read_text(encoding="utf-8")):
            persona = tuple(p.strip() for p in item["persona"] if p.strip())
            for pair in item["dialogue"]:
                if len(pair) >= 2:
                    yield persona, pair[0], pair[1]


def _xpersona(root: Path, lang: str) -> list[DialogueClause]:
    """The persona speaker's replies (the second of each pair) of XPersona's valid and test dialogues."""
    out: list[DialogueClause] = []
    source = "dialogue-zh" if lang == "zh" else "dialogue-en-xpersona"
    for persona, _, said in xpersona_pairs(root, lang):
        reply = "".join(said.split()) if lang == "zh" else normalise_dailydialog(said)
        out += [DialogueClause(c, lang, source, persona, reply) for c in _clauses(reply)]
    return out


def persona_lines(cell: str | None) -> tuple[str, ...]:
    """A Synthetic-Persona-Chat persona cell's lines, stripped, blank ones dropped."""
    return tuple(line.strip() for line in (cell or "").splitlines() if line.strip())


def _synthetic(root: Path) -> list[DialogueClause]:
    """Both speakers' turns of Synthetic-Persona-Chat (each speaker has a persona)."""
    out: list[DialogueClause] = []
    for split in ("valid", "test"):
        path = root / "persona" / f"Synthetic-Persona-Chat_{split}.csv"
        with open(path, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                personas = {k: persona_lines(row.get(f"user {k} personas")) for k in ("1", "2")}
                for line in (row.get("Best Generated Conversation") or "").splitlines():
                    match = _SPEAKER.match(line.strip())
                    if match and personas[match.group(1)]:
                        said, persona = match.group(2), personas[match.group(1)]
                        out += [
                            DialogueClause(c, "en", "dialogue-en-synthetic", persona, said)
                            for c in _clauses(said)
                        ]
    return out


def dialogue_clauses(root: Path, mining: Mining = ROUND2) -> list[DialogueClause]:
    """A seeded sample of each source's distinct clauses (``CLAUSES_PER_SOURCE``; English ones
    ``mining.clauses_en``). The shuffle is the same for any count: a larger sample holds the smaller."""
    out: list[DialogueClause] = []
    for clauses in (_xpersona(root, "zh"), _xpersona(root, "en"), _synthetic(root)):
        distinct = list({c.text: c for c in clauses}.values())
        if not distinct:
            continue
        source = distinct[0].source
        random.Random(f"{SEED}-{source}").shuffle(distinct)
        out += distinct[: mining.clauses_en if distinct[0].lang == "en" else CLAUSES_PER_SOURCE[source]]
    return out


def weak_labels(
    clauses: list[DialogueClause], embed: Callable[[list[str]], np.ndarray], mining: Mining = ROUND2
) -> tuple[list[Example], dict[str, dict[str, float]]]:
    """Labelled examples of ``clauses`` (see the module docstring) and, per language, the two cosine
    thresholds and counts. ``embed`` gives unit passage vectors of texts."""
    personas = sorted({p for c in clauses for p in c.persona})
    vectors = embed([c.text for c in clauses])
    persona_vectors = embed(personas)
    index = {p: i for i, p in enumerate(personas)}
    rng = random.Random(f"{SEED}-strangers")
    own, stranger = np.zeros(len(clauses)), np.zeros(len(clauses))
    by_lang: dict[str, list[int]] = {}
    for i, clause in enumerate(clauses):
        by_lang.setdefault(clause.lang, []).append(i)
    for rows in by_lang.values():
        pool = sorted({c.persona for c in (clauses[i] for i in rows)})
        for i in rows:
            mine = clauses[i].persona
            other = mine
            while other == mine and len(pool) > 1:
                other = pool[rng.randrange(len(pool))]
            own[i] = max(float(vectors[i] @ persona_vectors[index[p]]) for p in mine)
            stranger[i] = max(float(vectors[i] @ persona_vectors[index[p]]) for p in other)
    examples: list[Example] = []
    report: dict[str, dict[str, float]] = {}
    for lang, rows in by_lang.items():
        top = mining.positive_percentile_en if lang == "en" else POSITIVE_PERCENTILE
        high = float(np.percentile(stranger[rows], top))
        low = float(np.percentile(stranger[rows], NEGATIVE_PERCENTILE))
        positives = [i for i in rows if own[i] >= high]
        far = [i for i in rows if own[i] < low and not _FIRST_PERSON.match(clauses[i].text)]
        negatives = far[: len(positives)]
        rng = random.Random(f"{SEED}-casual-{lang}")
        shown = {i: _typed(clauses[i].text, lang, rng, mining.casual) for i in positives + negatives}
        examples += [Example(shown[i], lang, clauses[i].source, 1, None, "tell") for i in positives]
        examples += [
            Example(shown[i], lang, f"{clauses[i].source}-chat", 0, None, "other") for i in negatives
        ]
        turns = turn_examples(clauses, rows, positives, far, mining.turns)
        examples += turns
        report[lang] = {
            "positive_cosine": high,
            "negative_cosine": low,
            "kept": len(positives),
            "chatter": len(negatives),
            "positive_percentile": top,
            "turns_telling": sum(e.asks == "tell" for e in turns),
            "turns_chatter": sum(e.asks == "other" for e in turns),
        }
    return examples, report


def _typed(text: str, lang: str, rng: random.Random, on: bool) -> str:
    """Every second clause typed casually (``corpus.casual``) when ``on``; the text as said otherwise. The
    generator is drawn from either way, so switching it on changes only the texts."""
    flip = rng.random() < 0.5
    typed = casual(text, lang, rng)
    return typed if on and flip and typed else text


def turn_examples(
    clauses: list[DialogueClause], rows: list[int], positives: list[int], far: list[int], per_label: int
) -> list[Example]:
    """Round 10: whole turns of one language (``rows`` of ``clauses``) for the gate only (``keep`` None:
    the keeper judges clauses, which the rows above are): "tell" when one of the turn's sampled clauses
    is a positive, "other" when every clause the keeper cuts of it is a sampled clause far from the
    persona (``far``: not first person either); ``per_label`` of each, seeded."""
    if per_label <= 0 or not rows:
        return []
    lang = clauses[rows[0]].lang
    positive = {clauses[i].turn for i in positives if clauses[i].turn}
    chat = {clauses[i].text for i in far}
    chatter = {
        turn
        for turn in {clauses[i].turn for i in far if clauses[i].turn} - positive
        if all(c in chat for c in _clauses(turn))
    }
    out: list[Example] = []
    for label, turns in (("tell", positive), ("other", chatter)):
        chosen = sorted(turns)
        random.Random(f"{SEED}-turns-{lang}-{label}").shuffle(chosen)
        source = f"dialogue-{lang}-turns" + ("" if label == "tell" else "-chat")
        out += [Example(t, lang, source, None, None, label) for t in chosen[:per_label]]
    return out


def keep_labels(examples: list[Example]) -> tuple[np.ndarray, np.ndarray]:
    """(keep label, 0 where none; which rows have one): round 10's whole turns are for the gate only
    (``turn_examples``), so the keep classifier and its first model leave them out (``train.py``)."""
    known = np.array([e.keep is not None for e in examples])
    return np.array([e.keep or 0 for e in examples], dtype=np.int64), known
