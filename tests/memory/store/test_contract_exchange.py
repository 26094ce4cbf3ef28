"""The store contract for one exchange written at once (``memory/store/exchange.py``): the session, the kept
turns, the extraction buffer and the owner's due time, on both stores (``store`` fixture) — alone, or with
its message's answered-mark and the chat's next claim (``chat_holds.answered_then_next``)."""

from __future__ import annotations

from memory.clock import from_db, utcnow
from memory.store.claim_rows import ClaimedRow, parse_history
from memory.store.exchange import Exchange
from memory.store.protocol import MemoryStore
from tests.memory.store.exchanges import T0, exchange

BUDGET = {"token_budget": 1000, "quiet_gap_s": 3600.0}


def _exchange(owner: str, *said: tuple[str, str], keep: bool = True, tokens: int = 5) -> Exchange:
    return exchange(owner, said, keep=keep, tokens=tokens)


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


async def test_the_exchange_goes_with_its_answered_mark_and_the_next_claim_sees_it(
    store: MemoryStore,
) -> None:
    # Two commits a message (issue 38, item 5): the intake, then exchange + mark + next claim in one step.
    one, generation, claim = await store.inbox.add_hold_and_claim(
        "telegram", "42", "u1", "hi", 1, "", "r1", 60.0
    )
    assert isinstance(claim, ClaimedRow) and generation == 1 and claim.lease_left_s == 60.0
    assert await store.inbox.in_flight("r1") == 1  # the intake's claim is the send intent
    two = await store.inbox.add("telegram", "42", "u2", "and you?", 2)
    assert one is not None and two is not None
    said = (("user", "hi"), ("assistant", "hello"))
    prepared = store.exchange.prepare(_exchange("erin", *said), **BUDGET)
    after = await store.chat_holds.answered_then_next(
        one, "telegram", "42", "r1", 1, history=5, exchange=prepared
    )
    assert after.marked and not after.released and after.due_now is False  # 10 tokens of 1,000
    nxt = after.next
    assert isinstance(nxt, ClaimedRow) and nxt.id == two and nxt.session == 1
    # The history read with the claim holds the exchange written in the same step.
    assert parse_history(nxt.history, nxt.written) == [("assistant", "hello"), ("user", "hi")]
    assert nxt.lease_left_s is not None and 0 < nxt.lease_left_s <= 60.0
    assert (
        await store.turns.count("erin") == 2 and len(await store.buffer.oldest("erin", due_only=False)) == 2
    )
    assert await store.sessions.recent("telegram:42", 1, 10) == [("assistant", "hello"), ("user", "hi")]
    assert await store.inbox.in_flight("r1") == 1  # "two" now
    # A stale mark (the chat changed hands) writes nothing: the chat's new holder answers the message
    # and writes its exchange, so one message leaves one exchange.
    late = store.exchange.prepare(_exchange("erin", ("user", "and you?")), **BUDGET)
    stale = await store.chat_holds.answered_then_next(two, "telegram", "42", "r1", 7, exchange=late)
    assert not stale.marked and not stale.wrote and await store.turns.count("erin") == 2
    last = await store.chat_holds.answered_then_next(two, "telegram", "42", "r1", 1)
    assert last.marked and last.released and await store.inbox.in_flight("r1") == 0


