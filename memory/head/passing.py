"""Gate rows of round 19 (issue 35, passing35): facts about one's life said *in passing* ("tell") and the
requests, complaints and moods around them said alone ("other").

Why (DATA_CARD "Round 19, in passing"): on the newest dev sets most English tells that are not kept carry
the fact inside something else — a request to the assistant (draft, plan, compute, recommend), a complaint or
a mood, a correction, a subordinate clause, brackets, after "because"/"so" — and for a third of the misses
the best clause passes the keep network while the *message's* tell (the gate's "tell" log-odds of the whole
message) falls under the cut: nothing the gate was trained on told it that "can you draft …, my husband is a
paramedic" tells about one's life. These rows put such messages on the tell side; their counterparts (the
same requests and moods with no lasting personal fact, or with a fact about the world) stay "other", so "is a
request" does not become "tells".

Rows made here (gate only, like ``dated.py`` and ``own_asked.py``: ``keep`` and ``category`` unknown, so the
keep and category networks never see them; sources ``gate-passing-en`` / ``gate-passing-other-en``, so
``calibrate.trusted`` leaves them out and the thresholds are still chosen on the rows a person labelled):
``passing_written.json``'s frames filled with its facts (oneself, partner, children, parents, siblings,
colleagues, pets, health, plans, documents, money, one's things said without I/my; negations and corrections),
requests, moods and world remarks; about a third typed casually (lower case, a lead, a tail, a typo).

Written for this purpose (passing35) from general knowledge; no evaluation set opened or paraphrased.
Deterministic given the seed; off unless ``ON`` (``train --passing``). ``screened`` drops a row too like any
evaluation text (difflib ratio ≥ ``NEAR``), and the trainer screens every run's rows with it.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory.head.corpus import SEED, Example, read_written

SOURCE = "gate-passing-en"
OTHER_SOURCE = "gate-passing-other-en"
WRITTEN = Path(__file__).with_name("passing_written.json")
TELL_PER_LANGUAGE = 400
OTHER_PER_LANGUAGE = 300
CASUAL_SHARE = 0.35
TYPO_SHARE = 0.15
NEAR = 0.75  # a row this like an evaluation text (difflib ratio, lower case) is dropped
# Round 19's rows in a training run (``train.training_examples``); ``train --passing`` sets it.
ON = False

_SLOT = re.compile(r"\{(\w+)\}")


def passing_written() -> dict[str, Any]:
    return read_written(WRITTEN)


class _Filler:
    """Fills a frame's slots: the composite slots (fact, request, mood, correction, world) from their
    lists, the rest from ``slots_en``, each drawn afresh."""

    def __init__(self, data: dict[str, Any], rng: random.Random) -> None:
        self.data, self.rng = data, rng
        self.lists: dict[str, list[str]] = {
            "fact": data["facts_en"] + data["facts_not_en"],
            "request": data["requests_en"],
            "request2": data["requests_en"],
            "mood": data["moods_en"],
            "correction": data["corrections_en"],
            "world": data["world_en"],
            "gripe": data["gripes_en"],
            "gripe_short": data["gripes_short_en"],
            **data["slots_en"],
        }

    def fill(self, frame: str) -> str:
        text = frame
        for _ in range(6):  # slots hold slots ({correction} → "… {fact}" → "… {job}")
            if not _SLOT.search(text):
                break
            text = _SLOT.sub(lambda m: self.rng.choice(self.lists[m.group(1)]), text)
        return re.sub(r"\s+", " ", text).strip()


def _sentences_capitalised(text: str) -> str:
    """Plain register: each sentence begins with a capital, the message ends with a stop."""
    text = re.sub(r"(^|[.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    return text if text[-1] in ".!?)'" else text + "."


def typo(text: str, rng: random.Random) -> str:
    """One slip of the thumb: two neighbouring letters of a longer word swapped."""
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not long:
        return text
    i = rng.choice(long)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def _casual(text: str, casual: dict[str, list[str]], rng: random.Random) -> str:
    """Typed in a chat: lower case, a lead, a tail, maybe a typo, no full stop."""
    lead, tail = rng.choice(casual["leads"]), rng.choice(casual["tails"])
    body = text[0].lower() + text[1:] if not text.startswith(("I ", "I'")) else text
    body = typo(body, rng) if rng.random() < TYPO_SHARE / CASUAL_SHARE else body
    return (lead + body.rstrip(".") + tail).strip()


def _made(n: int, frames: list[str], data: dict[str, Any], rng: random.Random) -> list[str]:
    """``n`` distinct texts (fewer if the frames cannot make them), the frames taken in turn."""
    filler, out, tries = _Filler(data, rng), dict[str, None](), 0
    while len(out) < n and tries < n * 20:
        text = filler.fill(frames[tries % len(frames)])
        tries += 1
        casual = rng.random() < CASUAL_SHARE
        shown = _casual(text, data["casual_en"], rng) if casual else _sentences_capitalised(text)
        out.setdefault(shown, None)
    return list(out)


def passing_statements(seed: int = SEED, n: int = TELL_PER_LANGUAGE) -> list[Example]:
    """Facts about one's life said inside a request, a mood, a correction or an aside ("tell")."""
    data = passing_written()
    texts = _made(n, data["frames_tell_en"], data, random.Random(f"{seed}-{SOURCE}"))
    return [Example(t, "en", SOURCE, None, None, "tell") for t in texts]


def passing_others(seed: int = SEED, n: int = OTHER_PER_LANGUAGE) -> list[Example]:
    """The same requests and moods with no lasting personal fact ("other")."""
    data = passing_written()
    texts = _made(n, data["frames_other_en"], data, random.Random(f"{seed}-{OTHER_SOURCE}"))
    return [Example(t, "en", OTHER_SOURCE, None, None, "other") for t in texts]


def plain_text(text: str) -> str:
    """Lower case, punctuation to spaces, one space between words: how the screen compares texts."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w ]", " ", text.lower())).strip()


def too_near(text: str, others: Iterable[str], cut: float = NEAR) -> str | None:
    """The first of ``others`` whose difflib ratio with ``text`` (lower case, no punctuation) is ≥ ``cut``,
    or None."""
    return _nearest(text, [(o, plain_text(o)) for o in others], cut)


def _nearest(text: str, others: list[tuple[str, str]], cut: float) -> str | None:
    """``too_near`` over (text, plain text) pairs made once. The length bound (a ratio is at most
    2·shorter/(both)) and the quick ratios skip most pairs."""
    mine = plain_text(text)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(mine)
    for other, plain in others:
        if not plain or 2 * min(len(plain), len(mine)) / (len(plain) + len(mine)) < cut:
            continue
        matcher.set_seq1(plain)
        if matcher.real_quick_ratio() >= cut and matcher.quick_ratio() >= cut and matcher.ratio() >= cut:
            return other
    return None


def screened(rows: list[Example], evaluation: Iterable[str], cut: float = NEAR) -> list[Example]:
    """``rows`` less any too like an evaluation text (``too_near``)."""
    texts = [(t, plain_text(t)) for t in evaluation]
    return [e for e in rows if _nearest(e.text, texts, cut) is None]


def passing_examples(
    seed: int = SEED, on: bool | None = None, evaluation: Iterable[str] | None = None
) -> list[Example]:
    """Every round-19 gate row (none unless ``on``, default ``ON``), screened against ``evaluation``."""
    if not (ON if on is None else on):
        return []
    rows = passing_statements(seed) + passing_others(seed)
    return rows if evaluation is None else screened(rows, evaluation)
