"""Gate rows of round 14 (issue 35): questions about one's own things said without a pronoun, and long
messages that tell about one's life the way people talk.

Why (the tenth blind set, a dev set since): the gate network refused plain questions about the person's
things said without 我 ("X 多少？", "X 怎么了？" — Chinese drops pronouns all the time, casual English says
"the car" for "my car"), and read long voice-like messages (several clauses joined by commas, spaces or
nothing, about a partner, a child, a shop, with regional words, beside a mood or a request) as not
telling. Its training rows had neither: every written own question carries 我/my, and no composed
message was a gate row (``longer.compose`` builds them for the combined score only).

Rows made here (gate only: ``keep`` and ``category`` unknown, so the keep and category networks never see
them; not "trusted" — ``calibrate.trusted`` leaves out ``gate-`` sources — so the thresholds are still
chosen on the rows a person labelled):

* ``gate-prodrop-<lang>`` ("own"): ``written.json``'s own questions and templated ones with 我/我的/我家/
  俺/咱 (English: my/our → the) dropped where the question stays a question;
* ``gate-frames-<lang>`` ("own") and ``gate-world-<lang>`` ("other"): ``gate_written.json``'s question
  forms by KIND (possessions, shop/work, pets, family, money, dates, health, plans; and the same shapes
  about the world, public things or the assistant), so "no pronoun" stops being a cue either way;
* ``gate-world-template-<lang>``: round 11's world questions (``world.py``, 300 a language) as "other"
  beside them (round 11 added them alone and lost own questions said without "my");
* ``gate-long-<lang>``: 2–5 clauses joined as people dictate (one or two statements of the training rows
  or ``regional_tells``, with chit-chat lines of the corpora's training halves or ``asides``; no final
  mark) as "tell", and chit-chat lines and asides alone joined the same way as "other".

Each row is put in the cross-fitting fold of the rows it was made from (a variant is chosen whose text
hashes to that fold, ``calibrate.fold_ids``), so no member scores a row out of fold after training on
its twin. Deterministic given the training rows and the seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.head.calibrate import fold_ids
from memory.head.corpus import SEED, Example, read_written, written
from memory.head.world import world_examples

SOURCE = "gate-"
WRITTEN = Path(__file__).with_name("gate_written.json")
# Rows per language: own questions from frames, world questions from frames, long messages of each kind.
FRAMES_PER_LANGUAGE = 400
LONG_PER_LANGUAGE = 500
# Tries to find a variant in its parent's fold (1 in 5 hashes there).
TRIES = 40
# Round 14 rows in a training run (``train.training_examples``). Off: tried and not shipped (DATA_CARD
# "Round 14, gate" — MADial's chit-chat injection and LCCC's false keeps); True and ``train --gate-only
# HEAD.npz`` give the variant measured there.
# Round 16 (DATA_CARD "Round 16, gate"): full runs with English's own gate only, not shipped either.
# Round 17: ``train --round14`` sets it for one run (no edit of this line needed).
ON = False

_ZH_DROPS = [
    (re.compile(r"^(?:我们家|我家|咱家|俺家)(?!里)"), ""),
    (re.compile(r"(?:我的|我们的|俺的|咱的)"), ""),
]
_ZH_LEAD = re.compile(r"^(?:我们|我|俺|咱)(?![们自])")
_EN_MINE = re.compile(r"\b(?:my|our)\b", re.I)
_ZH_TAILS = ["", "？", "来着", "呀", "啊？", "呢", "嘞？", "？？"]
_EN_TAILS = ["", "?", " again?", " lol", " again", "??", " btw"]
_ZH_JOINS = ["，", " ", "", "，", "，然后"]
_EN_JOINS = [", ", " ", " and ", ", ", " so "]


def gate_written() -> dict[str, Any]:
    return read_written(WRITTEN)


def fold_of(text: str, seed: int = SEED) -> int:
    return int(fold_ids([Example(text, "", "")], seed)[0])


def dropped(text: str, lang: str) -> str | None:
    """The own question without the speaker ("我儿子几岁了？" → "儿子几岁了？", "where's my passport" →
    "where's the passport"), or None when nothing was dropped or a pronoun stays — except in "提醒我…"
    and "跟你说过我…", which ask about the speaker all the same."""
    body = text.strip().rstrip("？?")
    if lang == "zh":
        out = body
        for pattern, repl in _ZH_DROPS:
            out = pattern.sub(repl, out)
        out = _ZH_LEAD.sub("", out)
        keeps = ("我" in out and "提醒我" not in out and "跟你说" not in out) or len(out) < 3
        return None if out == body or keeps else out
    out = _EN_MINE.sub("the", body)
    if out == body or re.search(r"\b(?:i|me|my|mine|our|we)\b", out, re.I):
        return None
    return out


def in_fold(variants: Sequence[str], fold: int, seed: int) -> str | None:
    """The first variant whose text hashes to ``fold``."""
    return next((v for v in dict.fromkeys(variants) if fold_of(v, seed) == fold), None)


def prodrop_questions(seed: int = SEED) -> list[Example]:
    """``written.json``'s own questions (written and templated) without their pronoun, each in its
    parent's fold."""
    mine = written()
    out: list[Example] = []
    for lang in ("zh", "en"):
        template = mine[f"templates_{lang}"]
        forms = [f.format(n=n) for f in template["forms"] for n in template["nouns"]]
        tails = _ZH_TAILS if lang == "zh" else _EN_TAILS
        for text in list(mine[f"own_questions_{lang}"]) + forms:
            body = dropped(text, lang)
            if body is None:
                continue
            shown = in_fold([body + t for t in tails], fold_of(text, seed), seed)
            if shown is not None:
                out.append(Example(shown, lang, f"{SOURCE}prodrop-{lang}", None, None, "own"))
    return _distinct(out)