async def test_a_mark_tried_again_after_its_commit_went_through_writes_nothing_twice(
    store: MemoryStore,
) -> None:
    # The first step commits and its answer is lost with the connection; the worker tries it again.
    one, _, claim = await store.inbox.add_hold_and_claim("telegram", "42", "u1", "hi", 1, "", "r1", 60.0)
    two = await store.inbox.add("telegram", "42", "u2", "and you?", 2)
    assert one is not None and two is not None and isinstance(claim, ClaimedRow)
    prepared = store.exchange.prepare(_exchange("gus", ("user", "hi"), ("assistant", "hello")), **BUDGET)
    first = await store.chat_holds.answered_then_next(
        one, "telegram", "42", "r1", 1, history=5, exchange=prepared
    )
    again = await store.chat_holds.answered_then_next(
        one, "telegram", "42", "r1", 1, history=5, exchange=prepared
    )
    assert first.marked and first.wrote and again.marked and not again.wrote  # success, nothing written
    assert await store.turns.count("gus") == 2 and len(await store.buffer.oldest("gus", due_only=False)) == 2
    assert await store.sessions.recent("telegram:42", 1, 10) == [("assistant", "hello"), ("user", "hi")]
    # The retry claims again what the first claimed, and says nobody else claimed it before.
    assert isinstance(first.next, ClaimedRow) and isinstance(again.next, ClaimedRow)
    assert again.next.id == first.next.id == two and again.next.sent_by is None
    # Its history reads the exchange from the table now: nothing handed back to put in front of it.
    assert again.next.written == () and parse_history(again.next.history, again.next.written) == [
        ("assistant", "hello"),
        ("user", "hi"),
    ]
    assert await store.inbox.in_flight("r1") == 1
    # The last message: the first step lets the chat go; its retry still reports the mark.
    last = store.exchange.prepare(_exchange("gus", ("user", "and you?"), ("assistant", "fine")), **BUDGET)
    done = await store.chat_holds.answered_then_next(two, "telegram", "42", "r1", 1, exchange=last)
    retried = await store.chat_holds.answered_then_next(two, "telegram", "42", "r1", 1, exchange=last)
    assert done.marked and done.released and retried.marked and not retried.wrote and retried.next is None
    assert await store.turns.count("gus") == 4 and await store.chat_holds.holder("telegram", "42") is None
    # Another replica's mark of a message this one never claimed is no retry of its own.
    other = await store.chat_holds.answered_then_next(two, "telegram", "42", "r2", 1, exchange=last)
    assert not other.marked and await store.turns.count("gus") == 4


async def test_an_exchange_reaching_the_budget_with_its_mark_is_due_now(store: MemoryStore) -> None:
    one, _, claim = await store.inbox.add_hold_and_claim("telegram", "42", "u1", "hi", 1, "", "r1", 60.0)
    assert one is not None and isinstance(claim, ClaimedRow)
    prepared = store.exchange.prepare(
        _exchange("finn", ("user", "hi"), tokens=600), token_budget=500, quiet_gap_s=60
    )
    after = await store.chat_holds.answered_then_next(one, "telegram", "42", "r1", 1, exchange=prepared)
    assert after.marked and after.released and after.due_now is True


async def test_an_intake_that_does_not_claim_records_no_claimant(store: MemoryStore) -> None:
    # r1 holds the chat: r2 stores a message of it, takes no hold and claims nothing.
    assert await store.chat_holds.take("telegram", "42", "r1", 60.0) == 1
    stored, held, claim = await store.inbox.add_hold_and_claim(
        "telegram", "42", "u1", "hi", 1, "", "r2", 60.0
    )
    assert stored is not None and held is None and claim is None
    assert await store.inbox.in_flight("r2") == 0 and await store.inbox.in_flight("r1") == 0
    claimed = await store.chat_holds.next_message("telegram", "42", "r1")
    assert isinstance(claimed, ClaimedRow) and claimed.sent_by is None  # nobody claimed it before
    # A message behind an unanswered one is not claimed by its intake either.
    await store.inbox.add_hold_and_claim("telegram", "42", "u2", "again", 2, "", "r1", 60.0)
    assert await store.inbox.in_flight("r1") == 1  # "hi" alone
    # A message with a reorder window to wait out is not claimed by its intake.
    waiting = await store.inbox.add_hold_and_claim("telegram", "43", "u3", "x", 3, "", "r1", 60.0, 0, 5.0)
    assert isinstance(waiting[2], float) and await store.inbox.in_flight("r1") == 1
