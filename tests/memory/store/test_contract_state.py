"""The store contract, part 2: events, the extraction buffer, sessions, job runs, scratchpads, the inbox,
kept turns, transactions and unique keys, run against both stores (``store`` fixture)."""

from __future__ import annotations

import pytest

from memory.records import Episode
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"
T1 = "2026-01-03 00:00:00"


async def _event(store: MemoryStore, owner: str, day: str, summary: str, **kw: object) -> int:
    return await store.events.add(
        owner,
        day,
        summary,
        search_text=tokenizer.index_text(summary),
        channel="telegram",
        sender_id="1",
        raw_tokens=10,
        source_ref=None,
        **kw,  # type: ignore[arg-type]
    )


async def test_events_find_compress_and_owners(store: MemoryStore) -> None:
    e1 = await _event(store, "alice", "2026-01-01", "Planned the trip to Kyoto", span=(T0, T1))
    e2 = await _event(
        store,
        "alice",
        "2026-01-02",
        "Booked the Kyoto hotel",
        episode=Episode(goal="trip", entities=["Kyoto"]),
    )
    await _event(store, "bob", "2026-01-02", "Kyoto again")
    await store.events.link_facts("alice", e2, [3, 1, 3])
    found = await store.events.find(
        "alice", since=None, until=None, terms=("kyoto",), include_compressed=False, source_ref=None, limit=5
    )
    assert sorted(e.id for e in found) == [e1, e2]
    by_date = await store.events.find(
        "alice",
        since="2026-01-02",
        until=None,
        terms=None,
        include_compressed=False,
        source_ref=None,
        limit=5,
    )
    assert [e.id for e in by_date] == [e2] and by_date[0].fact_ids == [1, 3]
    assert by_date[0].entities == ["Kyoto"] and by_date[0].started_at  # "now" from the store's clock
    assert found[0].started_at in (T0, by_date[0].started_at)
    assert await store.events.owners_with_uncompressed("2026-01-01") == ["alice"]
    assert [e.id for e in await store.events.uncompressed("alice", "2026-01-05")] == [e1, e2]
    assert await store.events.mark_compressed("alice", [e1]) == 1
    assert await store.events.count("alice") == 2 and await store.events.count(None) == 3
    assert await store.events.owners() == ["alice", "bob"] and await store.events.owners("bob") == ["bob"]
    assert set(await store.events.last_activity()) == {"alice", "bob"}


async def test_the_buffer_queue_with_retries_and_dead_letters(store: MemoryStore) -> None:
    ids = [
        await store.buffer.append("alice", "telegram", "c1", "1", role, text, 5, T0)
        for role, text in (("user", "hi"), ("assistant", "hello"))
    ]
    assert [row[0] for row in await store.buffer.oldest("alice", None)] == ids
    assert await store.buffer.pending_tokens("alice") == 10
    assert await store.buffer.backlog(None) == [("alice", T0, None, 10, 2)]
    await store.buffer.mark_failed(ids, 3, T1, True, "model down")
    assert await store.buffer.attempts(ids) == 3
    assert await store.buffer.count("alice", dead=True) == 2 and await store.buffer.count(dead=False) == 0
    dead = await store.browse.buffered("alice", dead=True)
    assert [(d.id, d.last_error) for d in dead] == [(ids[0], "model down"), (ids[1], "model down")]
    assert await store.buffer.requeue_dead("alice") == 2
    assert await store.buffer.oldest("alice", "2000-01-01 00:00:00") != []
    assert await store.buffer.remove(ids) == 2 and await store.buffer.remove(ids) == 0


