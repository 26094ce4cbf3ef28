"""A message another replica claimed and never marked: wait for its mark before answering it again
(issue 38, item 1; docs/scale-out.md, "Fencing").

A takeover's claim of such a message (``Claimed.in_flight_by``) cannot tell a dead claimant from a
stalled one (SIGSTOP, a long pause, a lost network): both stopped renewing their hold. A stalled one may
have sent its reply just before it stopped and marks the message when it wakes — the store accepts that
mark from the claimant a takeover moved to ``sending_by`` (memory/store/chat_holds.py ``_MARKER``) —, so
the taker waits up to ``DurableInbox.in_flight_wait`` seconds for it before answering again. Answered
meanwhile: the taker sends nothing for it and goes on with the chat's next message, in order. Not
answered: the claimant is taken for dead and the message is answered again (on Telegram possibly a
second time: ``bench.replicas`` ``in_flight_at_kill``; on Feishu the repeat is dropped by its key).
Where the platform drops every repeat (``DurableInbox.repeats_dropped``: Feishu) nothing is waited for:
the wait could only save a reply the person would not see twice, and it costs the chat a lease.

The wait is a takeover's alone, one per chat taken over: a chat's later messages were never claimed by
the dead or stalled replica, and a replica that stops on purpose forgets its unmarked claims as it hands
its holds over (``DurableInbox.drop_holds``). On SQLite one gateway owns the file, so the claimant is this
process's dead predecessor and nothing is waited for (``in_flight_wait`` 0).
"""

from __future__ import annotations

import asyncio
import logging
import time

from gateway.inbox import Claimed, DurableInbox

log = logging.getLogger("tierclaw.gateway")

POLL_S = 0.25  # how often the taker looks for the stalled claimant's mark


async def answered_by_its_claimant(inbox: DurableInbox, claim: Claimed) -> bool:
    """True when the replica that claimed the message before this takeover marked it answered within
    ``inbox.in_flight_wait`` seconds (its reply is the answer: send nothing); False — said in one line —
    when it is to be answered again here. A message this replica claimed itself (its own answer cut
    short, or a process before it under the same replica id) is no takeover: nothing is waited for, and
    the line says so."""
    previous = claim.in_flight_by
    inbox_id = claim.message.inbox_id
    if not previous or not inbox_id:
        return False
    wait = 0.0 if claim.message.channel in inbox.repeats_dropped else inbox.in_flight_wait
    if previous != inbox.replica and wait > 0:
        deadline = time.monotonic() + wait
        while True:
            if await inbox.is_answered(inbox_id):
                log.warning(
                    "[gateway] %s: message %s was answered by replica %s, which had stalled; not answered "
                    "again",
                    claim.message.chat_key,
                    inbox_id,
                    previous,
                )
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await asyncio.sleep(min(POLL_S, left))
    if previous == inbox.replica:  # no takeover: an answer of its own was cut short, or its predecessor's
        log.warning(
            "[gateway] %s: message %s was claimed before by this replica (%s) and not marked answered: an "
            "earlier answer of it here (or by a process before this one under the same replica id) was cut "
            "short, and its reply may have gone out (in flight); answering it again",
            claim.message.chat_key,
            inbox_id,
            previous,
        )
        return False
    log.warning(
        "[gateway] %s: message %s was claimed by replica %s, which stopped before marking it answered: "
        "its reply may have gone out (in flight); answering it again",
        claim.message.chat_key,
        inbox_id,
        previous,
    )
    return False
