"""Forgetting by category (docs/architecture.md, "Tiers"): how much a memory still weighs after ``days``
without use.

The constants are the original design's, exactly. Identity, config and credential facts never fade;
decisions and
solutions fade slowly to a 30 % floor; events and conversation summaries fade faster to a 10 % floor;
temp/debug notes fade to nothing (and the weekly job archives them). Access resets the clock, which
is the "the more you use it, the better you remember it" effect.
"""

from __future__ import annotations

import math

NEVER_DECAY = frozenset({"identity", "config", "credential"})
SLOW_DECAY = frozenset({"decision", "solution"})
MEDIUM_DECAY = frozenset({"event", "conversation"})
FAST_DECAY = frozenset({"temp", "debug"})
CATEGORIES: tuple[str, ...] = (
    "identity",
    "config",
    "credential",
    "decision",
    "solution",
    "event",
    "conversation",
    "temp",
    "debug",
)
DEFAULT_CATEGORY = "event"


def relevance_score(category: str, importance: float, days_since_access: float) -> float:
    """Importance scaled by the category's decay curve; an unknown category does not decay."""
    days = max(0.0, days_since_access)
    if category in SLOW_DECAY:
        return importance * (0.3 + 0.7 * math.exp(-0.004 * days))
    if category in MEDIUM_DECAY:
        return importance * (0.1 + 0.9 * math.exp(-0.023 * days))
    if category in FAST_DECAY:
        return importance * math.exp(-0.099 * days)
    return importance


def decayed_to_nothing(category: str, importance: float, days_since_access: float) -> bool:
    """True for a temp/debug memory whose weight is below 1 % of full: the weekly job archives it."""
    return category in FAST_DECAY and relevance_score(category, importance, days_since_access) < 0.01
