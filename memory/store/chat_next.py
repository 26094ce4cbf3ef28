"""A chat's next unanswered message, read after its lock inside the statement that needs it (issue 38,
item 5; docs/scale-out.md, "The chat's lock inside the statement").

The intake's claim (``inbox.py``) and the answered step (``chat_holds.py``) must see every message of
their chat whose insert began before them: an earlier message must not be overtaken by a later one's
claim, and the hold must not be let go over a message being stored ("Platform order"). Every insert holds
the shared side of the chat's advisory lock until it commits; the claim waits for the exclusive side.
Until schema 25 that was a statement of its own, sent pipelined before the claim's, because a statement's
snapshot is taken when it starts: a lock taken inside it comes too late for what it reads. Two statements
a message (1.98 of the ~6 ``bench.db_cost`` counted) were those locks.

``tierclaw_chat_next`` moves the lock into the statement: a ``VOLATILE`` PL/pgSQL function takes the
exclusive side, then reads the chat's oldest unanswered message (platform order, then id) with a
snapshot of its own, taken after the lock was granted (PostgreSQL gives each query of a volatile function
a fresh snapshot under READ COMMITTED). The statement around it still reads with its own, earlier
snapshot, so it acts only on what both agree on:

- the answered step claims the message the function found only if its own snapshot holds that row (an
  ``UPDATE … WHERE id = …`` finds no row it cannot see); a message stored during the lock's wait is
  reported as the next message to wait for instead (a few milliseconds), and the holder's next claim,
  after the chat's lock as before (``ChatHoldRows.next_message``), takes it; the hold is let go only when
  the function finds nothing left;
- the intake claims its message only when the function and its own snapshot both find the chat idle.

Both race cases cost a statement more; the usual message costs the lock's statement less (plan cached
per connection by PL/pgSQL, the function's own queries not top-level statements).
SQLite (one process, its write lock) needs none of this: ``SQLITE`` is empty.
"""

from __future__ import annotations

from memory.store.sql import CHAT_LOCKS

# Schema 25 (``schema_tables.TEMPLATES``: ``{chat_next_own}``, CHAT_NEXT): PostgreSQL's function;
# nothing on SQLite. The lock's key is the one ``inbox.py``'s inserts take the shared side of:
# (CHAT_LOCKS, hashtext('<channel>:<chat_id>')).
POSTGRES = f"""
CREATE FUNCTION tierclaw_chat_next(p_channel TEXT, p_chat TEXT, p_skip BIGINT)
    RETURNS TABLE (next_id BIGINT, next_received TEXT, next_seq BIGINT)
    LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({CHAT_LOCKS}, hashtext(p_channel || ':' || p_chat));
    RETURN QUERY SELECT i.id, i.received_at::TEXT, i.platform_seq FROM inbox i
        WHERE i.channel = p_channel AND i.chat_id = p_chat AND i.answered_at IS NULL AND i.id <> p_skip
        ORDER BY i.platform_seq, i.id LIMIT 1;
END $$;
"""
SQLITE = ""

# A ``WITH`` part (PostgreSQL): the chat's next unanswered message other than ``?`` (0: none to skip),
# read after the chat's exclusive lock; parameters (channel, chat_id, skip). Columns id, received_at,
# platform_seq; no row when the chat has nothing else unanswered.
NEXT_AFTER_LOCK = (
    "SELECT next_id AS id, next_received AS received_at, next_seq AS platform_seq "
    "FROM tierclaw_chat_next(?, ?, ?)"
)
