"""One table for the turn text: the extraction buffer is a watermark on ``conversation_turns`` (issue 38,
item 5; docs/scale-out.md, "One table for the turn text").

A turn's text is kept once, in ``conversation_turns`` (with the sender and the token estimate the
extraction needs). What waits for extraction is, per owner:

* the **tail**: the owner's turns after ``extraction_due.extracted_through`` (the last turn id extracted
  in order) — an exchange adds to it by inserting its turns and nothing else;
* the **stragglers**: turns at or before the watermark that still have a row in ``extraction_failures``
  (a batch that failed and waits for its retry, or dead letters re-queued, or the buffer a migration moved).

``extraction_failures`` is written only when something fails (turn id, attempts, next try, dead, error);
its dead rows are the dead letters. A batch's write takes its turns in the same transaction as its
memories: the stragglers by deleting their failure rows (the row count says whether another run took them
first), the tail by moving the watermark with a compare-and-set (``extraction_buffer.BufferRows.remove``).

Every owner with turns keeps its ``extraction_due`` row once it has one: the watermark lives there, so a
flush that leaves nothing lets the row go idle (``IDLE``, a due time never reached) instead of deleting it.
A row made for an owner starts its watermark at the owner's newest turn: turns kept before it (an import,
``ConversationLog.record``) are not extracted. On PostgreSQL the exchange's due-time push runs before its
turns are inserted, in one statement (``exchange.with_parts``): the owner's row is locked before the turn
ids are drawn, so an owner's turns get their ids in commit order and the watermark never passes a turn
still being written.
"""

from __future__ import annotations

# The due time of an owner with nothing to extract: after every real one, so no poll finds it due.
IDLE = "9999-12-31 23:59:59.999999"

# A buffered turn's columns in ``pending``'s result: the turn, then its failure bookkeeping.
PENDING_COLUMNS = (
    "id, owner, channel, chat_id, sender_id, role, content, token_count, created_at, attempts, "
    "next_attempt_at, dead, last_error"
)
_TURN = "t.id, t.owner, t.channel, t.chat_id, t.sender_id, t.role, t.content, t.token_count, t.created_at"

# The newest turn of the owner ``?``: where a new ``extraction_due`` row starts its watermark.
NEWEST_TURN = "(SELECT COALESCE(MAX(id), 0) FROM conversation_turns WHERE owner = ?)"


def pending(one_owner: bool) -> str:
    """Every buffered turn — the tail and the stragglers, dead letters included — as ``(…) AS p`` with
    ``PENDING_COLUMNS``; ``one_owner``: only the owner given twice as parameters (``?``, ``?``)."""
    tail_owner = "AND d.owner = ? " if one_owner else ""
    straggler_owner = "AND f.owner = ? " if one_owner else ""
    return (
        f"(SELECT {_TURN}, COALESCE(f.attempts, 0) AS attempts, f.next_attempt_at, "
        "COALESCE(f.dead, 0) AS dead, f.last_error FROM extraction_due d "
        "JOIN conversation_turns t ON t.owner = d.owner AND t.id > d.extracted_through "
        f"LEFT JOIN extraction_failures f ON f.turn_id = t.id WHERE 1 = 1 {tail_owner}"
        f"UNION ALL SELECT {_TURN}, f.attempts, f.next_attempt_at, f.dead, f.last_error "
        "FROM extraction_failures f JOIN conversation_turns t ON t.id = f.turn_id "
        "LEFT JOIN extraction_due d ON d.owner = f.owner "
        f"WHERE (d.owner IS NULL OR f.turn_id <= d.extracted_through) {straggler_owner}) AS p"
    )


# A buffer row ``b`` and a kept turn ``t`` with the same words said at the same time in the same chat. The
# chat is compared as an expression (``|| ''``) so that both stores look the turns up by owner and time
# (``idx_turns_owner``), not by chat: 500 buffered rows of a 50,000-turn chat, SQLite 66 s -> 0.5 s.
_SAME = (
    "t.owner = b.owner AND t.created_at = b.created_at AND t.channel || '' = b.channel "
    "AND t.chat_id || '' = b.chat_id AND t.role = b.role AND t.content = b.content"
)
# The buffer with each row's rank among the rows alike (``k``): the k-th of them is the k-th turn alike.
_RANKED = (
    "(SELECT b0.*, ROW_NUMBER() OVER (PARTITION BY b0.owner, b0.channel, b0.chat_id, b0.role, b0.content, "
    "b0.created_at ORDER BY b0.id) AS k FROM extraction_buffer b0) AS b"
)

