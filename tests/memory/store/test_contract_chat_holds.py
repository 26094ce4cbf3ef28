"""The store contract, chat holds (``memory/store/chat_holds.py``, docs/scale-out.md "The message path"):
one replica holds a chat at a time, lets it go only when nothing of it is waiting, claims the chat's
messages oldest first, and a hold whose lease ran out is taken over — against both stores (``store``)."""

from __future__ import annotations

import asyncio

from memory.store.open import open_store
from memory.store.protocol import MemoryStore

PAST = "2026-01-01 00:00:00"
NOW = "2026-01-02 00:00:00"
LATER = "2026-01-02 00:10:00"
MUCH_LATER = "2026-01-03 00:00:00"


async def test_a_chat_is_held_by_one_replica_until_its_lease_runs_out(store: MemoryStore) -> None:
    holds = store.chat_holds
    assert await holds.take("telegram", "c1", "r1", NOW, LATER)
    assert not await holds.take("telegram", "c1", "r2", NOW, LATER)  # r1's lease is live
    assert await holds.take("telegram", "c1", "r1", NOW, LATER)  # the holder again: extended
    assert await holds.take("telegram", "c2", "r2", NOW, LATER)  # another chat
    assert await holds.holder("telegram", "c1") == "r1"
    assert await holds.take("telegram", "c1", "r2", MUCH_LATER, "2026-01-03 00:10:00")  # r1's ran out
    assert await holds.holder("telegram", "c1") == "r2"
    assert not await holds.take("telegram", "c2", "r3", NOW, LATER)
    assert await holds.take("telegram", "c2", "r3", NOW, LATER, force=True)  # one process owns SQLite


async def test_of_two_replicas_racing_for_a_chat_one_gets_it(store: MemoryStore) -> None:
    results = await asyncio.gather(
        *(store.chat_holds.take("telegram", "c1", f"r{i}", NOW, LATER) for i in range(6))
    )
    assert sorted(results) == [False] * 5 + [True]


async def test_release_is_refused_while_a_message_of_the_chat_waits(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    assert await holds.take("telegram", "c1", "r1", NOW, LATER)
    first = await inbox.add("telegram", "c1", "u1", "one", NOW)
    await inbox.add("telegram", "c2", "u2", "another chat's", NOW)
    assert first is not None
    assert not await holds.release("telegram", "c1", "r1")  # "one" waits
    await inbox.answer(first, NOW)
    assert not await holds.release("telegram", "c1", "r2")  # not r2's to release
    assert await holds.release("telegram", "c1", "r1")  # nothing of c1 waits now
    assert await holds.holder("telegram", "c1") is None


async def test_the_holder_claims_the_chats_messages_oldest_first_whoever_stored_them(
    store: MemoryStore,
) -> None:
    holds, inbox = store.chat_holds, store.inbox
    one = await inbox.add("telegram", "c1", "u1", "one", NOW)
    await inbox.add("telegram", "c2", "u2", "other chat", NOW)
    two = await inbox.add("telegram", "c1", "u3", "two", LATER)
    assert await holds.next_message("telegram", "c1", "r1", LATER) is None  # r1 does not hold c1
    assert await holds.take("telegram", "c1", "r1", NOW, LATER)
    assert await holds.next_message("telegram", "c1", "r1", LATER) == (one, "one", NOW, "")
    assert await holds.next_message("telegram", "c1", "r1", LATER) == (one, "one", NOW, "")  # until answered
    assert one is not None and two is not None
    await inbox.answer(one, NOW)
    assert await holds.next_message("telegram", "c1", "r1", LATER) == (two, "two", LATER, "")
    await inbox.answer(two, LATER)
    assert await holds.next_message("telegram", "c1", "r1", LATER) is None


async def test_renewal_keeps_only_the_holders_own_chats(store: MemoryStore) -> None:
    holds = store.chat_holds
    assert await holds.take("telegram", "c1", "r1", NOW, LATER)
    assert await holds.take("telegram", "c2", "r1", NOW, LATER)
    assert await holds.take("telegram", "c3", "r2", NOW, LATER)
    chats = [("telegram", "c1"), ("telegram", "c3")]
    assert await holds.renew("r1", chats, MUCH_LATER) == 1  # c3 is r2's
    leases = {row[1]: row[3] for row in await holds.all()}
    assert leases == {"c1": MUCH_LATER, "c2": LATER, "c3": LATER}
    assert await holds.drop("r1") == 2
    assert [row[1] for row in await holds.all()] == ["c3"]


async def test_waiting_chats_without_a_live_hold_are_taken_over(store: MemoryStore) -> None:
    holds, inbox = store.chat_holds, store.inbox
    for chat in ("dead", "live", "never", "mine"):
        await inbox.add("telegram", chat, f"u-{chat}", "hi", PAST)
    await inbox.add("console", "local", "k1", "not served", PAST)
    assert await holds.take("telegram", "dead", "r9", PAST, PAST)  # r9 died: its lease ran out
    assert await holds.take("telegram", "live", "r1", NOW, LATER)
    assert await holds.take("telegram", "mine", "r2", NOW, LATER)
    assert await holds.take("telegram", "idle", "r9", PAST, PAST)  # nothing of it waits

    taken = await holds.take_waiting(["telegram"], "r2", NOW, LATER)
    assert sorted(taken, key=str) == sorted(
        [("telegram", "dead", "r9"), ("telegram", "never", None)], key=str
    )
    assert await holds.take_waiting(["telegram"], "r3", NOW, LATER) == []  # all held live now
    own = await holds.take_waiting(["telegram"], "r2", NOW, LATER, own=True)  # a restart under "r2"
    assert sorted(row[1] for row in own) == ["dead", "mine", "never"]
    every = await holds.take_waiting(["telegram"], "r5", NOW, LATER, every=True)
    assert len(every) == 4 and {row[2] for row in every} == {"r1", "r2"}
    assert await holds.prune(MUCH_LATER) == 1  # "idle": lease ran out, nothing waiting
    assert ("telegram", "idle") not in [(row[0], row[1]) for row in await holds.all()]


async def test_two_replicas_sweeping_at_once_take_disjoint_chats(store: MemoryStore, memory_db: str) -> None:
    for i in range(20):
        await store.inbox.add("telegram", f"c{i}", f"u{i}", "hi", PAST)
        if i % 2:
            assert await store.chat_holds.take("telegram", f"c{i}", "dead", PAST, PAST)
    other = await open_store(memory_db, warm_text=False)  # a second replica: its own connections
    try:
        first, second = await asyncio.gather(
            store.chat_holds.take_waiting(["telegram"], "r1", NOW, LATER),
            other.chat_holds.take_waiting(["telegram"], "r2", NOW, LATER),
        )
    finally:
        await other.close()
    chats = [row[1] for row in [*first, *second]]
    assert sorted(chats) == sorted(f"c{i}" for i in range(20))  # each taken once
    holders = {row[1]: row[2] for row in await store.chat_holds.all()}
    assert all(holders[row[1]] == "r1" for row in first) and all(holders[row[1]] == "r2" for row in second)
