"""The store contract for one exchange written at once (``memory/store/exchange.py``): the session, the kept
turns, the extraction buffer and the owner's due time, on both stores (``store`` fixture)."""

from __future__ import annotations

from dataclasses import replace

from memory.clock import from_db, utcnow
from memory.store.chat_holds import SendIntent
from memory.store.exchange import Exchange, ExchangeTurn
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"
BUDGET = {"token_budget": 1000, "quiet_gap_s": 3600.0}


def _exchange(owner: str, *said: tuple[str, str], keep: bool = True, tokens: int = 5) -> Exchange:
    return Exchange(
        owner=owner,
        channel="telegram",
        chat_id="42",
        chat_key="telegram:42",
        session=1,
        created_at=T0,
        turns=[
            ExchangeTurn(role, text, "7" if role == "user" else "", tokenizer.index_text(text), tokens)
            for role, text in said
        ],
        keep=keep,
    )


async def test_an_exchange_lands_in_all_four_places(store: MemoryStore) -> None:
    said = (("user", "I moved to Lisbon in May"), ("assistant", "Lisbon! How is it so far?"))
    due_now = await store.exchange.write(_exchange("alice", *said), token_budget=1000, quiet_gap_s=3600)
    assert due_now is False
    assert await store.sessions.recent("telegram:42", 1, 10) == [
        ("assistant", "Lisbon! How is it so far?"),
        ("user", "I moved to Lisbon in May"),
    ]
    turns = await store.turns.page("alice", 0, 10)
    assert [(t.role, t.content, t.created_at) for t in turns] == [
        ("user", "I moved to Lisbon in May", T0),
        ("assistant", "Lisbon! How is it so far?", T0),
    ]
    found = await store.turns.matches("alice", ["lisbon"], since=None, until=None, limit=5)
    assert {t.id for t, _, _ in found} == {t.id for t in turns}  # indexed for search like ``turns.add``
    buffered = await store.buffer.oldest("alice", due_only=False)
    assert [(r[4], r[5], r[6], r[7]) for r in buffered] == [
        ("7", "user", "I moved to Lisbon in May", 5),
        ("", "assistant", "Lisbon! How is it so far?", 5),
    ]
    due = await store.extraction_due.get("alice")
    assert due is not None and due[1] is None  # due in the quiet gap, nobody's claim
    assert (from_db(due[0]) - utcnow()).total_seconds() > 3000  # the server's clock: this machine's


async def test_the_exchange_that_reaches_the_budget_is_due_now(store: MemoryStore) -> None:
    first = _exchange("bob", ("user", "one"), ("assistant", "two"), tokens=4)
    assert await store.exchange.write(first, token_budget=10, quiet_gap_s=3600) is False  # 8 < 10
    second = _exchange("bob", ("user", "three"), tokens=4)
    assert await store.exchange.write(second, token_budget=10, quiet_gap_s=3600) is True  # 12 >= 10
    due = await store.extraction_due.get("bob")
    assert due is not None and (from_db(due[0]) - utcnow()).total_seconds() < 60
    assert len(await store.buffer.oldest("bob", due_only=False)) == 3


async def test_a_claim_on_the_owner_stays_when_an_exchange_pushes_its_due_time(store: MemoryStore) -> None:
    assert await store.extraction_due.claim("carol", "replica-a", 60.0) is not None
    await store.exchange.write(_exchange("carol", ("user", "hello")), token_budget=1000, quiet_gap_s=60)
    due = await store.extraction_due.get("carol")
    assert due is not None and due[1] == "replica-a"


async def test_memory_off_keeps_the_session_alone(store: MemoryStore) -> None:
    said = (("user", "hi"), ("assistant", "hello"))
    assert (
        await store.exchange.write(_exchange("dan", *said, keep=False), token_budget=1, quiet_gap_s=1)
        is False
    )
    assert len(await store.sessions.recent("telegram:42", 1, 10)) == 2
    assert await store.turns.count("dan") == 0
    assert await store.buffer.oldest("dan", due_only=False) == []
    assert await store.extraction_due.get("dan") is None


async def test_the_replys_send_intent_is_recorded_with_its_exchange_only_under_a_live_hold(
    store: MemoryStore,
) -> None:
    # The fence of the reply's send, folded into the exchange written just before it (issue 38, item 5).
    inbox_id, generation = await store.inbox.add_and_hold("telegram", "42", "u1", "hi", 1, "", "r1", 60.0)
    assert inbox_id is not None and generation == 1
    said = (("user", "hi"), ("assistant", "hello"))
    for keep in (True, False):  # memory on and off
        stale = SendIntent(inbox_id, "telegram", "42", "r1", generation + 1, 1.0)  # a generation gone
        await store.exchange.write(replace(_exchange("erin", *said, keep=keep), intent=stale), **BUDGET)
        assert stale.asked_at is None and await store.inbox.in_flight("r1") == 0
        short = SendIntent(inbox_id, "telegram", "42", "r1", generation, 120.0)  # less lease left than that
        await store.exchange.write(replace(_exchange("erin", *said, keep=keep), intent=short), **BUDGET)
        assert short.asked_at is None and await store.inbox.in_flight("r1") == 0
    live = SendIntent(inbox_id, "telegram", "42", "r1", generation, 1.0)
    await store.exchange.write(replace(_exchange("erin", *said), intent=live), **BUDGET)
    assert live.asked_at is not None and await store.inbox.in_flight("r1") == 1
    assert await store.turns.count("erin") == 6  # every exchange was written: the intent gates no write