# The schema version of the watermark (``schema_tables.TEMPLATES``, both stores). Nothing buffered is lost:
# each buffer row is paired with its kept twin (the k-th row alike with the k-th turn alike: rows said
# twice at once stay two); a row without one (a turn buffered by ``ExtractionService.record``, or of an
# owner whose conversation tier was off) becomes a kept turn first (its words as its index text, in the
# buffer's order). Every buffer row — live, waiting out a retry, or dead — becomes the failure row of its
# turn with its attempts, retry time and error, so the buffer as it was, and nothing else, waits for
# extraction (as stragglers behind the watermark); its turn gets its sender and token estimate. Every
# owner with turns gets its row, the watermark at its newest turn, idle unless it has live turns (then due
# when it was, or now); the running count is counted again from the failure rows.
TURN_WATERMARK = (
    """
ALTER TABLE conversation_turns ADD COLUMN sender_id {TEXT} NOT NULL DEFAULT '';
ALTER TABLE conversation_turns ADD COLUMN token_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_turns_owner_id ON conversation_turns(owner, id);
ALTER TABLE extraction_due ADD COLUMN extracted_through {BIGINT} NOT NULL DEFAULT 0;
CREATE TABLE extraction_failures (
    turn_id         {BIGINT} PRIMARY KEY,
    owner           {TEXT}   NOT NULL,
    attempts        INTEGER  NOT NULL DEFAULT 0,
    next_attempt_at {TEXT},
    dead            INTEGER  NOT NULL DEFAULT 0,
    last_error      {TEXT}
);
CREATE INDEX idx_extraction_failures_owner ON extraction_failures(owner, dead);
INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, created_at, sender_id,
    token_count)
    SELECT b.owner, b.channel, b.chat_id, b.role, b.content, b.content, b.created_at, b.sender_id,
    b.token_count FROM """
    + _RANKED
    + """
    WHERE b.k > (SELECT COUNT(*) FROM conversation_turns t WHERE """
    + _SAME
    + """) ORDER BY b.id;
CREATE TABLE buffer_moved (buffer_id {BIGINT} PRIMARY KEY, turn_id {BIGINT} NOT NULL);
INSERT INTO buffer_moved (buffer_id, turn_id)
    SELECT b.id, (SELECT t.id FROM conversation_turns t WHERE """
    + _SAME
    + """ AND (SELECT COUNT(*) FROM conversation_turns t2 WHERE """
    + _SAME.replace("t.", "t2.")
    + """ AND t2.id <= t.id) = b.k) FROM """
    + _RANKED
    + f""";
INSERT INTO extraction_failures (turn_id, owner, attempts, next_attempt_at, dead, last_error)
    SELECT m.turn_id, b.owner, b.attempts, b.next_attempt_at, b.dead, b.last_error
    FROM buffer_moved m JOIN extraction_buffer b ON b.id = m.buffer_id ORDER BY b.id;
UPDATE conversation_turns
    SET sender_id = (SELECT b.sender_id FROM buffer_moved m JOIN extraction_buffer b ON b.id = m.buffer_id
        WHERE m.turn_id = conversation_turns.id),
    token_count = (SELECT b.token_count FROM buffer_moved m JOIN extraction_buffer b ON b.id = m.buffer_id
        WHERE m.turn_id = conversation_turns.id)
    WHERE id IN (SELECT turn_id FROM buffer_moved);
UPDATE extraction_due SET extracted_through = COALESCE((SELECT MAX(t.id) FROM conversation_turns t
    WHERE t.owner = extraction_due.owner), 0);
INSERT INTO extraction_due (owner, due_at, live_tokens, extracted_through)
    SELECT owner, '{IDLE}', 0, MAX(id) FROM conversation_turns
    WHERE owner NOT IN (SELECT owner FROM extraction_due) GROUP BY owner;
UPDATE extraction_due SET live_tokens = COALESCE((SELECT SUM(t.token_count) FROM extraction_failures f
    JOIN conversation_turns t ON t.id = f.turn_id WHERE f.owner = extraction_due.owner AND f.dead = 0), 0);
UPDATE extraction_due SET due_at = {{NOW}} WHERE due_at = '{IDLE}'
    AND owner IN (SELECT owner FROM extraction_failures WHERE dead = 0);
DROP TABLE buffer_moved;
DROP TABLE extraction_buffer;
"""
)
