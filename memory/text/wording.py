"""How a number or a reply is worded for a person: one plural helper for every count shown ("1 memory",
"3 memories") and one test of which language a person writes in, so a Chinese speaker gets Chinese
wording everywhere (the gateway's replies and notices, ``gateway/README.md``). Pure functions, no imports
beyond ``re``: the CLI's start-up path uses them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# English nouns whose plural is not "+s" ("memory" → "memories" is the "y" rule below).
_IRREGULAR = {"person": "people", "child": "children", "entry": "entries", "summary": "summaries"}


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``count`` with the noun in the right number: ``plural(1, "memory")`` → "1 memory",
    ``plural(3, "memory")`` → "3 memories", ``plural(2, "dead letter")`` → "2 dead letters"."""
    return f"{count} {noun(count, singular, plural_form)}"


def noun(count: int, singular: str, plural_form: str | None = None) -> str:
    """The noun alone in the right number for ``count`` (for "… are still buffered" sentences)."""
    if count == 1:
        return singular
    if plural_form is not None:
        return plural_form
    head, _, last = singular.rpartition(" ")
    prefix = f"{head} " if head else ""
    if last in _IRREGULAR:
        return prefix + _IRREGULAR[last]
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        return prefix + last[:-1] + "ies"
    if last.endswith(("s", "x", "ch", "sh")):
        return prefix + last + "es"
    return prefix + last + "s"


def is_chinese(text: str) -> bool:
    """Whether ``text`` is written mostly in Chinese: some Han, at least as many Han characters as Latin
    letters ("我每天用Go" is Chinese, "I like 火锅" is English)."""
    han = len(_HAN.findall(text))
    return han > 0 and han >= len(_LATIN.findall(text))


def speaks_chinese(texts: Iterable[str]) -> bool:
    """Whether a person's recent messages (newest last) are mostly Chinese: the newest message with
    letters or Han decides; nothing to go by → English."""
    for text in reversed(list(texts)):
        if _HAN.search(text) or _LATIN.search(text):
            return is_chinese(text)
    return False