def framed(kinds: dict[str, list[list[str]]], n: int, rng: random.Random, lang: str) -> list[str]:
    """``n`` distinct questions (fewer when the frames hold fewer) from forms by kind, casual tails."""
    every = [f.format(x=x) for forms, nouns in kinds.values() for f in forms for x in nouns]
    rng.shuffle(every)
    tails = _ZH_TAILS if lang == "zh" else _EN_TAILS
    shown = [re.sub(r"[？?]$", "", t) + rng.choice(tails) if rng.random() < 0.4 else t for t in every]
    return list(dict.fromkeys(shown))[:n]


def frame_questions(seed: int = SEED, n: int = FRAMES_PER_LANGUAGE) -> list[Example]:
    """Own questions without a pronoun ("own") and the same shapes about the world ("other")."""
    data = gate_written()
    out: list[Example] = []
    for lang in ("zh", "en"):
        rng = random.Random(f"{seed}-gate-frames-{lang}")
        own = framed(data[f"own_frames_{lang}"], n, rng, lang)
        world = framed(data[f"world_frames_{lang}"], n, rng, lang)
        out += [Example(t, lang, f"{SOURCE}frames-{lang}", None, None, "own") for t in own]
        out += [Example(t, lang, f"{SOURCE}world-{lang}", None, None, "other") for t in world]
    return out


def _distinct(rows: list[Example]) -> list[Example]:
    seen: set[str] = set()
    return [r for r in rows if not (r.text in seen or seen.add(r.text))]  # type: ignore[func-returns-value]


def long_messages(examples: Sequence[Example], seed: int = SEED, n: int = LONG_PER_LANGUAGE) -> list[Example]:
    """``n`` composed messages per kind and language: one or two statements among chatter ("tell"), and
    chatter alone ("other"), made of rows of one fold and put in that fold."""
    data = gate_written()
    rng = random.Random(f"{seed}-gate-long")
    out: list[Example] = []
    for lang in ("zh", "en"):
        regional = [t for t in data[f"regional_tells_{lang}"]]
        asides = list(data[f"asides_{lang}"])
        told, chat = _by_fold(examples, lang, regional, asides, seed)
        joins = _ZH_JOINS if lang == "zh" else _EN_JOINS
        for label in ("tell", "other"):
            made = 0
            while made < n:
                fold = rng.randrange(5)
                if not told.get(fold) or len(chat.get(fold, [])) < 4:
                    continue
                parts = rng.sample(chat[fold], rng.randint(1, 3) + (label == "other"))
                if label == "tell":
                    for _ in range(rng.choice((1, 1, 2))):
                        parts.insert(rng.randint(0, len(parts)), rng.choice(told[fold]))
                variants = [_join(parts, joins, random.Random(f"{made}-{k}-{label}")) for k in range(TRIES)]
                shown = in_fold(variants, fold, seed)
                if shown is not None:
                    out.append(Example(shown, lang, f"{SOURCE}long-{lang}", None, None, label))
                    made += 1
    return _distinct(out)


def _by_fold(
    examples: Sequence[Example], lang: str, regional: list[str], asides: list[str], seed: int
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """(statements, chatter) of ``lang`` by fold: the trusted statements of the training rows and the
    regional tells; the chit-chat lines of the training halves (short ones) and the asides."""
    told: dict[int, list[str]] = {}
    chat: dict[int, list[str]] = {}
    statements = [
        e.text
        for e in examples
        if e.lang == lang and e.keep == 1 and e.source.startswith(("persona-", "written", "people-"))
    ]
    lines = [e.text for e in examples if e.lang == lang and e.source.endswith("-train") and len(e.text) < 40]
    for text in statements + regional:
        told.setdefault(fold_of(text, seed), []).append(text)
    for text in lines + asides:
        chat.setdefault(fold_of(text, seed), []).append(text)
    return told, chat


def _join(parts: Sequence[str], joins: Sequence[str], rng: random.Random) -> str:
    """Parts said in one breath: their final marks gone, joined by a comma, a space or nothing."""
    pieces = [p.strip().rstrip("。.!！?？~～") for p in parts]
    text = pieces[0]
    for piece in pieces[1:]:
        text += rng.choice(joins) + piece
    return text


def round14_examples(examples: Sequence[Example], seed: int = SEED, on: bool | None = None) -> list[Example]:
    """Every round-14 gate row (none unless ``on``, default ``ON``)."""
    if not (ON if on is None else on):
        return []
    world = [Example(e.text, e.lang, f"{SOURCE}{e.source}", None, None, "other") for e in world_examples()]
    return prodrop_questions(seed) + frame_questions(seed) + world + long_messages(examples, seed)
