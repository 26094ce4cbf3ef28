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
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from memory.head.corpus import SEED, Example

SOURCE = "gate-own-asked-en"
WRITTEN = Path(__file__).with_name("own_asked_written.json")
PER_LANGUAGE = 420
CASUAL_SHARE = 0.2
# Round 18's rows in a training run (``train.training_examples``); ``train --own-asked`` sets it.
ON = False

_SLOT = re.compile(r"\{(\w+)\}")


def own_asked_written() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(WRITTEN.read_text(encoding="utf-8"))
    return data


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


def own_asked_examples(seed: int = SEED, on: bool | None = None) -> list[Example]:
    """Every round-18 gate row (none unless ``on``, default ``ON``)."""
    if not (ON if on is None else on):
        return []
    return own_asked(seed)
