"""Gate rows of round 17 (issue 35): plain dated and scheduled statements about one's people and things said
without I/my/our ("tell"), and dated statements about public things ("other").

Why (DATA_CARD "Round 16, gate"): round 14's gate rows (``prodrop.py``) taught the gate pronoun-less *own
questions* ("when's the dentist?") and world-date questions as "other" ("when's easter?"). With them, a
pronoun-less dated *statement* — someone's birthday, a weekly class, a bill's day, a recurring chore — sat
beside those questions in the query vector with no "tell" row of its kind near it, and its whole-message
"tell" fell under the cut: English everyday.json lost such statements (0.806 → 0.750) while the newer sets
gained. These rows are the other side of the pair: the same things, dates and schedules, *told*.

Rows made here (gate only, like ``prodrop.py``: ``keep`` and ``category`` unknown, so the keep and category
networks never see them; source ``gate-dated-…``, so ``calibrate.trusted`` leaves them out and the
thresholds are still chosen on the rows a person labelled):

* ``gate-dated-en`` ("tell"): ``dated_written.json``'s forms by KIND (birthdays, appointments, weekly
  activities, classes, due dates, bills and paydays, chores and visitors, work shifts, one-off events,
  anniversaries, health schedules) filled with its names, relatives, pets, items and many time phrasings
  (dates in several orders, weekdays, "every other", "the first Monday of the month", times, months), a
  third of them typed casually (lower case, "btw", no full stop);
* ``gate-dated-world-en`` ("other"): the same kinds of date said about public things (holidays, sports
  fixtures, opening hours), so "has a date in it" does not become "tells about one's life".

Written for this purpose (gate17); no evaluation set opened. Deterministic given the seed; off unless
``ON`` (``train --dated``). No text holds I, me, my, mine, our, we or us (tested).
"""

from __future__ import annotations

import calendar
import random
import re
from pathlib import Path
from typing import Any

from memory.head.corpus import SEED, Example, read_written

SOURCE = "gate-dated-"
WRITTEN = Path(__file__).with_name("dated_written.json")
TELL_PER_LANGUAGE = 400
WORLD_PER_LANGUAGE = 150
CASUAL_SHARE = 0.35
# Round 17's rows in a training run (``train.training_examples``); ``train --dated`` sets it.
ON = False

_SLOT = re.compile(r"\{(\w+)\}")
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|our|ours|we|us)\b", re.I)
_MONTHS = [name.lower() for name in calendar.month_name[1:]]


def dated_written() -> dict[str, Any]:
    return read_written(WRITTEN)


def ordinal(day: int) -> str:
    """1 → "1st", 12 → "12th", 22 → "22nd"."""
    tail = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{tail}"


def _month_number(name: str) -> int:
    return next(i + 1 for i, full in enumerate(_MONTHS) if full.startswith(name.lower()[:3]))


class _Filler:
    """Fills a form's slots from the kind's lists, then the shared ones, drawing afresh for each slot;
    a date's day, month and ordinal agree."""

    def __init__(self, shared: dict[str, list[str]], rng: random.Random) -> None:
        self.shared, self.rng = shared, rng

    def fill(self, form: str, kind: dict[str, list[str]]) -> str:
        text = form
        for _ in range(8):  # slots hold slots ({oneoff_day} → "on {date} {time}" → …)
            if not _SLOT.search(text):
                break
            text = self._pass(text, kind)
        return text

    def _pass(self, text: str, kind: dict[str, list[str]]) -> str:
        """Every slot of ``text`` filled once (a name or weekday drawn here is not drawn again as its "2")."""
        drawn: dict[str, str] = {}
        return _SLOT.sub(lambda m: self._slot(m.group(1), kind, drawn), text)

    def _slot(self, name: str, kind: dict[str, list[str]], drawn: dict[str, str]) -> str:
        rng = self.rng
        if name == "date":
            return self._date()
        if name in ("d", "d2"):
            first = int(drawn.setdefault("d", str(rng.randint(1, 20))))
            return str(first) if name == "d" else str(min(28, first + rng.randint(2, 10)))
        if name == "m":
            return rng.choice(_MONTHS).capitalize()
        if name in ("name2", "weekday2"):
            pool = self.shared["name" if name == "name2" else "weekday"]
            return rng.choice([x for x in pool if x != drawn.get(name[:-1])])
        if name == "o":
            return ordinal(rng.randint(1, 28))
        choices = kind.get(name) or self.shared[name]
        value = rng.choice(choices)
        if name in ("name", "weekday"):
            drawn[name] = value
        return value

    def _date(self) -> str:
        rng = self.rng
        month = rng.choice(self.shared["month"])
        number = _month_number(month)
        day = rng.randint(1, 30 if number != 2 else 28)
        form = rng.choice(self.shared["date_form"])
        weekday = rng.choice(self.shared["weekday"])
        return form.format(d=day, m=month, o=ordinal(day), n=number, weekday=weekday)


