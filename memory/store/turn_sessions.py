"""One table for the turn text, part 2: a chat's Tier 0 session is a ``session_no`` on its kept turns
(issue 38, item 5; docs/scale-out.md, "One table for the turn text").

An exchange with memory on writes its turns once, to ``conversation_turns``, each with the chat's current
session number (``chat_sessions``); the history the model sees is the chat's turns of that session, newest
first, read through ``idx_turns_session`` (channel, chat_id, session_no, id). ``/new`` raises the number
(``chat_sessions.SessionRows.start``): the old session's turns stay, as kept turns of the conversation
tier, out of the history. ``KEEP_MESSAGES`` is the read's ``LIMIT`` where a prune every 50 messages used
to delete the rest.

``session_messages`` stays for what has no conversation tier: a gateway with memory off (no owner's
turns are kept, so nothing is searched, embedded, counted, extracted or pruned for it — the reason it
keeps its own small table rather than flagged turns every reader of ``conversation_turns`` would have to
leave out), and the sessions a migrated home could not move (below). The history read reads both,
the turns first: a session's rows in ``session_messages`` are older than any of its turns (a chat moved
to memory on, or a session begun before schema 24), so the turns are its newest part.

Schema 24 (``TURN_SESSIONS``) moves each chat's current session onto its turns without changing what the
model sees: each of its ``session_messages`` rows is paired with its kept twin (the k-th row alike —
chat, role, words, time — with the k-th turn alike, as ``turn_watermark.py`` paired the buffer); a chat
whose every row has a twin, in the same order, gives its twins the session's number and its rows go. A
chat with a row without a twin (memory off, a turn pruned by age, a session older than the exchange) keeps
its whole session in ``session_messages``, read as before.
"""

from __future__ import annotations

from collections.abc import Sequence

# The most of a session the model can be shown (``agent.historyMessages`` is at most 200): the history
# read's ``LIMIT``, and what the age prune of turns spares of each chat's current session.
KEEP_MESSAGES = 200

# The current session number of the chat ``?`` (a chat_key): 1 for a chat never reset.
CURRENT = "COALESCE((SELECT session_no FROM chat_sessions WHERE chat_key = ?), 1)"


def newest(
    channel: str, chat_id: str, limit: int, session: int | None = None
) -> tuple[str, tuple[object, ...]]:
    """The chat's last ``limit`` messages of ``session`` (None: its current one) as ``(…) AS s`` with the
    columns ``part`` (0: a turn, 1: a row of ``session_messages``), ``id``, ``role``, ``content``, with
    its parameters: up to ``limit`` of each part, in no promised order; sorted by ``history_order`` (the
    turns newest first, then the session table's) the first ``limit`` are the history. ``limit`` is at
    most ``KEEP_MESSAGES``.

    No sort in SQL: with one (``ORDER BY part, id DESC LIMIT``) the read took ~0.16 ms of the backend's
    CPU, without it ~0.09–0.12, main's read of one table ~0.06–0.10 (``/proc/<pid>/schedstat``, prepared,
    20 of 400 messages, ten chats). The session's turns are read as ``idx_turns_session`` holds them: the
    number as a range of one (``>=`` and ``<=``), ordered by it, then ``id``, both descending. With
    ``session_no = N … ORDER BY id DESC`` PostgreSQL took the primary key backwards over every chat's
    newer turns instead (116 buffers and 0.7 ms against 4 and 0.08 ms there), a walk that grows with the
    turns of the other chats since this one last spoke."""
    chat_key = f"{channel}:{chat_id}"
    limit = min(limit, KEEP_MESSAGES)
    number, number_params = (CURRENT, (chat_key,)) if session is None else ("?", (session,))
    sql = (
        "(SELECT * FROM (SELECT 0 AS part, id, role, content FROM conversation_turns "
        f"WHERE channel = ? AND chat_id = ? AND session_no >= {number} AND session_no <= {number} "
        "ORDER BY session_no DESC, id DESC LIMIT ?) AS t UNION ALL SELECT * FROM (SELECT 1 AS part, id, "
        f"role, content FROM session_messages WHERE chat_key = ? AND session_no = {number} "
        "ORDER BY id DESC LIMIT ?) AS m) AS s"
    )
    params = (channel, chat_id, *number_params, *number_params, limit, chat_key, *number_params, limit)
    return sql, params


