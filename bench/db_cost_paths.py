"""``bench.db_cost``'s split of a window's statements into the reply path and background work (issue 38's
bar is "≤ 5 statements and ≤ 2 commits per message on the reply path").

The reply path is what a message runs from its intake to its answered-mark: the intake (with the chat's
hold and claim), a claim of its own when it was not claimed at intake, the fence before the send, the
answered step, a release, the chat locks sent with those, and the model's reads (retrieval's candidates
and term counts, the history, the profile, the scratchpad, the caches' change check). Background work is
everything else in the window: the recalled memories' access marks, the sweeps of lapsed holds, the
renewals, extraction's due checks and batches, the reminders' and backlogs' reads.

A statement is told by its text as ``pg_stat_statements`` keeps it (constants as ``$n``), by the families
below, first match wins; a text matching none is background. ``pg_stat_statements`` keys statements by
text, not by who sent them, so a text both sides send counts where its family says: the owner's memory
lock (``SELECT pg_advisory_xact_lock``, extraction's) has the chat lock's text, and extraction's
duplicate checks read ``memories`` as retrieval does — the bench holds extraction off in its window
(``bench/throughput_data.py``), so neither runs there. A write family's statement runs alone in autocommit
(one commit each: ``postgres/database.py``); a chat lock is sent with its statement, in its transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (family, pattern on the normalised text, writes: one commit a run)
_REPLY_FAMILIES: tuple[tuple[str, str, bool], ...] = (
    ("intake", r"INSERT INTO inbox\b", True),
    ("answered step", r"^(WITH done AS \()?UPDATE inbox SET answered_at\b", True),
    ("claim", r"^UPDATE inbox SET claimed_by\b", True),
    ("release", r"^UPDATE chat_holds SET holder = .* NOT EXISTS \(SELECT .* FROM inbox\b", True),
    ("hold", r"^INSERT INTO chat_holds\b.* DO UPDATE\b", True),
    ("chat lock", r"^SELECT pg_advisory_xact_lock\(", False),
    ("fence", r"^SELECT \$\d+ FROM chat_holds h WHERE h\.channel\b", False),
    ("reorder wait", r"^SELECT i\.received_at, .* FROM inbox i WHERE i\.id = \(", False),
    ("retrieval", r"^(WITH .*)?SELECT\b.* FROM (memories|memory_terms|daily_events|attachments)\b", False),
    ("history", r"^SELECT\b.* FROM (conversation_turns|session_messages|chat_sessions)\b", False),
    ("profile, scratchpad", r"^SELECT\b.* FROM (scratchpads|profiles?)\b", False),
    ("cache check", r"^SELECT\b.* FROM change_clocks\b", False),
)
_COMPILED = tuple((name, re.compile(pattern, re.S), writes) for name, pattern, writes in _REPLY_FAMILIES)
BACKGROUND = "background"
# The keys ``split`` gives (``bench.db_cost``'s JSON; None there without statement counts).
SPLIT_KEYS = (
    "reply_path_statements_per_msg",
    "reply_path_round_trips_per_msg",
    "reply_path_commits_per_msg",
    "reply_path_statement_ms_per_msg",
    "background_statements_per_msg",
    "background_statement_ms_per_msg",
    "statements_by_family",
)


@dataclass(frozen=True, slots=True)
class Family:
    """Where one statement text belongs: a reply-path family (and whether it writes), or background."""

    name: str
    reply: bool
    writes: bool


def family(query: str) -> Family:
    """The family of one ``pg_stat_statements`` text (``BACKGROUND`` when no reply-path family matches)."""
    text = " ".join(query.split())
    for name, pattern, writes in _COMPILED:
        if pattern.search(text):
            return Family(name, True, writes)
    return Family(BACKGROUND, False, False)


def split(
    ran: dict[str, tuple[int, int, float]], plans: dict[str, float], messages: int
) -> dict[str, object]:
    """The reply path's and background work's figures per message from the window's statements
    (``ran``: text -> (calls, rows, execution ms); ``plans``: text -> planning ms in the window).

    ``reply_path_round_trips_per_msg`` leaves out the chat locks (each is sent with its statement);
    ``reply_path_commits_per_msg`` counts the runs of the reply path's writing statements (each its own
    autocommit transaction); ``*_statement_ms_per_msg`` is execution plus planning (planning only with
    ``pg_stat_statements.track_planning`` on)."""
    reply_calls = locks = commits = background_calls = 0
    reply_ms = background_ms = 0.0
    by_family: dict[str, float] = {}
    for query, (calls, _, ms) in ran.items():
        kind = family(query)
        spent = ms + plans.get(query, 0.0)
        by_family[kind.name] = by_family.get(kind.name, 0.0) + calls / messages
        if not kind.reply:
            background_calls += calls
            background_ms += spent
            continue
        reply_calls += calls
        reply_ms += spent
        locks += calls if kind.name == "chat lock" else 0
        commits += calls if kind.writes else 0
    return {
        "reply_path_statements_per_msg": reply_calls / messages,
        "reply_path_round_trips_per_msg": (reply_calls - locks) / messages,
        "reply_path_commits_per_msg": commits / messages,
        "reply_path_statement_ms_per_msg": reply_ms / messages,
        "background_statements_per_msg": background_calls / messages,
        "background_statement_ms_per_msg": background_ms / messages,
        "statements_by_family": dict(sorted(by_family.items(), key=lambda kv: -kv[1])),
    }