async def test_sessions_jobs_and_scratchpads(store: MemoryStore) -> None:
    assert await store.sessions.current("tg:1") is None
    await store.sessions.start("tg:1", 1, T0)
    for i in range(5):
        await store.sessions.append("tg:1", 1, "user", f"m{i}", T0)
    await store.sessions.keep_newest("tg:1", 1, 2)
    assert await store.sessions.recent("tg:1", 1, 10) == [("user", "m4"), ("user", "m3")]
    await store.sessions.start("tg:1", 2, T1)
    assert await store.sessions.current("tg:1") == 2 and await store.sessions.recent("tg:1", 1, 10) == []
    await store.jobs.record("decay", T0, "ok")
    await store.jobs.record("decay", T1, "failed")
    assert await store.jobs.last_run("decay") == T1 and await store.jobs.last_run("other") is None
    assert await store.jobs.all() == [("decay", T1, "failed")]
    await store.scratchpads.put("alice", "# Focus\n- 发布 🚀", T0)
    await store.scratchpads.put("alice", "# Focus\n- 发布 🚀 v2", T1)
    assert await store.scratchpads.get("alice") == ("# Focus\n- 发布 🚀 v2", T1)
    assert await store.scratchpads.clear("alice") is True and await store.scratchpads.clear("alice") is False


async def test_inbox_delivery_key_is_unique_per_channel(store: MemoryStore) -> None:
    first = await store.inbox.add("telegram", "c1", "update-1", "hi", T0)
    assert first is not None
    assert await store.inbox.add("telegram", "c1", "update-1", "hi again", T0) is None  # a redelivery
    other = await store.inbox.add("feishu", "c1", "update-1", "hi", T0)
    unkeyed = [await store.inbox.add("terminal", "c1", "", "x", T0) for _ in range(2)]
    assert other is not None and None not in unkeyed and len(set(unkeyed)) == 2
    assert [row[0] for row in await store.inbox.pending()] == [first, other, *unkeyed]
    await store.inbox.answer(first, T1, "send failed")
    await store.inbox.answer(first, "2027-01-01 00:00:00")  # again: harmless, first answer kept
    assert await store.inbox.count(answered=True) == 1 and await store.inbox.count(answered=False) == 3
    assert await store.inbox.unsent(T0) == 1
    assert await store.inbox.prune("2026-06-01 00:00:00") == 1


async def test_inbox_keeps_where_a_streamed_reply_is_written(store: MemoryStore) -> None:
    first = await store.inbox.add("telegram", "c1", "update-1", "hi", T0)
    second = await store.inbox.add("telegram", "c1", "update-2", "and you?", T0)
    assert first is not None and second is not None
    assert await store.inbox.reply_handle(first) == ""  # nothing written yet
    await store.inbox.set_reply_handle(first, '{"messages": [101]}')
    await store.inbox.set_reply_handle(first, '{"messages": [101, 102]}')  # the reply went on
    assert await store.inbox.reply_handle(first) == '{"messages": [101, 102]}'
    assert await store.inbox.reply_handle(second) == "" and await store.inbox.reply_handle(999) == ""