def history_order(row: Sequence[object]) -> tuple[int, int]:
    """A ``newest`` row's place, newest first (the turns before the session table's rows)."""
    return int(str(row[0])), -int(str(row[1]))


# The turns the age prune spares (``TurnRows.prune``): the newest ``KEEP_MESSAGES`` of each chat's current
# session, which the history may show (the session table's rows were never pruned by age either).
SPARED = (
    "SELECT r.id FROM (SELECT c.id, ROW_NUMBER() OVER (PARTITION BY c.channel, c.chat_id "
    "ORDER BY c.id DESC) AS n FROM conversation_turns c WHERE c.session_no > 0 AND c.session_no = "
    "COALESCE((SELECT s.session_no FROM chat_sessions s WHERE s.chat_key = c.channel || ':' || c.chat_id), 1)"
    f") AS r WHERE r.n <= {KEEP_MESSAGES}"
)

# A session row ``s`` and a kept turn ``t`` with the same words said at the same time in the same chat,
# looked up by time (the migration's own index on ``created_at``, dropped at its end).
_SAME = (
    "t.created_at = s.created_at AND t.channel || ':' || t.chat_id = s.chat_key AND t.role = s.role "
    "AND t.content = s.content"
)
# Each chat's current session with each row's rank among the rows alike (``k``): the k-th of them is the
# k-th turn alike.
_RANKED = (
    "(SELECT m.*, ROW_NUMBER() OVER (PARTITION BY m.chat_key, m.role, m.content, m.created_at "
    "ORDER BY m.id) AS k FROM session_messages m WHERE m.session_no = "
    "COALESCE((SELECT c.session_no FROM chat_sessions c WHERE c.chat_key = m.chat_key), 1)) AS s"
)

# Schema 24, both stores (``schema_tables.TEMPLATES``): the turns' session number and its index, and each
# chat's current session moved onto its twins when every row of it has one, in the same order.
TURN_SESSIONS = (
    """
ALTER TABLE conversation_turns ADD COLUMN session_no INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_turns_session ON conversation_turns(channel, chat_id, session_no, id);
CREATE INDEX idx_turns_said_at ON conversation_turns(created_at);
CREATE TABLE session_moved (
    message_id {BIGINT} PRIMARY KEY,
    chat_key   {TEXT}   NOT NULL,
    session_no INTEGER  NOT NULL,
    turn_id    {BIGINT}
);
INSERT INTO session_moved (message_id, chat_key, session_no, turn_id)
    SELECT s.id, s.chat_key, s.session_no, (SELECT t.id FROM conversation_turns t WHERE """
    + _SAME
    + """ AND (SELECT COUNT(*) FROM conversation_turns t2 WHERE """
    + _SAME.replace("t.", "t2.")
    + """ AND t2.id <= t.id) = s.k) FROM """
    + _RANKED
    + """;
DELETE FROM session_moved WHERE chat_key IN (SELECT chat_key FROM session_moved WHERE turn_id IS NULL);
DELETE FROM session_moved WHERE chat_key IN (SELECT r.chat_key FROM (SELECT chat_key,
    ROW_NUMBER() OVER (PARTITION BY chat_key ORDER BY message_id) AS a,
    ROW_NUMBER() OVER (PARTITION BY chat_key ORDER BY turn_id) AS b FROM session_moved) AS r
    WHERE r.a <> r.b);
UPDATE conversation_turns SET session_no = (SELECT m.session_no FROM session_moved m
    WHERE m.turn_id = conversation_turns.id) WHERE id IN (SELECT turn_id FROM session_moved);
DELETE FROM session_messages WHERE id IN (SELECT message_id FROM session_moved);
DROP TABLE session_moved;
DROP INDEX idx_turns_said_at;
"""
)
