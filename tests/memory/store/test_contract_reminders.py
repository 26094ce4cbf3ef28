"""The store contract, reminders: stored with a per-person cap, claimed by one gateway until sent or its
lease runs out (the server's clock on PostgreSQL), each claim a new generation, sent and marked only under
the claim still held at its generation, a repeat moved on to its next run in the statement that marks it
sent; time zones (README "Reminders") — on both stores."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from memory.clock import to_db_fine, utcnow
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from memory.store.reminders import NewReminder


def at(seconds: float) -> str:
    return to_db_fine(utcnow() + timedelta(seconds=seconds))


def reminder(
    owner: str = "alice", due: str | None = None, repeat: str = "", channel: str = "telegram"
) -> NewReminder:
    return NewReminder(owner, channel, "42", "call the dentist", "remind me", "en", "Europe/London",
                       "2026-11-28 09:00", repeat, due or at(-1))  # fmt: skip


async def claim(
    store: MemoryStore, replica: str, lease_s: float = 30.0, channels: tuple[str, ...] = ("telegram",)
) -> list[int]:
    rows, _ = await store.reminders.claim_due(replica, list(channels), at(0), at(lease_s), lease_s)
    return [r.id for r in rows]


async def generation(store: MemoryStore, rid: int) -> int:
    """The generation of the reminder's latest claim."""
    row = await store.reminders.get("alice", rid)
    assert row is not None
    return row.generation


async def test_a_person_cannot_store_more_than_the_cap(store: MemoryStore) -> None:
    rows = store.reminders
    ids = [await rows.add(reminder(), at(0), 3) for _ in range(4)]
    assert None not in ids[:3] and ids[3] is None
    assert await rows.count("alice", "pending") == 3
    assert await rows.add(reminder("bob"), at(0), 3) is not None  # the cap is per person
    assert await rows.cancel("alice", ids[0], at(0)) and not await rows.cancel("bob", ids[1], at(0))
    assert await rows.add(reminder(), at(0), 3) is not None  # cancelled ones do not count


async def test_a_due_reminder_is_claimed_once_and_marked_only_by_its_holder(store: MemoryStore) -> None:
    rows = store.reminders
    due = await rows.add(reminder(), at(0), 10)
    later = await rows.add(reminder(due=at(3600)), at(0), 10)
    other_channel = await rows.add(reminder(channel="feishu"), at(0), 10)
    assert await claim(store, "r1") == [due]
    assert await claim(store, "r2") == []  # held by r1; the later one is not due; feishu is not r2's
    assert not await rows.sent(due, "r2", 1, at(0), None)
    assert await rows.sent(due, "r1", 1, at(0), None)
    got = await rows.get("alice", due)
    assert got is not None and got.status == "delivered" and got.sent_count == 1 and got.claimed_by is None
    assert await claim(store, "r2", channels=("feishu",)) == [other_channel]
    assert (await rows.get("alice", later)).status == "pending"  # type: ignore[union-attr]
    wait = await rows.next_try(["telegram"], at(0))
    assert wait is not None and 3500 < wait <= 3600


async def test_a_dead_holders_reminder_is_taken_over_after_its_lease(store: MemoryStore) -> None:
    rows = store.reminders
    rid = await rows.add(reminder(), at(0), 10)
    assert await claim(store, "r1", lease_s=0.3) == [rid]
    deadline = time.monotonic() + 60  # a ceiling: the lease is 0.3 s
    taken: list[int] = []
    while not taken and time.monotonic() < deadline:  # until r1's lease runs out (the database's clock)
        taken = await claim(store, "r2")
        await asyncio.sleep(0.05)
    assert taken == [rid] and await generation(store, rid) == 2
    # r1 wakes: it may not send (its fence), nor mark
    assert not await rows.extend(rid, "r1", 1, at(30), 30)
    assert not await rows.sent(rid, "r1", 1, at(0), None)  # r1 lost it: its late mark changes nothing
    assert await rows.extend(rid, "r2", 2, at(30), 30)  # r2's fence: its claim stands
    assert await rows.sent(rid, "r2", 2, at(0), None)
    assert not await rows.extend(rid, "r2", 2, at(30), 30)  # marked: nothing more to send


