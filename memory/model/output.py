"""Parse and validate the memory model's JSON output into ``Fact``s (the shapes the prompts ask for).

The whole answer must be one JSON object (a ```json fence around it is tolerated) holding a list under
``"facts"`` (or ``"entries"`` for the profile); otherwise ``MemoryModelError`` is raised and the caller
keeps its input to try again later. Individual bad items never fail the batch: they are repaired when
the intent is clear (unknown category -> "event", importance clamped to [0, 1], missing project ->
"_global", missing topic -> "_general", content cut to 500 characters, a bare string -> a fact with
defaults) and dropped when there is no usable content. An extraction whose every fact is dropped and that
has no summary is a failure too: only an empty list says plainly that there is nothing to remember.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from memory.model.protocol import Extraction, MemoryModelError
from memory.records import GENERAL_TOPIC, GLOBAL_PROJECT, OUTCOMES, PROFILE_TOPIC, Episode, Fact
from memory.retrieval.decay import CATEGORIES, NEVER_DECAY
from memory.text.category import category_for

MAX_CONTENT_CHARS = 500
MAX_SUMMARY_CHARS = 1000
MAX_NAME_CHARS = 100  # project, topic, subject, predicate
MAX_FACTS = 200
MAX_PROFILE_ENTRIES = 100
DEFAULT_IMPORTANCE = 0.5
PROFILE_IMPORTANCE = 1.0
PROFILE_CATEGORIES = frozenset(NEVER_DECAY)
DEFAULT_PROFILE_CATEGORY = "identity"

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)\r?\n?[ \t]*```", re.DOTALL)


def load_json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text``: bare, in a ```json fence, or between the first ``{`` and last ``}``."""
    if not isinstance(text, str):
        raise MemoryModelError(f"model output is {type(text).__name__}, not text")
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        raise MemoryModelError("model output is empty")
    candidates = [stripped]
    candidates.extend(m.group(1).strip() for m in _FENCE.finditer(stripped))
    first, last = stripped.find("{"), stripped.rfind("}")
    if 0 <= first < last:
        candidates.append(stripped[first : last + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
        raise MemoryModelError(f"model output is a JSON {type(value).__name__}, not an object")
    raise MemoryModelError(f"model output is not valid JSON ({len(stripped)} characters)")


def _items(obj: dict[str, Any], key: str) -> list[Any]:
    if key not in obj:
        raise MemoryModelError(f'model output has no "{key}" list')
    value = obj[key]
    if not isinstance(value, list):
        raise MemoryModelError(f'model output "{key}" is a {type(value).__name__}, not a list')
    return value


def _clean_text(value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.replace("\x00", "").split())
    return text[:limit].rstrip() or None


def _importance(value: Any, default: float) -> float:
    if isinstance(value, bool):
        return default
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return default
    if not isinstance(value, int | float):
        return default
    number = float(value)
    if math.isnan(number):
        return default
    return min(1.0, max(0.0, number))


def _category(value: Any, allowed: frozenset[str] | tuple[str, ...], default: str) -> str:
    if isinstance(value, str) and value.strip().lower() in allowed:
        return value.strip().lower()
    return default


def parse_fact(
    item: Any,
    *,
    source: str = "extraction",
    default_project: str = GLOBAL_PROJECT,
    default_topic: str = GENERAL_TOPIC,
) -> Fact | None:
    """One repaired Tier 2 ``Fact`` from one model item, or ``None`` when it has no usable content."""
    if isinstance(item, str):
        item = {"content": item}
    if not isinstance(item, dict):
        return None
    content = _clean_text(item.get("content"), MAX_CONTENT_CHARS)
    if content is None:
        return None
    return Fact(
        content=content,
        tier=2,
        project=_clean_text(item.get("project"), MAX_NAME_CHARS) or default_project,
        topic=_clean_text(item.get("topic"), MAX_NAME_CHARS) or default_topic,
        # No valid category: the one classifier for facts without one (memory/text/category.py).
        category=_category(item.get("category"), CATEGORIES, category_for(content)),
        importance=_importance(item.get("importance"), DEFAULT_IMPORTANCE),
        source=source,
        subject=_clean_text(item.get("subject"), MAX_NAME_CHARS),
        predicate=_clean_text(item.get("predicate"), MAX_NAME_CHARS),
    )


def _dedup(facts: list[Fact], limit: int) -> list[Fact]:
    seen: set[str] = set()
    out: list[Fact] = []
    for fact in facts:
        key = fact.content.casefold()
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out[:limit]


def parse_facts(
    text: str,
    key: str = "facts",
    *,
    source: str = "compression",
    default_project: str = GLOBAL_PROJECT,
    default_topic: str = GENERAL_TOPIC,
) -> list[Fact]:
    """Tier 2 facts from ``{"<key>": [...]}``; exact repeats (case-insensitive) are kept once."""
    items = _items(load_json_object(text), key)
    facts = [
        f
        for f in (
            parse_fact(i, source=source, default_project=default_project, default_topic=default_topic)
            for i in items
        )
        if f is not None
    ]
    return _dedup(facts, MAX_FACTS)


def parse_extraction(text: str, *, source: str = "extraction") -> Extraction:
    """``{"facts": [...], "summary": "..."}`` -> ``Extraction``. A missing or non-text summary is ``""``."""
    obj = load_json_object(text)
    items = _items(obj, "facts")
    facts = [f for f in (parse_fact(i, source=source) for i in items) if f is not None]
    summary = _clean_text(obj.get("summary"), MAX_SUMMARY_CHARS) or ""
    episode = parse_episode(obj.get("episode"))
    if items and not facts and not summary:
        # Not "nothing to remember" (that is an empty list): an answer with nothing usable in it. Taking
        # it would drop the turns without a trace; failing keeps them for a retry, then a dead letter.
        raise MemoryModelError(
            f"none of the {len(items)} facts in the model output is usable, and no summary"
        )
    return Extraction(facts=_dedup(facts, MAX_FACTS), summary=summary, episode=episode)


MAX_GOAL_CHARS = 300
MAX_ENTITIES = 8
MAX_ENTITY_CHARS = 60


def parse_episode(value: object) -> Episode:
    """The ``"episode"`` object, tolerantly: anything missing or malformed is left empty (the summary
    alone still makes an event); an unknown outcome is ""."""
    if not isinstance(value, dict):
        return Episode()
    outcome = value.get("outcome")
    outcome = outcome.strip().lower() if isinstance(outcome, str) else ""
    entities = value.get("entities")
    names = []
    for entity in entities if isinstance(entities, list) else []:
        name = _clean_text(entity, MAX_ENTITY_CHARS)
        if name and name not in names:
            names.append(name)
    return Episode(
        goal=_clean_text(value.get("goal"), MAX_GOAL_CHARS) or "",
        outcome=outcome if outcome in OUTCOMES else "",
        entities=names[:MAX_ENTITIES],
    )


def parse_profile(
    text: str, *, source: str = "compression", default_category: str = DEFAULT_PROFILE_CATEGORY
) -> list[Fact]:
    """Tier 1 profile entries from ``{"entries": [{"content", "category"}]}``.

    Every entry becomes tier 1, project "_global", topic "_profile", importance 1.0 unless the entry
    gives a number. A category outside identity/config/credential becomes ``default_category``. At most
    100 entries are kept, in the model's order.
    """
    items = _items(load_json_object(text), "entries")
    facts: list[Fact] = []
    for item in items:
        entry = {"content": item} if isinstance(item, str) else item
        if not isinstance(entry, dict):
            continue
        content = _clean_text(entry.get("content"), MAX_CONTENT_CHARS)
        if content is None:
            continue
        facts.append(
            Fact(
                content=content,
                tier=1,
                project=GLOBAL_PROJECT,
                topic=PROFILE_TOPIC,
                category=_category(entry.get("category"), PROFILE_CATEGORIES, default_category),
                importance=_importance(entry.get("importance"), PROFILE_IMPORTANCE),
                source=source,
            )
        )
    return _dedup(facts, MAX_PROFILE_ENTRIES)