def _casual(text: str, casual: dict[str, list[str]], rng: random.Random) -> str:
    """Typed in a chat: a lead, lower case, a tail instead of the full stop."""
    lead = rng.choice(casual["leads"])
    tails = [t for t in casual["tails"] if not (lead and t.strip() in lead)]  # not "btw … btw"
    return (lead + text[0].lower() + text[1:] + rng.choice(tails)).strip()


def _plain(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def _tidy(text: str) -> str:
    """One space, no "booked for on Monday" (a form's preposition before a day that brings its own)."""
    text = re.sub(r"\b(for|to|by|until|from) (?:on|at) ", r"\1 ", text)
    return re.sub(r"\s+", " ", text).replace(" ,", ",").strip()


def _made(
    n: int, forms: list[tuple[str, dict[str, list[str]]]], filler: _Filler, casual: dict[str, list[str]]
) -> list[str]:
    """``n`` distinct texts (fewer if the forms cannot make them), the forms taken in turn."""
    rng, tries = filler.rng, 0
    out: dict[str, None] = {}
    while len(out) < n and tries < n * 20:
        form, kind = forms[tries % len(forms)]
        tries += 1
        text = _tidy(filler.fill(form, kind))
        if _FIRST_PERSON.search(text):
            continue
        shown = _casual(text, casual, rng) if rng.random() < CASUAL_SHARE else _plain(text)
        out.setdefault(shown, None)
    return list(out)


def dated_statements(seed: int = SEED, n: int = TELL_PER_LANGUAGE) -> list[Example]:
    """Dated and scheduled statements about one's people and things, no first person ("tell"), the kinds
    in turn."""
    data = dated_written()
    filler = _Filler(data["shared_en"], random.Random(f"{seed}-gate-dated-en"))
    kinds = list(data["kinds_en"].values())
    longest = max(len(k["forms"]) for k in kinds)
    forms = [(k["forms"][i % len(k["forms"])], k) for i in range(longest) for k in kinds]
    texts = _made(n, forms, filler, data["casual_en"])
    return [Example(t, "en", f"{SOURCE}en", None, None, "tell") for t in texts]


def world_dated(seed: int = SEED, n: int = WORLD_PER_LANGUAGE) -> list[Example]:
    """Dates and opening hours of public things ("other")."""
    data = dated_written()
    world = data["world_en"]
    filler = _Filler(data["shared_en"], random.Random(f"{seed}-gate-dated-world-en"))
    texts = _made(n, [(f, world) for f in world["forms"]], filler, data["casual_en"])
    return [Example(t, "en", f"{SOURCE}world-en", None, None, "other") for t in texts]


def dated_examples(seed: int = SEED, on: bool | None = None) -> list[Example]:
    """Every round-17 gate row (none unless ``on``, default ``ON``)."""
    if not (ON if on is None else on):
        return []
    return dated_statements(seed) + world_dated(seed)
