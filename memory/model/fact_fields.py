"""What a kept clause becomes: a ``Fact`` with its category's importance, its project, and — for a few
single-valued attributes (one's name, where one lives, works, was born, one's age) — ``subject="user"`` and a
predicate, so that "I moved to Paris" supersedes "I live in Berlin" through the engine's write path instead of
standing beside it. Used by the offline model's keeper (``quick_extract.decide``); pure, no I/O.
"""

from __future__ import annotations

import re
import unicodedata

from memory.records import GLOBAL_PROJECT, Fact
from memory.text.category import CREDENTIAL, names_secret

USER = "user"
IMPORTANCE = {"identity": 1.0, "config": 0.8, "credential": 0.9, "decision": 0.8, "event": 0.5, "temp": 0.2}
REMEMBER_IMPORTANCE = 0.8

# --- single-valued attributes (supersede, not duplicate) --------------------------------------------------
_PREDICATES = [
    ("name", re.compile(r"^(?:my name(?:'s| is)|i'm called|call me)\b|^我(?:的名字)?叫|^叫我", re.I)),
    (
        "lives_in",
        re.compile(
            r"^(?:i|we) (?:live|moved|have moved|'ve moved|relocated) (?:in|to)\b"
            r"|^我们?(?:现在)?(?:住在|搬到)",
            re.I,
        ),
    ),
    (
        "works_at",
        re.compile(r"^i (?:work|am working|'m working) (?:at|for)\b|^我在.{1,12}(?:工作|上班)$", re.I),
    ),
    ("birthday", re.compile(r"^my birthday(?:'s| is)\b|^i was born on\b|^我(?:的)?生日是", re.I)),
    ("age", re.compile(r"^i(?:'m| am) \d{1,3}(?: years old)?$|^我今年\S{1,4}岁?$", re.I)),
]


def _predicate(text: str) -> str | None:
    """The single-valued attribute ``text`` states, if any (``_PREDICATES``)."""
    for name, pattern in _PREDICATES:
        if pattern.search(text):
            return name
    return None


def _project_in(sentence: str, known_projects: frozenset[str]) -> str | None:
    """The longest known project named in the sentence (a whole word for Latin names)."""
    lowered = unicodedata.normalize("NFKC", sentence).lower()
    for name in sorted(known_projects, key=lambda p: (-len(p), p)):
        low = name.lower().strip()
        if not low or low == GLOBAL_PROJECT:
            continue
        if low.isascii():
            if re.search(rf"(?<![\w-]){re.escape(low)}(?![\w-])", lowered):
                return name
        elif low in lowered:
            return name
    return None


def fact_of(content: str, category: str, remembered: bool, known_projects: frozenset[str]) -> Fact:
    """The fact of a kept clause filed ``category`` (overruled for a single-valued attribute, "identity", and
    where a secret is kept, "credential"); ``remembered``: the person asked for it to be remembered."""
    predicate = _predicate(content)
    if predicate is not None:
        category = "identity"  # one's name, home, workplace, birthday, age: who the person is
    elif names_secret(content):
        category = CREDENTIAL  # where a secret is kept, as a memory written by hand is filed (head/filing.py)
    importance = IMPORTANCE.get(category, 0.5)
    if remembered and category == "event":
        importance = REMEMBER_IMPORTANCE
    return Fact(
        content=content,
        project=_project_in(content, known_projects) or GLOBAL_PROJECT,
        category=category,
        importance=importance,
        subject=USER if predicate else None,
        predicate=predicate,
    )