async def test_turns_are_kept_searched_and_embedded(store: MemoryStore) -> None:
    texts = ["When did you go to Kyoto?", "Yesterday, it was great", "Kyoto temples are old"]
    ids = []
    for i, text in enumerate(texts):
        ids.append(
            await store.turns.add(
                "alice",
                channel="telegram",
                chat_id="c1",
                role="user" if i % 2 == 0 else "assistant",
                content=text,
                search_text=tokenizer.index_text(text),
                at=f"2026-01-0{i + 1} 00:00:00",
            )
        )
    hits = await store.turns.matches("alice", ["kyoto"], since=None, until=None, limit=5)
    assert sorted(h[0].id for h in hits) == [ids[0], ids[2]] and all(h[1] > 0 for h in hits)
    window = await store.turns.matches("alice", ["kyoto"], since="2026-01-02 00:00:00", until=None, limit=5)
    assert [h[0].id for h in window] == [ids[2]]
    assert await store.turns.matches("bob", ["kyoto"], since=None, until=None, limit=5) == []
    assert await store.turns.document_frequencies(["kyoto", "zzz"]) == {"kyoto": 2, "zzz": 0}
    assert await store.turns.total() == 3 and await store.turns.count("alice") == 3
    following = await store.turns.following("alice", [ids[0]])
    assert following[ids[0]][0].id == ids[1]
    assert [t.id for t in await store.turns.neighbours("alice", hits[0][0], 5, 5)] == ids
    assert (await store.turns.last_in_chat("alice", "telegram", "c1")).id == ids[2]  # type: ignore[union-attr]
    assert [t.id for t in await store.turns.page("alice", ids[0], 10)] == ids[1:]
    assert [t.id for t in await store.turns.by_ids("alice", ids[:1])] == ids[:1]
    missing = await store.turns.missing_vectors("m1")
    assert missing[1] == (ids[1], "alice", "When did you go to Kyoto?\nYesterday, it was great")
    assert await store.turns.set_vectors("m1", [(ids[1], b"v")]) == 1
    assert await store.turns.count_missing_vectors("m1") == 2
    assert await store.turns.vectors("alice", "m1") == [(ids[1], b"v")]
    assert [row[0].id for row in await store.turns.indexed("alice", ids[:2])] == ids[:2]
    assert await store.turns.prune("2026-01-02 00:00:00") == 1


async def test_a_failed_transaction_leaves_nothing(store: MemoryStore) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        async with store.transaction():
            await store.jobs.record("decay", T0, "ok")
            await store.inbox.add("telegram", "c1", "k1", "hi", T0)
            await store.scratchpads.put("alice", "note", T0)
            raise RuntimeError("boom")
    assert await store.jobs.all() == [] and await store.inbox.count(answered=False) == 0
    assert await store.scratchpads.get("alice") is None
    async with store.transaction():
        await store.jobs.record("decay", T0, "ok")
        assert await store.jobs.last_run("decay") == T0  # a read inside sees the unit's own write
    assert await store.jobs.last_run("decay") == T0


async def test_transactions_do_not_nest(store: MemoryStore) -> None:
    async with store.transaction():
        with pytest.raises(RuntimeError, match="already open"):
            async with store.transaction():
                pass


async def test_a_nul_in_any_part_is_refused(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="NUL"):
        await store.inbox.add("telegram", "c1", "k", "a\x00b", T0)
    with pytest.raises(ValueError, match="NUL"):
        await store.scratchpads.put("alice", "\x00", T0)
    assert await store.inbox.count(answered=False) == 0 and await store.scratchpads.get("alice") is None


async def test_another_writers_change_is_told_and_its_own_is_not(store: MemoryStore, memory_db: str) -> None:
    from memory.records import Fact
    from memory.store import NewRow
    from memory.store.open import open_store

    told: list[tuple[str, str | None, int]] = []
    for kind in ("memories", "vectors", "session"):
        store.changes.listen(kind, lambda key, delta, kind=kind: told.append((kind, key, delta)))
    await store.memories.insert("bob", Fact(content="own"), NewRow("own", "own", T0))
    await store.changes.refresh(force=True)
    assert told == []  # this store's own writes: its caches follow them in place
    other = await open_store(memory_db, warm_text=False)
    try:
        await other.jobs.record("x", T0, "ok")
        await other.buffer.append("alice", "telegram", "c1", "1", "user", "hi", 1, T0)
        new_id = await other.memories.insert("alice", Fact(content="tea"), NewRow("tea", "tea", T0))
        await other.sessions.start("telegram:c1", 2, T0)
        await other.vectors.set("m", [(new_id, "tea", b"\0\0\0\0")])
    finally:
        await other.close()
    await store.changes.refresh(force=True)
    assert sorted(told) == [("memories", "alice", 1), ("session", "telegram:c1", 0), ("vectors", "alice", 0)]
    told.clear()
    await store.changes.refresh(force=True)
    assert told == []  # told once
