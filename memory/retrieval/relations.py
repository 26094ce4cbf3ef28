"""Everyday relations: a question names one word of a group, the statement it asks about often another.

"What do I do for a living?" asks about "I work as a nurse"; "my boss?" about "my manager is Karen";
"我老板是谁" about "我的领导姓赵". The groups are a small bilingual data file (``relations.json``, packaged
with the code; issue 26). Each group has ``tell`` forms, words statements use (a query naming one searches
for all of them), ``ask`` forms, which only occur in questions: they are replaced by the group's tell
forms, so "for a living" searches for *work* and not, through the stemmer, for *live*; and ``kinds``
(yoga and swimming of exercise), searched for when the group is named, but one kind never finds another.

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
    """One group: the index terms a statement may use, and those of its question-only forms."""

    ask_terms: frozenset[str]  # index terms of the ask forms (dropped from the query when one is found)
    terms: tuple[str, ...]  # index terms of the tell forms (what a memory is searched for)


@dataclass(frozen=True, slots=True)
class Relations:
    """The groups, and where each form leads: English forms are looked up by the query's word n-grams,
    Chinese ones found as substrings (a dictionary look-up and ``in``: one regex of every form cost
    ~3x as much per query)."""

    groups: tuple[Relation, ...]
    forms: dict[str, tuple[tuple[int, bool], ...]]  # form -> (group index, is an ask form)
    han_forms: tuple[str, ...]  # the Chinese forms, longest first
    longest_words: int  # the most words an English form has


_WORDS = re.compile(r"[\w'-]+")


def _terms(form: str) -> tuple[str, ...]:
    """The index terms of a form: its stemmed tokens without stop words (all of them if that is none)."""
    tokens = tokenizer.segment(form)
    content = [t for t in tokens if t not in tokenizer.STOP_WORDS] or tokens
    return tuple(dict.fromkeys(tokenizer.stem(t) for t in content))


@cache
def relations() -> Relations:
    """The groups of ``relations.json``, with the pattern that finds their forms (longest first)."""
    raw = json.loads(resources.files(__package__).joinpath("relations.json").read_text(encoding="utf-8"))
    groups: list[Relation] = []
    forms: dict[str, list[tuple[int, bool]]] = {}
    for index, group in enumerate(raw["groups"]):
        ask, tell = [f.lower() for f in group.get("ask", [])], [f.lower() for f in group["tell"]]
        kinds = [f.lower() for f in group.get("kinds", [])]  # searched for, but never a form
        groups.append(
            Relation(
                ask_terms=frozenset(t for f in ask for t in _terms(f)),
                terms=tuple(dict.fromkeys(t for f in tell + kinds for t in _terms(f))),
            )
        )
        for form, asked in [(f, True) for f in ask] + [(f, False) for f in tell]:
            forms.setdefault(form, []).append((index, asked))
    han = tuple(sorted((f for f in forms if _HAN.search(f)), key=len, reverse=True))
    longest = max((len(f.split()) for f in forms if not _HAN.search(f)), default=1)
    return Relations(tuple(groups), {f: tuple(v) for f, v in forms.items()}, han, longest)


def _found_forms(table: Relations, lowered: str, terms: tuple[str, ...]) -> list[str]:
    """The forms a query holds: English word n-grams that are forms, Chinese forms inside the text (one
    character only as a word of its own: 开 is a form in 我开什么车 but not in 开心)."""
    words = _WORDS.findall(lowered.replace("\u2019", "'"))
    found = []
    for n in range(1, table.longest_words + 1):
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i : i + n])
            if gram in table.forms:
                found.append(gram)
    if _HAN.search(lowered):
        found += [f for f in table.han_forms if (f in terms if len(f) == 1 else f in lowered)]
    return found


@lru_cache(maxsize=4096)
def expand(lowered: str, terms: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Term groups for a query (``lowered``: its text in lower case; ``terms``: its query terms).

    A term no relation names is a group of its own; a relation whose form the query holds becomes one
    group of all its tell terms (and takes in the query terms of its forms); words of an ask form leave
    the query unless a tell form holds them too.
    """
    table = relations()
    found: dict[int, bool] = {}  # group index -> found by an ask form
    for form in _found_forms(table, lowered, terms):
        for index, asked in table.forms[form]:
            found[index] = found.get(index, False) or asked
    claimed: set[str] = set()
    dropped: set[str] = set()
    groups: list[tuple[str, ...]] = []
    for index, asked in found.items():
        relation = table.groups[index]
        members = set(relation.terms)
        claimed.update(t for t in terms if t in members)
        if asked:
            dropped.update(relation.ask_terms - members)
        groups.append(relation.terms)
    singles = [(t,) for t in terms if t not in claimed and t not in dropped]
    return tuple(singles + groups)