async def test_a_claim_taken_again_by_the_same_gateway_fences_its_older_send(store: MemoryStore) -> None:
    # r1 claims, stalls past its lease; r1's own next round claims the reminder again: the stalled
    # send's generation is not current any more, so it neither sends nor marks — only the new one does.
    rows = store.reminders
    rid = await rows.add(reminder(), at(0), 10)
    assert await claim(store, "r1", lease_s=-1) == [rid]  # a lease that already ran out
    assert await claim(store, "r1") == [rid] and await generation(store, rid) == 2
    assert not await rows.extend(rid, "r1", 1, at(30), 30)
    assert not await rows.retry_later(rid, "r1", 1, 1, at(60), "TimedOut", at(0))
    assert not await rows.give_up(rid, "r1", 1, "failed", "Forbidden", at(0))
    assert await rows.extend(rid, "r1", 2, at(30), 30) and await rows.sent(rid, "r1", 2, at(0), None)


async def test_a_repeat_moves_on_in_the_statement_that_marks_it_sent(store: MemoryStore) -> None:
    rows = store.reminders
    rid = await rows.add(reminder(repeat="daily"), at(0), 10)
    assert await claim(store, "r1") == [rid]
    assert await rows.sent(rid, "r1", 1, at(0), ("2026-11-29 09:00", at(86400)))
    got = await rows.get("alice", rid)
    assert got is not None and (got.status, got.local_at, got.sent_count) == (
        "pending",
        "2026-11-29 09:00",
        1,
    )
    assert await claim(store, "r1") == []  # its next run is tomorrow


async def test_failures_retry_later_give_up_or_hand_over(store: MemoryStore) -> None:
    rows = store.reminders
    first = await rows.add(reminder(), at(0), 10)
    second = await rows.add(reminder(), at(0), 10)
    assert sorted(await claim(store, "r1")) == [first, second]
    assert await rows.retry_later(first, "r1", 1, 1, at(3600), "TimedOut", at(0))
    assert await rows.give_up(second, "r1", 1, "failed", "Forbidden: bot was blocked", at(0))
    got = await rows.get("alice", first)
    assert got is not None and got.attempts == 1 and got.last_error == "TimedOut" and got.claimed_by is None
    assert (await rows.get("alice", second)).status == "failed"  # type: ignore[union-attr]
    third = await rows.add(reminder(), at(0), 10)
    assert await claim(store, "r1") == [third]
    assert await rows.release("r1") == 1
    assert await claim(store, "r2") == [third]  # handed over at once


async def test_replicas_claiming_at_once_split_the_due_reminders(memory_db: str) -> None:
    stores = [await open_store(memory_db, warm_text=False) for _ in range(3)]
    try:
        made = {await stores[0].reminders.add(reminder(), at(0), 1000) for _ in range(60)}
        taken: list[int] = []
        while len(taken) < len(made):
            rounds = await asyncio.gather(*(claim(s, f"r{i}") for i, s in enumerate(stores)))
            taken += [rid for ids in rounds for rid in ids]
        assert sorted(taken) == sorted(made)  # each once
    finally:
        for opened in stores:
            await opened.close()


async def test_a_persons_time_zone_and_the_pending_reminders_it_moves(store: MemoryStore) -> None:
    rows = store.reminders
    assert await rows.zone("alice") is None
    await rows.set_zone("alice", "Asia/Tokyo", "2026-01-01 00:00:00")
    await rows.set_zone("alice", "Europe/London", "2026-01-02 00:00:00")
    assert await rows.zone("alice") == "Europe/London"
    rid = await rows.add(reminder(due=at(3600)), at(0), 10)
    assert await rows.move_pending("alice", [(rid, "Asia/Tokyo", at(7200))], at(0)) == 1
    got = await rows.get("alice", rid)
    assert got is not None and got.zone == "Asia/Tokyo" and got.local_at == "2026-11-28 09:00"
    assert await rows.latest_chat("alice") == ("telegram", "42")
    assert await rows.purge("alice", rid) and await rows.get("alice", rid) is None
