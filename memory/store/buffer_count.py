"""The extraction buffer's running count: each owner's live buffered tokens kept on its ``extraction_due``
row (``live_tokens``), so the "is extraction due" decision on every message reads that one row instead of
summing the owner's whole buffer (issue 38, item 5; docs/scale-out.md, "The buffer's running count").

``live_tokens`` is the sum of ``token_count`` over the owner's buffer rows with ``dead = 0``, kept by every
statement that changes that sum, in the same statement (PostgreSQL) or transaction (SQLite) as the change:

=====================================  ==============================================================
what changes the buffer                what it does to the count
=====================================  ==============================================================
an exchange (``exchange.py``)          adds its turns' tokens in the due-time push (``push``), which
                                       makes the row when the owner has none
one turn appended (``extraction_buffer  adds its tokens to the owner's row (``append``); the due-time
.append``, then ``work_claims.push``)  push after it makes a missing row from the buffer's sum
a batch extracted (``remove``)         takes the removed live turns' tokens off (``less``)
a batch turned dead letters            the same, before the turns are marked dead (``less``)
dead letters re-queued                 adds their tokens, making a missing row due now (``requeue``)
the row released after a flush         goes with the row: the owner had nothing live left
a start (``work_claims.ensure``)       a row it makes counts the buffer (``ensure``)
``memory copy`` (``copying.py``)       the copied buffer counted into the copy's rows (``recount``)
the migration (``BUFFER_COUNT``)       counts every owner's buffer once; an owner with live turns and
                                       no row gets one, due now
=====================================  ==============================================================

Every change is a delta (``live_tokens + ?``), never an absolute value written over a row another
replica may be adding to meanwhile; only a row being made counts the buffer (``ensure``, the migration,
``recount`` into a copy nothing else writes). Each owner's row exists while it has live turns (every
append makes it; the release deletes it only when the flush left nothing), so a row made by an append
starts at that append's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import marks

# The schema version that adds the count (``schema_tables.TEMPLATES``, both stores): the column, each
# owner's row filled from its buffer once, and a row, due now, for an owner with live turns and none.
BUFFER_COUNT = """
ALTER TABLE extraction_due ADD COLUMN live_tokens {BIGINT} NOT NULL DEFAULT 0;
UPDATE extraction_due SET live_tokens = COALESCE((SELECT SUM(b.token_count) FROM extraction_buffer b
    WHERE b.owner = extraction_due.owner AND b.dead = 0), 0);
INSERT INTO extraction_due (owner, due_at, live_tokens)
    SELECT owner, {NOW}, SUM(token_count) FROM extraction_buffer
    WHERE dead = 0 AND owner NOT IN (SELECT owner FROM extraction_due) GROUP BY owner;
"""

# The ``WHERE`` of the due-time push's ``SELECT``: always true here; ``exchange.with_parts`` replaces it to
# make the push conditional on the answered-mark of the same statement (SQLite needs a ``WHERE`` before an
# upsert's ``ON CONFLICT`` anyway).
ALWAYS = "WHERE 1 = 1"

# The owners of the rows ``id IN (…)`` (formatted in) that are live, with their tokens.
_LIVE_OF = "FROM extraction_buffer b WHERE b.dead = 0 AND b.id IN ({ids})"


def push(now: str, owner: str, added: int, token_budget: int, quiet_gap_s: float) -> tuple[str, list[object]]:
    """The due-time push after ``added`` tokens were buffered for ``owner``: the count grows by them, and
    the owner is due now when the count reached ``token_budget``, else ``quiet_gap_s`` from now (a claim
    on the row stays). Returns one column: 1 when due now. ``now`` is ``sql.store_clock``'s text."""
    return (
        "INSERT INTO extraction_due (owner, due_at, live_tokens) "
        f"SELECT ?, CASE WHEN ? >= ? THEN {now} ELSE {now} END, ? {ALWAYS} "
        "ON CONFLICT(owner) DO UPDATE SET live_tokens = extraction_due.live_tokens + excluded.live_tokens, "
        "due_at = CASE WHEN extraction_due.live_tokens + excluded.live_tokens >= ? "
        f"THEN {now} ELSE {now} END "
        f"RETURNING CASE WHEN due_at <= {now} THEN 1 ELSE 0 END",
        [owner, added, token_budget, 0.0, quiet_gap_s, added, token_budget, 0.0, quiet_gap_s, 0.0],
    )


def append(owner: str, tokens: int) -> tuple[str, list[object]]:
    """One turn of ``tokens`` appended for ``owner``: its row (when it has one) counts them."""
    return "UPDATE extraction_due SET live_tokens = live_tokens + ? WHERE owner = ?", [tokens, owner]


def less(ids: Sequence[int]) -> tuple[str, list[object]]:
    """Before the buffer rows ``ids`` are removed or marked dead: their owners' rows lose the tokens of
    those still live."""
    live = _LIVE_OF.format(ids=marks(ids))
    return (
        "UPDATE extraction_due SET live_tokens = live_tokens - "
        f"COALESCE((SELECT SUM(b.token_count) {live} AND b.owner = extraction_due.owner), 0) "
        f"WHERE owner IN (SELECT b.owner {live})",
        [*ids, *ids],
    )


def requeue(now: str, owner: str | None) -> tuple[str, list[object]]:
    """Before dead letters (of ``owner``, or all) are made live again: their owners' rows gain their
    tokens; an owner without a row gets one, due now."""
    cond, params = ("AND owner = ?", [owner]) if owner is not None else ("", [])
    return (
        f"INSERT INTO extraction_due (owner, due_at, live_tokens) SELECT owner, {now}, SUM(token_count) "
        f"FROM extraction_buffer WHERE dead = 1 {cond} GROUP BY owner "
        "ON CONFLICT(owner) DO UPDATE SET live_tokens = extraction_due.live_tokens + excluded.live_tokens",
        [0.0, *params],
    )


def recount(now: str) -> tuple[str, list[object]]:
    """Into a store nothing else writes (a copy just made): every owner with live turns gets its row,
    due now when it is new, and the count of its buffer."""
    return (
        f"INSERT INTO extraction_due (owner, due_at, live_tokens) SELECT owner, {now}, SUM(token_count) "
        "FROM extraction_buffer WHERE dead = 0 GROUP BY owner "
        "ON CONFLICT(owner) DO UPDATE SET live_tokens = excluded.live_tokens",
        [0.0],
    )
