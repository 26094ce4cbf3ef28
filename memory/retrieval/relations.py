"""Everyday relations: a question names one word of a group, the statement it asks about often another.

"What do I do for a living?" asks about "I work as a nurse"; "my boss?" about "my manager is Karen";
"我老板是谁" about "我的领导姓赵". The groups are a small bilingual data file (``relations.json``, packaged
with the code; issue 26). Each group has ``tell`` forms, words statements use (a query naming one searches
for all of them), and ``ask`` forms, which only occur in questions: they are replaced by the group's tell
forms, so "for a living" searches for *work* and not, through the stemmer, for *live*.

``expand`` turns a query's terms into term groups: a memory matches a group when it holds any of the
group's terms (``ranking.rank`` weighs groups, not single words). Pure, no I/O; the file is read once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from memory.text import tokenizer

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class Relation:
    """One group: how its forms are found in a query, and the index terms a statement may use."""

    ask: tuple[re.Pattern[str], ...]  # question-only forms
    tell: tuple[re.Pattern[str], ...]  # forms statements use too
    ask_terms: frozenset[str]  # index terms of the ask forms (dropped from the query when one is found)
    terms: tuple[str, ...]  # index terms of the tell forms (what a memory is searched for)


def _pattern(form: str) -> re.Pattern[str]:
    """A form found as a substring (Chinese has no spaces; one character only as a whole word, so 开 is
    not found in 开心) or as whole English words."""
    if _HAN.search(form):
        if len(form) == 1:
            return re.compile(r"(?<![\u3400-\u9fff])" + re.escape(form) + r"(?![\u3400-\u9fff])")
        return re.compile(re.escape(form))
    return re.compile(r"(?<![\w'])" + re.escape(form) + r"(?![\w'])")


def _terms(form: str) -> tuple[str, ...]:
    """The index terms of a form: its stemmed tokens without stop words (all of them if that is none)."""
    tokens = tokenizer.segment(form)
    content = [t for t in tokens if t not in tokenizer.STOP_WORDS] or tokens
    return tuple(dict.fromkeys(tokenizer.stem(t) for t in content))


@cache
def relations() -> tuple[Relation, ...]:
    """The groups of ``relations.json``."""
    raw = json.loads(resources.files(__package__).joinpath("relations.json").read_text(encoding="utf-8"))
    out: list[Relation] = []
    for group in raw["groups"]:
        ask, tell = group.get("ask", []), group["tell"]
        out.append(
            Relation(
                ask=tuple(_pattern(f) for f in ask),
                tell=tuple(_pattern(f) for f in tell),
                ask_terms=frozenset(t for f in ask for t in _terms(f)),
                terms=tuple(dict.fromkeys(t for f in tell for t in _terms(f))),
            )
        )
    return tuple(out)


@lru_cache(maxsize=4096)
def expand(lowered: str, terms: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Term groups for a query (``lowered``: its text in lower case; ``terms``: its query terms).

    A term no relation names is a group of its own; a relation whose form the query holds becomes one
    group of all its tell terms (and takes in the query terms of its forms); words of an ask form leave
    the query unless a tell form holds them too.
    """
    groups: list[tuple[str, ...]] = []
    claimed: set[str] = set()
    dropped: set[str] = set()
    for relation in relations():
        asked = [p for p in relation.ask if p.search(lowered)]
        told = [p for p in relation.tell if p.search(lowered)]
        if not asked and not told:
            continue
        members = set(relation.terms)
        claimed.update(t for t in terms if t in members)
        if asked:
            dropped.update(relation.ask_terms - members)
        groups.append(relation.terms)
    singles = [(t,) for t in terms if t not in claimed and t not in dropped]
    return tuple(singles + groups)
