"""The shared verdicts of the everyday rule tables (``everyday_rules.py`` for English, ``everyday_zh.py``
for Chinese): a form matched, and the everyday class it names (``memory/text/category.py``) decides whether
the sentence is kept and where it is filed, so that a kept fact never lands in a fading category."""

from __future__ import annotations

import re
from collections.abc import Callable

from memory.model.everyday_around import when_class
from memory.model.quick_rules import PREFERENCES_TOPIC, Match
from memory.records import GENERAL_TOPIC
from memory.text.category import CLASS_CATEGORY, everyday_class

MANNER_CLASSES = frozenset({"tastes", "routines"})
PLAN = Match(CLASS_CATEGORY["plans"])
OCCUPATION = Match("identity", GENERAL_TOPIC, "occupation")
Rule = Callable[[re.Match[str]], "Match | None"]


def match_for(found: str | None) -> Match | None:
    """The category and topic an everyday class is filed under (None: not kept)."""
    if found is None:
        return None
    topic = PREFERENCES_TOPIC if found in MANNER_CLASSES else GENERAL_TOPIC
    return Match(CLASS_CATEGORY[found], topic)


def class_of(group: str, fallback: str | None = None) -> Rule:
    """A rule keeping the sentence when ``group`` names an everyday class (else ``fallback``'s class)."""

    def rule(m: re.Match[str]) -> Match | None:
        return match_for(everyday_class(m.group(group)) or fallback)

    return rule


def whole(fallback: str | None = None) -> Rule:
    """A rule keeping the sentence when it names an everyday class anywhere (else ``fallback``'s)."""

    def rule(m: re.Match[str]) -> Match | None:
        return match_for(everyday_class(m.string) or fallback)

    return rule


def class_or_when(group: str) -> Rule:
    """A rule keeping the sentence when ``group`` names an everyday class, else when the sentence names a
    date or a weekly time ("My book club meets on the first Thursday of the month")."""

    def rule(m: re.Match[str]) -> Match | None:
        return match_for(everyday_class(m.group(group)) or when_class(m.string))

    return rule
