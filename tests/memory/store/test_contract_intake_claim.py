"""The store contract, a message stored, its chat held and the message claimed in one step
(``InboxRows.add_hold_and_claim``; issue 38, item 5): claimed only when the hold was taken and nothing else
of the chat waits, so the platform's order and the fence hold as with a claim of its own — against both
stores. The last test is PostgreSQL's own: an earlier message of the chat committing late is seen."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from memory.store.claim_rows import ClaimedRow, parse_history
from memory.store.open import open_store
from memory.store.protocol import MemoryStore

LEASE = 60.0
VOICE = '[{"kind": "voice", "file_id": "f1"}]'


async def test_a_message_to_an_idle_chat_is_stored_held_and_claimed_in_one_step(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    stored, generation, claimed = await inbox.add_hold_and_claim(
        "telegram", "c1", "u1", "one", 10, VOICE, "r1", LEASE, history=3
    )
    assert stored is not None and generation == 1 and isinstance(claimed, ClaimedRow)
    assert (claimed.id, claimed.message, claimed.media, claimed.generation) == (stored, "one", VOICE, 1)
    assert claimed.sent_by is None and claimed.received_at
    assert claimed.session == 1 and parse_history(claimed.history) == []
    assert await holds.get("telegram", "c1") == ("r1", 1)
    # The claim is the hold's generation: the fence and the answered-mark take it as any claim's.
    assert await holds.fence(stored, "telegram", "c1", "r1", 1, 1.0)
    after = await holds.answered_then_next(stored, "telegram", "c1", "r1", 1)
    assert (after.marked, after.next, after.released) == (True, None, True)
    # A redelivery stores, holds and claims nothing.
    assert await inbox.add_hold_and_claim("telegram", "c1", "u1", "one", 10, "", "r2", LEASE) == (
        None,
        None,
        None,
    )
    assert await holds.holder("telegram", "c1") is None


async def test_a_message_behind_another_is_held_not_claimed(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    first = await inbox.add("telegram", "c1", "u1", "one", 10)  # stored, its chat never held (a crash)
    second, generation, claimed = await inbox.add_hold_and_claim(
        "telegram", "c1", "u2", "two", 20, "", "r1", LEASE
    )
    assert second is not None and generation == 1 and claimed is None
    following = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(following, ClaimedRow) and following.id == first  # the earlier one first


async def test_a_message_to_a_chat_another_replica_holds_is_only_stored(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    stored, generation, claimed = await inbox.add_hold_and_claim(
        "telegram", "c1", "u1", "one", 10, "", "r2", LEASE
    )
    assert stored is not None and (generation, claimed) == (None, None)
    assert await holds.get("telegram", "c1") == ("r1", 1)
    following = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(following, ClaimedRow) and following.id == stored


@pytest.fixture
async def two_replicas(postgres_url: str) -> AsyncIterator[tuple[Any, Any]]:
    """Two stores on one PostgreSQL database."""
    stores = [await open_store(postgres_url, warm_text=False) for _ in range(2)]
    try:
        yield stores[0], stores[1]
    finally:
        for opened in stores:
            await opened.close()


async def test_an_earlier_message_committing_late_is_not_overtaken_at_intake(two_replicas) -> None:
    slow, fast = two_replicas
    async with slow.transaction():  # one replica stores the chat's earlier message: not committed yet
        earlier = await slow.inbox.add("telegram", "7", "u1", "earlier", 1)
        intake = asyncio.create_task(
            fast.inbox.add_hold_and_claim("telegram", "7", "u2", "later", 2, "", "r2", LEASE)
        )
        async with asyncio.timeout(30):  # until the intake waits for the chat's lock (a ceiling, no margin)
            while not intake.done():
                waiting = await fast.db.read(
                    "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                )
                if waiting[0][0]:
                    break
                await asyncio.sleep(0.01)
        assert not intake.done(), f"stored {intake.result()} past an earlier message being stored"
    later, generation, claimed = await intake
    assert later is not None and generation == 1 and claimed is None  # "earlier" waits: not claimed
    following = await fast.chat_holds.next_message("telegram", "7", "r2")
    assert isinstance(following, ClaimedRow) and following.id == earlier


async def test_a_message_with_a_window_to_wait_out_is_held_and_its_wait_returned(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    stored, generation, wait = await inbox.add_hold_and_claim(
        "feishu", "oc1", "m1", "one", 1700, "", "r1", LEASE, history=3, settle_s=0.3
    )
    assert stored is not None and generation == 1 and wait == 0.3  # not claimed: it must settle first
    assert await holds.get("feishu", "oc1") == ("r1", 1)
    # Behind it, a message is only stored and held (the holder claims both in the platform's order).
    earlier, generation, none = await inbox.add_hold_and_claim(
        "feishu", "oc1", "m0", "zero", 1600, "", "r1", LEASE, settle_s=0.3
    )
    assert earlier is not None and (generation, none) == (1, None)
    # No platform order: nothing to wait for, claimed at once whatever the window.
    plain, _, claimed = await inbox.add_hold_and_claim(
        "feishu", "oc2", "m2", "two", 0, "", "r1", LEASE, settle_s=0.3
    )
    assert isinstance(claimed, ClaimedRow) and claimed.id == plain


async def test_a_message_stored_while_its_chat_is_let_go_is_claimed_by_its_intake(two_replicas) -> None:
    """The answered step of the chat's last message commits — the message marked, the hold let go — after
    the intake's statement began and before it got the chat's lock: the intake's own snapshot still
    sees the last message unanswered, the read after the lock does not. The intake claims its message
    all the same (issue 38: no hold and no claim of their own after it, two commits a message), without
    the history its snapshot would have read without that answer's exchange."""
    worker, other = two_replicas
    first, generation, claim = await worker.inbox.add_hold_and_claim(
        "telegram", "7", "u1", "one", 1, "", "r1", LEASE, history=3
    )
    assert first is not None and isinstance(claim, ClaimedRow) and generation is not None
    async with worker.transaction():  # the answered step, not committed yet: the chat's lock is its
        after = await worker.chat_holds.answered_then_next(first, "telegram", "7", "r1", generation)
        assert (after.marked, after.next, after.released) == (True, None, True)
        intake = asyncio.create_task(
            other.inbox.add_hold_and_claim("telegram", "7", "u2", "two", 2, "", "r1", LEASE, history=3)
        )
        async with asyncio.timeout(30):  # until the intake waits for the chat's lock (a ceiling, no margin)
            while not intake.done():
                waiting = await other.db.read(
                    "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                )
                if waiting[0][0]:
                    break
                await asyncio.sleep(0.01)
        assert not intake.done(), "the intake did not wait for the answered step's lock"
    second, taken, claimed = await intake
    assert second is not None and taken == generation + 1  # the hold let go, taken again
    assert isinstance(claimed, ClaimedRow) and (claimed.id, claimed.generation) == (second, taken)
    assert claimed.session is None and claimed.history is None  # the handler reads the history itself
    assert await other.chat_holds.get("telegram", "7") == ("r1", taken)
    assert await other.inbox.in_flight("r1") == 1  # the claim (the send intent) is in the row
    assert await other.chat_holds.fence(second, "telegram", "7", "r1", taken, 1.0)
    done = await other.chat_holds.answered_then_next(second, "telegram", "7", "r1", taken)
    assert (done.marked, done.next, done.released) == (True, None, True)


async def _waiting_for_a_chat_lock(db: Any, step: asyncio.Task[Any]) -> None:
    """Until a statement waits for a chat's lock (``pg_locks``: an advisory lock not granted) — a ceiling,
    no margin; the step must not have finished without it."""
    async with asyncio.timeout(30):
        while not step.done():
            waiting = await db.read(
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            )
            if waiting[0][0]:
                break
            await asyncio.sleep(0.01)
    assert not step.done(), f"the step did not wait for the chat's lock: {step.result()}"


async def test_a_message_taken_in_as_its_chat_is_answered_is_claimed_by_the_answered_step(
    two_replicas,
) -> None:
    """The other order of the test above: the intake of the chat's next message (its store, hold and
    claim, the chat's exclusive lock taken) has not committed when the answered step of the chat's last
    message begins, and commits while that statement waits for the lock. The statement's snapshot is
    older than the new row, so its own ``UPDATE`` cannot claim it (before schema 27 it reported a wait,
    and the worker claimed with a statement and a commit of its own); the claim after the lock
    (``tierclaw_chat_claim``) does: two commits a message, whatever the order (issue 38). The plain
    insert's case (the shared side): ``test_contract_chat_holds.py``."""
    worker, other = two_replicas
    first, generation, claim = await worker.inbox.add_hold_and_claim(
        "telegram", "7", "u1", "one", 1, "", "r1", LEASE, history=3
    )
    assert first is not None and isinstance(claim, ClaimedRow) and generation is not None
    async with other.transaction():  # the intake of the next message, not committed yet
        second, taken, claimed = await other.inbox.add_hold_and_claim(
            "telegram", "7", "u2", "two", 2, "", "r1", LEASE, history=3
        )
        assert (taken, claimed) == (generation, None)  # its holder's hold kept; "one" is unanswered
        step = asyncio.create_task(
            worker.chat_holds.answered_then_next(first, "telegram", "7", "r1", generation, history=3)
        )
        await _waiting_for_a_chat_lock(other.db, step)
    after = await step
    assert after.marked and not after.released
    assert isinstance(after.next, ClaimedRow), f"not claimed by the answered step: {after.next}"
    assert (after.next.id, after.next.message, after.next.generation) == (second, "two", generation)
    assert after.next.sent_by is None and after.next.received_at
    assert await worker.inbox.in_flight("r1") == 1  # the claim (the send intent) is in the row
    assert await worker.chat_holds.get("telegram", "7") == ("r1", generation)
    done = await worker.chat_holds.answered_then_next(second, "telegram", "7", "r1", generation)
    assert (done.marked, done.next, done.released) == (True, None, True)
