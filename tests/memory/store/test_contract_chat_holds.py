"""The store contract, chat holds (``memory/store/chat_holds.py``, docs/scale-out.md "The message path"):
one replica holds a chat at a time, lets it go only when nothing of it is waiting, claims the chat's
messages in the platform's order, a hold whose lease ran out is taken over, and every change of hands
raises the hold's generation, which fences the reply's send and its answered-mark — against both stores
(``store``). Leases are seconds from now on the store's own clock: a lease of -1 s has run out already.

The last tests are PostgreSQL's own: inserts of one chat that commit late, against its claim and release
(the chat's advisory lock: docs/scale-out.md, "Platform order")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from memory.store.claim_rows import ClaimedRow, parse_history
from memory.store.open import open_store
from memory.store.protocol import MemoryStore

LEASE = 60.0
RAN_OUT = -1.0  # a lease that ended a second ago: its replica died
VOICE = '[{"kind": "voice", "file_id": "f1"}]'  # a message's media references, as the inbox keeps them


async def test_a_chat_is_held_by_one_replica_until_its_lease_runs_out(store: MemoryStore) -> None:
    holds = store.chat_holds
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    assert await holds.take("telegram", "c1", "r2", LEASE) is None  # r1's lease is live
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1  # the holder again: extended, same generation
    assert await holds.take("telegram", "c2", "r2", LEASE) == 1  # another chat
    assert await holds.holder("telegram", "c1") == "r1"
    assert await holds.take("telegram", "c1", "r1", RAN_OUT) == 1  # r1 stops renewing...
    assert await holds.take("telegram", "c1", "r2", LEASE) == 2  # ...and r2 takes it over: a new generation
    assert await holds.get("telegram", "c1") == ("r2", 2)
    assert await holds.take("telegram", "c2", "r3", LEASE) is None
    assert await holds.take("telegram", "c2", "r3", LEASE, force=True) == 2  # one process owns SQLite


async def test_of_two_replicas_racing_for_a_chat_one_gets_it(store: MemoryStore) -> None:
    results = await asyncio.gather(
        *(store.chat_holds.take("telegram", "c1", f"r{i}", LEASE) for i in range(6))
    )
    assert sorted(results, key=str) == [1] + [None] * 5


async def test_release_is_refused_while_a_message_of_the_chat_waits(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    first = await inbox.add("telegram", "c1", "u1", "one")
    await inbox.add("telegram", "c2", "u2", "another chat's")
    assert first is not None
    assert not await holds.release("telegram", "c1", "r1")  # "one" waits
    await inbox.answer(first)
    assert not await holds.release("telegram", "c1", "r2")  # not r2's to release
    assert await holds.release("telegram", "c1", "r1")  # nothing of c1 waits now
    assert await holds.holder("telegram", "c1") is None and await holds.all() == []
    assert (
        await holds.take("telegram", "c1", "r1", LEASE) == 2
    )  # held again after a release: a new generation


async def test_the_holder_claims_the_chats_messages_in_the_platforms_order(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    three = await inbox.add("telegram", "c1", "u3", "three", 30, VOICE)  # stored first, sent last
    await inbox.add("telegram", "c2", "u9", "other chat", 5)
    one = await inbox.add("telegram", "c1", "u1", "one", 10)
    two = await inbox.add("telegram", "c1", "u2", "two", 20)
    assert await inbox.stored_out_of_order() == 2  # one and two came in after three
    assert await holds.next_message("telegram", "c1", "r1") is None  # r1 does not hold c1
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    claimed = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(claimed, ClaimedRow)
    assert (claimed.id, claimed.message, claimed.generation, claimed.sent_by) == (one, "one", 1, None)
    again = await holds.next_message("telegram", "c1", "r1")  # until answered
    assert isinstance(again, ClaimedRow) and again.id == one
    order = []
    for inbox_id in (one, two, three):
        assert inbox_id is not None
        await inbox.answer(inbox_id)
        order.append(await holds.next_message("telegram", "c1", "r1"))
    assert [c.message if isinstance(c, ClaimedRow) else c for c in order] == ["two", "three", None]
    assert [c.media if isinstance(c, ClaimedRow) else c for c in order] == ["", VOICE, None]  # its media
    timeline = await inbox.timeline()  # what bench.replicas reads to tell an order violation's cause
    assert [(chat, seq, answered is not None) for _, chat, seq, _, answered in timeline] == [
        ("c1", 10, True),
        ("c1", 20, True),
        ("c1", 30, True),
        ("c2", 5, False),
    ]


async def test_a_message_younger_than_the_reorder_window_waits(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    await inbox.add("telegram", "c1", "u1", "just now", 10)
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    wait = await holds.next_message("telegram", "c1", "r1", settle_s=3600)
    assert isinstance(wait, float) and 3500 < wait <= 3600  # stored a moment ago: wait out the window
    claimed = await holds.next_message("telegram", "c1", "r1", settle_s=0)
    assert isinstance(claimed, ClaimedRow) and claimed.message == "just now"
    await inbox.answer(claimed.id)
    assert await holds.next_message("telegram", "c1", "r1", settle_s=3600) is None  # nothing left


async def test_a_reply_is_fenced_by_the_generation_of_the_claim(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    one = await inbox.add("telegram", "c1", "u1", "one", 1)
    two = await inbox.add("telegram", "c1", "u2", "two", 2)
    assert one is not None and two is not None
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    assert await inbox.in_flight("r1") == 0
    claimed = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(claimed, ClaimedRow) and claimed.id == one
    assert claimed.lease_left_s is not None and 0 < claimed.lease_left_s <= LEASE  # the fence may trust it
    assert await inbox.in_flight("r1") == 1  # the claim is the send intent: "one" may go out from r1
    assert await holds.fence(one, "telegram", "c1", "r1", 1, LEASE / 3)  # current (a read: records nothing)
    assert not await holds.fence(one, "telegram", "c1", "r1", 1, LEASE * 2)  # less lease left than asked
    assert await holds.extend("telegram", "c1", "r1", 1, LEASE * 3)
    assert await holds.fence(one, "telegram", "c1", "r1", 1, LEASE * 2)  # renewed: enough left now
    assert await holds.answered(one, "telegram", "c1", "r1", 1)
    assert await holds.answered(one, "telegram", "c1", "r1", 1, "late")  # again (a retried mark): the same
    assert await inbox.in_flight("r1") == 0 and await inbox.unsent(3600) == 0
    # r1 claims "two", then stalls past its lease; r2 takes the chat over and claims "two" again
    assert isinstance(await holds.next_message("telegram", "c1", "r1"), ClaimedRow)
    assert await holds.take("telegram", "c1", "r1", RAN_OUT) == 1
    [(_, _, previous)] = await holds.take_waiting(["telegram"], "r2", LEASE)
    assert previous == "r1" and await holds.get("telegram", "c1") == ("r2", 2)
    claimed = await holds.next_message("telegram", "c1", "r2")
    assert isinstance(claimed, ClaimedRow) and (claimed.id, claimed.sent_by) == (two, "r1")  # in flight
    assert (await inbox.in_flight("r1"), await inbox.in_flight("r2")) == (0, 1)  # r2's claim now
    # r1 wakes: its send of generation 1 does not go through, nor can it renew
    assert not await holds.fence(two, "telegram", "c1", "r1", 1, 0)
    assert not await holds.extend("telegram", "c1", "r1", 1, LEASE)
    assert await holds.fence(two, "telegram", "c1", "r2", 2, 0)
    assert await holds.answered(two, "telegram", "c1", "r2", 2, "NetworkError")
    assert not await holds.fence(two, "telegram", "c1", "r2", 2, 0)  # answered: nothing more to send
    assert not await holds.answered(two, "telegram", "c1", "r1", 1)  # r1's mark: answered, not its chat
    assert await inbox.unsent(3600) == 1


async def test_a_stalled_claimants_mark_of_the_reply_it_sent_counts_and_its_taker_goes_on(
    store: MemoryStore,
) -> None:
    """r1 sent "one"'s reply, then stalled before its mark; r2 took the chat over and claimed "one" (in
    flight from r1) and waits (gateway/in_flight.py); r1 wakes and marks it — the store takes that mark
    from the claimant the takeover moved to ``sending_by``, and nothing else of r1's —, then r2's mark
    of "one" claims "two"."""
    holds, inbox = store.chat_holds, store.inbox
    one = await inbox.add("telegram", "c1", "u1", "one", 1)
    two = await inbox.add("telegram", "c1", "u2", "two", 2)
    assert one is not None and two is not None
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    assert isinstance(await holds.next_message("telegram", "c1", "r1"), ClaimedRow)
    assert await holds.take("telegram", "c1", "r1", RAN_OUT) == 1
    [(_, _, previous)] = await holds.take_waiting(["telegram"], "r2", LEASE)
    assert previous == "r1"
    taken = await holds.next_message("telegram", "c1", "r2")
    assert isinstance(taken, ClaimedRow) and (taken.id, taken.sent_by) == (one, "r1")
    assert not await inbox.is_answered(one)
    assert not await holds.fence(one, "telegram", "c1", "r1", 1, 0)  # r1 sends nothing more
    late = await holds.answered_then_next(one, "telegram", "c1", "r1", 1, None)
    assert late.marked and late.wrote and not late.released  # r1's reply is the answer...
    assert not isinstance(late.next, ClaimedRow)  # ...and it claims nothing of r2's chat
    assert await inbox.is_answered(one) and await holds.get("telegram", "c1") == ("r2", 2)
    assert not await inbox.is_answered(two)  # r1 claimed nothing more
    after = await holds.answered_then_next(one, "telegram", "c1", "r2", 2, None)
    assert after.marked and not after.wrote  # r1's mark stands; r2 wrote nothing for "one"
    assert isinstance(after.next, ClaimedRow) and (after.next.id, after.next.sent_by) == (two, None)
    assert not await holds.answered(two, "telegram", "c1", "r1", 1)  # never r1's claim


async def test_renewal_keeps_only_the_holders_own_chats(store: MemoryStore) -> None:
    holds = store.chat_holds
    assert await holds.take("telegram", "c1", "r1", LEASE)
    assert await holds.take("telegram", "c2", "r1", LEASE)
    assert await holds.take("telegram", "c3", "r2", LEASE)
    before = {row[1]: row[3] for row in await holds.all()}
    chats = [("telegram", "c1"), ("telegram", "c3")]
    assert await holds.renew("r1", chats, LEASE * 10) == [("telegram", "c1")]  # c3 is r2's
    after = {row[1]: row[3] for row in await holds.all()}
    assert after["c1"] > before["c1"] and (after["c2"], after["c3"]) == (before["c2"], before["c3"])
    assert await holds.drop("r1") == 2
    assert [row[1] for row in await holds.all()] == ["c3"]


async def test_waiting_chats_without_a_live_hold_are_taken_over(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    assert await holds.take("telegram", "released", "r1", LEASE) == 1
    assert await holds.release("telegram", "released", "r1")  # let go; then a message came
    for chat in ("dead", "live", "never", "mine", "released", "lapsed"):
        await inbox.add("telegram", chat, f"u-{chat}", "hi")
    await inbox.add("console", "local", "k1", "not served")
    assert await holds.take("telegram", "dead", "r9", RAN_OUT) == 1  # r9 died: its lease ran out
    assert await holds.take("telegram", "live", "r1", LEASE) == 1
    assert await holds.take("telegram", "mine", "r2", LEASE) == 1
    assert await holds.take("telegram", "idle", "r9", RAN_OUT) == 1  # nothing of it waits
    assert await holds.take("telegram", "lapsed", "r2", RAN_OUT) == 1  # r2's own renewals lapsed

    taken = await holds.take_waiting(["telegram"], "r2", LEASE)
    assert sorted(taken, key=str) == sorted(
        [
            ("telegram", "dead", "r9"),
            ("telegram", "never", None),
            ("telegram", "released", None),
            ("telegram", "lapsed", "r2"),
        ],
        key=str,
    )
    assert await holds.get("telegram", "dead") == ("r2", 2)
    assert await holds.get("telegram", "lapsed") == ("r2", 1)  # its own: the generation kept
    assert (await holds.get("telegram", "never"), await holds.get("telegram", "released")) == (
        ("r2", 1),
        ("r2", 2),
    )
    assert await holds.take_waiting(["telegram"], "r3", LEASE) == []  # all held live now
    own = await holds.take_waiting(["telegram"], "r2", LEASE, own=True)  # a restart under "r2"
    assert sorted(row[1] for row in own) == ["dead", "lapsed", "mine", "never", "released"]
    assert await holds.get("telegram", "mine") == ("r2", 2)  # a new life of r2: a new generation
    every = await holds.take_waiting(["telegram"], "r5", LEASE, every=True)
    assert len(every) == 6 and {row[2] for row in every} == {"r1", "r2"}
    assert await holds.prune(3600) == 0  # a hold let go is kept a while: its generation must not repeat
    assert await holds.prune(-3600) == 1  # "idle", once long enough ago
    assert ("telegram", "idle") not in [(row[0], row[1]) for row in await holds.all()]


async def test_two_replicas_sweeping_at_once_take_disjoint_chats(store: MemoryStore, memory_db: str) -> None:
    for i in range(20):
        await store.inbox.add("telegram", f"c{i}", f"u{i}", "hi")
        if i % 2:
            assert await store.chat_holds.take("telegram", f"c{i}", "dead", RAN_OUT)
    other = await open_store(memory_db, warm_text=False)  # a second replica: its own connections
    try:
        first, second = await asyncio.gather(
            store.chat_holds.take_waiting(["telegram"], "r1", LEASE),
            other.chat_holds.take_waiting(["telegram"], "r2", LEASE),
        )
    finally:
        await other.close()
    chats = [row[1] for row in [*first, *second]]
    assert sorted(chats) == sorted(f"c{i}" for i in range(20))  # each taken once
    holders = {row[1]: row[2] for row in await store.chat_holds.all()}
    assert all(holders[row[1]] == "r1" for row in first) and all(holders[row[1]] == "r2" for row in second)


# --------------------------------------------------------------------------- PostgreSQL: inserts in flight


@pytest.fixture
async def two_replicas(postgres_url: str) -> AsyncIterator[tuple[Any, Any]]:
    """Two stores on one PostgreSQL database: the replica storing a message, the replica holding its chat."""
    stores = [await open_store(postgres_url, warm_text=False) for _ in range(2)]
    try:
        yield stores[0], stores[1]
    finally:
        for opened in stores:
            await opened.close()


async def _waits_for_the_chat_lock(store: Any, step: asyncio.Task[Any]) -> None:
    """Until ``step`` is blocked on a chat's advisory lock (seen in ``pg_locks``), or done (then it did
    not wait: the caller's assertion says what it did instead). A ceiling, no margin."""
    async with asyncio.timeout(30):
        while not step.done():
            waiting = await store.db.read(
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            )
            if waiting[0][0]:
                return
            await asyncio.sleep(0.01)


