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

- the answered step (until schema 27) claimed the message the function found only if its own snapshot
  held that row (an ``UPDATE … WHERE id = …`` finds no row it cannot see): a message stored during the
  lock's wait was reported as the next message to wait for, and the holder's next claim
  (``ChatHoldRows.next_message``) took it, a commit more. Since schema 27 its claim is a query of
  ``tierclaw_chat_claim`` (which calls ``tierclaw_chat_next`` for the lock and the read), after the lock,
  with a snapshot of its own (``CLAIM_POSTGRES``): it claims that message too. The hold is let go only
  when the function finds nothing left;
- the intake claims its message when the function finds the chat idle and takeable; its own snapshot
  decides only whether the chat's history is read with the claim (``inbox.py``, ``_LOCKED_IDLE``).

Neither race costs a statement more now; the usual message costs the lock's statement less (plan cached
per connection by PL/pgSQL, the function's own queries not top-level statements).
SQLite (one process, its write lock) needs none of this: ``SQLITE`` and ``CLAIM_SQLITE`` are empty.
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

# Schema 27 (``schema_tables.TEMPLATES``: ``{chat_claim_own}``, CLAIM): the answered step's claim made after
# the lock too. The statement's ``UPDATE … WHERE id = …`` could not claim a message whose intake committed
# after the statement began and before it got the chat's lock (its snapshot is older than the row): it
# reported a wait, and the worker claimed with a statement of its own — one commit and one lock more, 0–1
# times in 200 messages (``bench.db_cost``, stop 55). Here the lock and the read are
# ``tierclaw_chat_next``'s, called for both (one text of them; its read's snapshot is taken after the
# lock), and the claim is a later query of this function's own, with its own snapshot, also taken after
# the lock: it sees every message the lock's read sees. Its conditions are those the statement's own
# claim had: the chat held by ``p_holder`` at ``p_generation``, the message out of the reorder window
# (``p_settle`` seconds old by the store's clock, or without a platform order), ``p_go`` (the
# statement's mark was made); ``p_again`` (a retried step) keeps the earlier claimant. Returns the next
# message (none: the chat has nothing else unanswered) and, when ``claimed``, what the claim's
# ``RETURNING`` gave. Nothing on SQLite: one writer, whose transaction sees every committed intake.
CLAIM_POSTGRES = """
CREATE FUNCTION tierclaw_chat_claim(
    p_channel TEXT, p_chat TEXT, p_skip BIGINT, p_holder TEXT, p_generation BIGINT,
    p_settle DOUBLE PRECISION, p_go BOOLEAN, p_again BOOLEAN
) RETURNS TABLE (
    next_id BIGINT, next_received TEXT, claimed BOOLEAN, claim_body TEXT, claim_sent_by TEXT, claim_media TEXT
) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    SELECT n.next_id, n.next_received, n.next_seq = 0 OR n.next_received <= to_char((clock_timestamp()
            - make_interval(secs => p_settle)) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')
        INTO next_id, next_received, claimed FROM tierclaw_chat_next(p_channel, p_chat, p_skip) n;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    claimed := claimed AND p_go AND EXISTS (SELECT 1 FROM chat_holds h WHERE h.channel = p_channel
        AND h.chat_id = p_chat AND h.holder = p_holder AND h.generation = p_generation);
    IF claimed THEN
        UPDATE inbox i SET claimed_by = p_holder,
            sending_by = CASE WHEN i.claimed_by = p_holder AND p_again THEN i.sending_by ELSE i.claimed_by END
            WHERE i.id = next_id RETURNING i.message, i.sending_by, i.media
            INTO claim_body, claim_sent_by, claim_media;
        claimed := FOUND;
    END IF;
    RETURN NEXT;
END $$;
"""
CLAIM_SQLITE = ""

# A ``WITH`` part (PostgreSQL): the chat's next unanswered message other than ``?`` (0: none to skip),
# read after the chat's exclusive lock; parameters (channel, chat_id, skip). Columns id, received_at,
# platform_seq; no row when the chat has nothing else unanswered.
NEXT_AFTER_LOCK = (
    "SELECT next_id AS id, next_received AS received_at, next_seq AS platform_seq "
    "FROM tierclaw_chat_next(?, ?, ?)"
)

# A ``WITH`` part (PostgreSQL), the answered step's (``chat_holds.py``): the chat's next unanswered message
# other than ``?``, read after the chat's exclusive lock, and claimed by its own query when it may be
# (``CLAIM_POSTGRES``); parameters (channel, chat_id, skip, holder, generation, settle seconds), then
# ``go`` and ``again`` as SQL. Columns id, received_at, claimed, message, sending_by, media (the last
# three NULL unless claimed); no row when the chat has nothing else unanswered.
CLAIM_AFTER_LOCK = (
    "SELECT next_id AS id, next_received AS received_at, claimed, claim_body AS message, "
    "claim_sent_by AS sending_by, claim_media AS media "
    "FROM tierclaw_chat_claim(?, ?, ?, ?, ?, ?, {go}, {again})"
)
