"""The extraction buffer's running count: each owner's live buffered tokens kept on its ``extraction_due``
row (``live_tokens``), so the "is extraction due" decision on every message reads that one row instead of
summing the owner's whole buffer (issue 38, item 5; docs/scale-out.md, "The buffer's running count").

``live_tokens`` is the sum of ``token_count`` over the owner's live buffered turns (the turns past its
watermark and the stragglers, not dead: ``turn_watermark.py``), kept by every statement that changes that
sum, in the same statement (PostgreSQL) or transaction (SQLite) as the change:

=====================================  ==============================================================
what changes the buffer                what it does to the count
=====================================  ==============================================================
an exchange (``exchange.py``)          adds its turns' tokens in the due-time push (``push``), which
                                       makes the row when the owner has none
one turn appended (``extraction_buffer  adds its tokens to the owner's row, made when missing
.append``, then ``work_claims.push``)  (``BufferRows.append``); the due-time push after it
a batch extracted (``remove``)         takes the taken live turns' tokens off (``append``, negative)
a batch turned dead letters            the same, before the turns are marked dead (``less``)
dead letters re-queued                 adds their tokens, making an idle or missing row due now
                                       (``requeue``)
the row released after a flush         stays, idle: the owner had nothing live left (0)
a start (``work_claims.ensure``)       a row it makes counts the owner's live stragglers
``memory copy`` (``copying.py``)       copies the rows with their counts and watermarks
the migrations (``BUFFER_COUNT``,      count every owner's buffer once; an owner with live turns and
``TURN_WATERMARK``)                    no row gets one, due now
=====================================  ==============================================================

Every change is a delta (``live_tokens + ?``), never an absolute value written over a row another
replica may be adding to meanwhile; only a row being made counts the buffer (``ensure``, the migrations).
Each owner's row, once made, stays (it holds the watermark), so a row made by an append or an exchange
starts at that append's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import marks
from memory.store.turn_watermark import IDLE, NEWEST_TURN

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

# The owners' live buffered turns among ``id IN (…)`` (formatted in), with their tokens: a turn in its
# owner's tail without a dead failure row, or a straggler whose failure row is not dead.
_LIVE_OF = (
    "FROM conversation_turns b LEFT JOIN extraction_due bd ON bd.owner = b.owner "
    "LEFT JOIN extraction_failures bf ON bf.turn_id = b.id WHERE b.id IN ({ids}) "
    "AND ((b.id > bd.extracted_through AND COALESCE(bf.dead, 0) = 0) OR bf.dead = 0)"
)


def push(now: str, owner: str, added: int, token_budget: int, quiet_gap_s: float) -> tuple[str, list[object]]:
    """The due-time push before ``added`` tokens of ``owner``'s turns are kept (``exchange.py``): the
    count grows by them, and the owner is due now when the count reached ``token_budget``, else
    ``quiet_gap_s`` from now (a claim on the row stays). A row made here starts its watermark at the
    owner's newest turn so far (``turn_watermark.py``). Returns one column: 1 when due now. ``now`` is
    ``sql.store_clock``'s text."""
    return (
        "INSERT INTO extraction_due (owner, due_at, live_tokens, extracted_through) "
        f"SELECT ?, CASE WHEN ? >= ? THEN {now} ELSE {now} END, ?, {NEWEST_TURN} {ALWAYS} "
        "ON CONFLICT(owner) DO UPDATE SET live_tokens = extraction_due.live_tokens + excluded.live_tokens, "
        "due_at = CASE WHEN extraction_due.live_tokens + excluded.live_tokens >= ? "
        f"THEN {now} ELSE {now} END "
        f"RETURNING CASE WHEN due_at <= {now} THEN 1 ELSE 0 END",
        [owner, added, token_budget, 0.0, quiet_gap_s, added, owner, token_budget, 0.0, quiet_gap_s, 0.0],
    )


def append(owner: str, tokens: int) -> tuple[str, list[object]]:
    """``tokens`` more (fewer, when negative) live buffered tokens for ``owner``: its row counts them."""
    return "UPDATE extraction_due SET live_tokens = live_tokens + ? WHERE owner = ?", [tokens, owner]


def less(ids: Sequence[int]) -> tuple[str, list[object]]:
    """Before the turns ``ids`` are marked dead: their owners' rows lose the tokens of those still live."""
    live = _LIVE_OF.format(ids=marks(ids))
    return (
        "UPDATE extraction_due SET live_tokens = live_tokens - "
        f"COALESCE((SELECT SUM(b.token_count) {live} AND b.owner = extraction_due.owner), 0) "
        f"WHERE owner IN (SELECT b.owner {live})",
        [*ids, *ids],
    )


def requeue(now: str, owner: str | None) -> tuple[str, list[object]]:
    """Before dead letters (of ``owner``, or all) are made live again: their owners' rows gain their
    tokens and an idle row (or none: one is made) is due now."""
    cond, params = ("AND f.owner = ?", [owner]) if owner is not None else ("", [])
    return (
        "INSERT INTO extraction_due (owner, due_at, live_tokens, extracted_through) "
        f"SELECT f.owner, {now}, SUM(t.token_count), (SELECT COALESCE(MAX(m.id), 0) "
        "FROM conversation_turns m WHERE m.owner = f.owner) FROM extraction_failures f "
        f"JOIN conversation_turns t ON t.id = f.turn_id WHERE f.dead = 1 {cond} GROUP BY f.owner "
        "ON CONFLICT(owner) DO UPDATE SET live_tokens = extraction_due.live_tokens + excluded.live_tokens, "
        f"due_at = CASE WHEN extraction_due.due_at = '{IDLE}' THEN excluded.due_at "
        "ELSE extraction_due.due_at END",
        [0.0, *params],
    )