async def test_an_earlier_message_committing_late_is_claimed_before_a_later_one(two_replicas) -> None:
    intake, holder = two_replicas
    assert await holder.chat_holds.take("feishu", "oc1", "r1", LEASE) == 1
    async with intake.transaction():  # the earlier message's insert: begun, not committed yet
        earlier = await intake.inbox.add("feishu", "oc1", "ev1", "sent first", 1000)
        later = await holder.inbox.add("feishu", "oc1", "ev2", "sent second", 2000)  # committed at once
        claim = asyncio.create_task(holder.chat_holds.next_message("feishu", "oc1", "r1"))
        await _waits_for_the_chat_lock(holder, claim)
        assert not claim.done(), f"claimed {claim.result()} while an earlier message was being stored"
    claimed = await asyncio.wait_for(claim, 30)  # a ceiling: a claim still blocked fails, not hangs
    assert isinstance(claimed, ClaimedRow) and claimed.id == earlier != later


async def test_a_release_racing_a_message_being_stored_keeps_the_hold(two_replicas) -> None:
    intake, holder = two_replicas
    assert await holder.chat_holds.take("telegram", "7", "r1", LEASE) == 1
    async with intake.transaction():  # another replica stores a message of the chat: not committed yet
        stored = await intake.inbox.add("telegram", "7", "u1", "hello", 1)
        release = asyncio.create_task(holder.chat_holds.release("telegram", "7", "r1"))
        await _waits_for_the_chat_lock(holder, release)
        assert not release.done(), "the hold was let go over a message being stored"
    # the release saw the message: the holder keeps the chat and answers it (a ceiling, not a hang)
    assert not await asyncio.wait_for(release, 30)
    assert await holder.chat_holds.holder("telegram", "7") == "r1"
    claimed = await holder.chat_holds.next_message("telegram", "7", "r1")
    assert isinstance(claimed, ClaimedRow) and claimed.id == stored


