"""Gate rows of round 18 (issue 35, own35): plain first-person questions about one's own life, as "own".

Why (DATA_CARD "Round 17, shipping D2"): with round 14's rows (``prodrop.py``) English's gate reads far fewer
plain first-person questions ("how many … do I have", "what did I … last month", "which … do I like") as
asking about one's own life — 13g read 787 of LoCoMo's 1,252 first-person questions as own, round 16's V2
and round 17's D2 about 408. Round 14's own rows are pronoun-less ("when's the dentist?"); its world rows
and long "other" messages sit nearer these plain questions than any own row does. These rows put the plain
first-person question back on the own side: counts, past events with and without dates, likes, plans,
places, people, habits; past, present and future.

Rows made here (gate only, like ``prodrop.py`` and ``dated.py``: ``keep`` and ``category`` unknown, so the
keep and category networks never see them; source ``gate-own-asked-en``, so ``calibrate.trusted`` leaves
them out and the thresholds are still chosen on the rows a person labelled): ``own_asked_written.json``'s
forms filled from its slot lists, the forms taken in turn, about a fifth typed casually.

Written for this purpose (own35); no evaluation set opened or paraphrased. Deterministic given the seed; off
unless ``ON`` (``train --own-asked``).

Round 27 (issue 35, enhowto; DATA_CARD "Round 27, English how-to questions"): how-to, advice and world
questions with "I"/"my"/"me"/"we" as their generic subject ("how long can I keep …", "why does my … keep …",
"can I …", "where can I …") read as own questions, so memories were shown for small talk. ``howto_rows``
writes both sides of that shape from ``howto_written.json``: "other" (the answer lies in the world, source
``gate-howto-other-en``) and "own" (the same shapes, the answer in the person's own life as told before —
pick-up times, where they put things, their bills, appointments, prescriptions, documents, numbers, routines;
``gate-howto-own-en``); its "twins" are near pairs across the labels. Casual typing on both sides alike.
Gate only and untrusted as above; off unless ``HOWTO`` (``train --en-howto``); screened against the
evaluation texts with round 19's ``passing.screened``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory.head.corpus import SEED, Example, read_written
from memory.head.passing import plain_text, screened, typo

SOURCE = "gate-own-asked-en"
WRITTEN = Path(__file__).with_name("own_asked_written.json")
PER_LANGUAGE = 420
CASUAL_SHARE = 0.2
# Round 18's rows in a training run (``train.training_examples``); ``train --own-asked`` sets it.
ON = False
# Round 27's how-to rows, both labels (``howto_rows``); ``train --en-howto`` sets ``HOWTO``.
HOWTO = False
HOWTO_WRITTEN = Path(__file__).with_name("howto_written.json")
HOWTO_COUNTS = {"own": 300, "other": 300}
HOWTO_SOURCES = {"own": "gate-howto-own-en", "other": "gate-howto-other-en"}
HOWTO_CASUAL_SHARE = 0.4  # on both labels alike
HOWTO_TYPO_SHARE = 0.1

_SLOT = re.compile(r"\{(\w+)\}")


def own_asked_written() -> dict[str, Any]:
    return read_written(WRITTEN)


def _casual(text: str, casual: dict[str, list[str]], rng: random.Random) -> str:
    """Typed in a chat: a lead, lower case, maybe no question mark, a tail."""
    lead, tail = rng.choice(casual["leads"]), rng.choice(casual["tails"])
    body = text.rstrip("?")
    body = body if body.startswith("I ") else body[0].lower() + body[1:]
    return (lead + body + tail + ("?" if rng.random() < 0.5 else "")).strip()


def own_asked(seed: int = SEED, n: int = PER_LANGUAGE) -> list[Example]:
    """``n`` distinct plain first-person questions about one's own life ("own"), fewer if the forms cannot
    make them; a form without slots gives one row."""
    data = own_asked_written()
    forms: list[str] = data["forms_en"]
    slots: dict[str, list[str]] = data["slots_en"]
    rng = random.Random(f"{seed}-{SOURCE}")
    out: dict[str, None] = {}
    tries = 0
    while len(out) < n and tries < n * 20:
        form = forms[tries % len(forms)]
        tries += 1
        text = _SLOT.sub(lambda m: rng.choice(slots[m.group(1)]), form)
        shown = _casual(text, data["casual_en"], rng) if rng.random() < CASUAL_SHARE else text
        out.setdefault(shown, None)
    return [Example(t, "en", SOURCE, None, None, "own") for t in out]


def howto_written() -> dict[str, Any]:
    return read_written(HOWTO_WRITTEN)


def _typed(text: str, casual: dict[str, list[str]], rng: random.Random) -> str:
    """Typed in a chat: mostly all lower case ("i"), else only the first letter; a lead, a tail, the
    question mark often dropped, now and then a slip of the thumb."""
    body = text.lower() if rng.random() < 0.7 else text[0].lower() + text[1:]
    body = typo(body, rng) if rng.random() < HOWTO_TYPO_SHARE / HOWTO_CASUAL_SHARE else body
    body = body.rstrip("?") if rng.random() < 0.6 else body
    return (rng.choice(casual["leads"]) + body + rng.choice(casual["tails"])).strip()


def _side(forms: list[str], data: dict[str, Any], n: int, rng: random.Random, seen: set[str]) -> list[str]:
    """``n`` texts from ``forms`` taken in turn (fewer if they cannot make them), none filled as one already
    in ``seen`` (up to case and punctuation, before the casual typing); ``seen`` takes them in."""
    slots: dict[str, list[str]] = data["slots"]
    out: list[str] = []
    tries = 0
    while len(out) < n and tries < n * 20:
        text = _SLOT.sub(lambda m: rng.choice(slots[m.group(1)]), forms[tries % len(forms)])
        tries += 1
        shown = _typed(text, data["casual"], rng) if rng.random() < HOWTO_CASUAL_SHARE else text
        if plain_text(text) not in seen:  # one row a filled form, however it is typed
            seen.add(plain_text(text))
            out.append(shown)
    return out


def howto_rows(seed: int = SEED, counts: dict[str, int] | None = None) -> list[Example]:
    """Round 27's rows: ``HOWTO_COUNTS`` distinct questions a label ("own" first, then "other"), fewer if
    the forms cannot make them; each label's forms (its own and its side of the twins) taken in turn, the
    slots drawn afresh, no text (up to case and punctuation) on both labels or twice."""
    data, seen = howto_written(), set[str]()
    rows: list[Example] = []
    for side, label in ((1, "own"), (0, "other")):
        forms = data["forms"][label] + [pair[side] for pair in data["twins"]]
        rng, source = random.Random(f"{seed}-{HOWTO_SOURCES[label]}"), HOWTO_SOURCES[label]
        texts = _side(forms, data, (counts or HOWTO_COUNTS)[label], rng, seen)
        rows += [Example(t, "en", source, None, None, label) for t in texts]
    return rows


def own_asked_examples(
    seed: int = SEED, on: bool | None = None, howto: bool | None = None, evaluation: Iterable[str] = ()
) -> list[Example]:
    """Every round-18 gate row (none unless ``on``, default ``ON``), then round 27's (none unless ``howto``,
    default ``HOWTO``) less any too like an ``evaluation`` text (``passing.screened``)."""
    rows = own_asked(seed) if (ON if on is None else on) else []
    if HOWTO if howto is None else howto:
        rows += screened(howto_rows(seed), evaluation)
    return rows