async def test_the_answered_mark_claims_the_next_message_or_lets_the_chat_go(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    one = await inbox.add("telegram", "c1", "u1", "one", 10)
    two = await inbox.add("telegram", "c1", "u2", "two", 20)
    assert one is not None and two is not None
    assert await holds.take("telegram", "c1", "r1", LEASE) == 1
    first = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(first, ClaimedRow) and first.id == one
    stale = await holds.answered_then_next(one, "telegram", "c1", "r1", 2)  # not the hold's generation
    assert (stale.marked, stale.next, stale.released) == (False, None, False)
    after = await holds.answered_then_next(one, "telegram", "c1", "r1", 1, None)
    assert after.marked and not after.released
    assert isinstance(after.next, ClaimedRow)
    assert (after.next.id, after.next.message, after.next.generation) == (two, "two", 1)
    young = await inbox.add("telegram", "c1", "u3", "three", 30)
    settling = await holds.answered_then_next(two, "telegram", "c1", "r1", 1, None, 60.0)
    assert settling.marked and isinstance(settling.next, float) and 0 < settling.next <= 60.0
    assert await holds.holder("telegram", "c1") == "r1"  # a message waits: the hold stays
    assert young is not None
    third = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(third, ClaimedRow) and third.id == young
    last = await holds.answered_then_next(young, "telegram", "c1", "r1", 1, "Forbidden")
    assert (last.marked, last.next, last.released) == (True, None, True)
    assert await holds.holder("telegram", "c1") is None  # nothing left: let go in the same step
    assert await inbox.count(answered=False) == 0 and await inbox.unsent(3600) == 1


async def test_a_message_stored_and_its_chat_held_in_one_step(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    stored, generation = await inbox.add_and_hold("telegram", "c1", "u1", "one", 10, VOICE, "r1", LEASE)
    assert stored is not None and generation == 1
    assert await holds.get("telegram", "c1") == ("r1", 1)
    claimed = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(claimed, ClaimedRow)
    assert (claimed.id, claimed.message, claimed.media, claimed.generation) == (stored, "one", VOICE, 1)
    # Another replica stores the chat's next message: stored, not held (r1's lease is live).
    second, held = await inbox.add_and_hold("telegram", "c1", "u2", "two", 20, "", "r2", LEASE)
    assert second is not None and held is None
    assert await holds.get("telegram", "c1") == ("r1", 1)
    # The holder's own intake keeps its hold and its generation; a redelivery stores and holds nothing.
    assert (await inbox.add_and_hold("telegram", "c1", "u3", "three", 30, "", "r1", LEASE))[1] == 1
    assert await inbox.add_and_hold("telegram", "c1", "u1", "one", 10, "", "r2", LEASE) == (None, None)
    assert await holds.get("telegram", "c1") == ("r1", 1)
    assert await inbox.count(answered=False) == 3
    # Let go, the chat is held again by whoever stores its next message: a new generation.
    for inbox_id in [stored, second]:
        assert await holds.answered(inbox_id, "telegram", "c1", "r1", 1)
    third = await holds.next_message("telegram", "c1", "r1")
    assert isinstance(third, ClaimedRow)
    after = await holds.answered_then_next(third.id, "telegram", "c1", "r1", 1)
    assert after.released
    fourth, taken = await inbox.add_and_hold("telegram", "c1", "u4", "four", 40, "", "r2", LEASE)
    assert fourth is not None and taken == 2 and await holds.get("telegram", "c1") == ("r2", 2)


async def test_a_release_racing_a_message_stored_and_held_keeps_a_hold(two_replicas) -> None:
    intake, holder = two_replicas
    assert await holder.chat_holds.take("telegram", "7", "r1", LEASE) == 1
    async with intake.transaction():  # r2 stores a message of the chat and tries its hold: not committed
        stored, held = await intake.inbox.add_and_hold("telegram", "7", "u1", "hello", 1, "", "r2", LEASE)
        release = asyncio.create_task(holder.chat_holds.release("telegram", "7", "r1"))
        await _waits_for_the_chat_lock(holder, release)
        assert not release.done(), "the hold was let go over a message being stored"
    # r1 keeps the chat and answers the message (a ceiling: a release still blocked fails, not hangs)
    assert held is None and not await asyncio.wait_for(release, 30)
    claimed = await holder.chat_holds.next_message("telegram", "7", "r1")
    assert isinstance(claimed, ClaimedRow) and claimed.id == stored


async def test_a_claim_reads_the_chats_current_history_with_it(store: MemoryStore) -> None:
    holds, sessions = store.chat_holds, store.sessions
    one, _ = await store.inbox.add_and_hold("telegram", "c1", "u1", "one", 10, "", "r1", LEASE)
    two = await store.inbox.add("telegram", "c1", "u2", "two", 20)
    assert one is not None and two is not None
    bare = await holds.next_message("telegram", "c1", "r1")  # no history asked: none read
    assert isinstance(bare, ClaimedRow) and (bare.session, bare.history) == (None, None)
    first = await holds.next_message("telegram", "c1", "r1", history=3)
    assert isinstance(first, ClaimedRow) and first.session == 1 and parse_history(first.history) == []
    for n, text in enumerate(["old", "hi", "hello", "how are you", "fine"]):
        await sessions.append("telegram:c1", 1, "user" if n % 2 else "assistant", text, "2026-01-01 00:00:00")
    await sessions.append("telegram:c2", 1, "user", "another chat's", "2026-01-01 00:00:00")
    after = await holds.answered_then_next(one, "telegram", "c1", "r1", 1, history=3)  # mark, claim "two"
    assert isinstance(after.next, ClaimedRow) and after.next.id == two and after.next.session == 1
    assert parse_history(after.next.history) == [
        ("assistant", "fine"),
        ("user", "how are you"),
        ("assistant", "hello"),
    ]
    await sessions.start("telegram:c1", 2, "2026-01-01 00:00:01")  # /new: the next claim sees session 2
    await sessions.append("telegram:c1", 2, "user", "new start", "2026-01-01 00:00:02")
    again = await holds.next_message("telegram", "c1", "r1", history=3)
    assert isinstance(again, ClaimedRow) and again.id == two and again.session == 2
    assert parse_history(again.history) == [("user", "new start")]
    last = await holds.answered_then_next(two, "telegram", "c1", "r1", 1, history=3)
    assert last.released and last.next is None


async def test_an_answered_step_racing_a_message_being_stored_keeps_the_hold_and_claims_it(
    two_replicas,
) -> None:
    """The answered step takes the chat's lock inside its statement (schema 25, ``chat_next.py``): a
    message whose insert held the lock's shared side is seen once that insert commits — the hold is not
    let go over it — and, though newer than the statement's own snapshot, it is claimed by the step's
    claim after the lock (schema 27, ``tierclaw_chat_claim``; until then the step returned a wait and the
    next claim took it, a commit more)."""
    intake, holder = two_replicas
    first, generation, claimed = await holder.inbox.add_hold_and_claim(
        "telegram", "7", "u1", "one", 1, "", "r1", LEASE
    )
    assert first is not None and generation == 1 and isinstance(claimed, ClaimedRow)
    async with intake.transaction():  # another replica stores the chat's next message: not committed yet
        stored = await intake.inbox.add("telegram", "7", "u2", "two", 2)
        step = asyncio.create_task(holder.chat_holds.answered_then_next(first, "telegram", "7", "r1", 1))
        await _waits_for_the_chat_lock(holder, step)
        assert not step.done(), "the answered step decided before a message being stored committed"
    after = await asyncio.wait_for(step, 30)  # a ceiling: a step still blocked fails, not hangs
    assert after.marked and not after.released and isinstance(after.next, ClaimedRow)
    assert (after.next.id, after.next.message, after.next.generation) == (stored, "two", 1)
    assert await holder.chat_holds.holder("telegram", "7") == "r1"
    assert await holder.inbox.in_flight("r1") == 1  # claimed: its send intent is in the row


async def test_a_replica_stopping_on_purpose_leaves_no_claim_to_wait_for(store: MemoryStore) -> None:
    """A graceful stop drops the holds and forgets the claims it will never mark (gateway/inbox.py
    ``drop_holds``): the next holder's claim shows nothing in flight, so it does not wait a lease."""
    holds, inbox = store.chat_holds, store.inbox
    one = await inbox.add("telegram", "c1", "u1", "one", 1)
    assert one is not None and await holds.take("telegram", "c1", "r1", LEASE) == 1
    assert isinstance(await holds.next_message("telegram", "c1", "r1"), ClaimedRow)
    assert await inbox.in_flight("r1") == 1
    assert await inbox.forget_claims("r1") == 1 and await holds.drop("r1") == 1
    assert await inbox.in_flight("r1") == 0
    [(_, _, previous)] = await holds.take_waiting(["telegram"], "r2", LEASE)
    taken = await holds.next_message("telegram", "c1", "r2")
    assert previous is None and isinstance(taken, ClaimedRow) and (taken.id, taken.sent_by) == (one, None)
