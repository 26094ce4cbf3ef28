"""The reorder window grows with the lateness the intake sees (``gateway/inbox.py`` ``ReorderWindow``;
docs/scale-out.md, "Platform order"): an earlier message stored more than ``gateway.reorderWindow`` after
a later one of its chat is answered after it with a fixed window, first once the window has grown — and a
window that grew shrinks back, so an idle system waits no more than the setting. Against both stores.

The sleeps here are lower bounds (at least that long passed), never margins: how late a message came is
what the store's clock measured, and the window's decay runs on a clock the test moves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from channels.base import InboundMessage
from gateway.app import inbox_of
from gateway.config.schema import Config
from gateway.inbox import (
    REORDER_HALF_LIFE,
    REORDER_MARGIN,
    REORDER_WINDOW_MOST,
    Claimed,
    DurableInbox,
    ReorderWindow,
)
from memory.engine import MemoryEngine
from memory.store.claim_rows import Arrival
from memory.store.protocol import MemoryStore

pytestmark = pytest.mark.both_stores
LEAST = 0.01  # gateway.reorderWindow here: seconds
LATE = 0.05  # at least this long after the later message, the earlier one is stored


@pytest.fixture
def store(engine: MemoryEngine) -> MemoryStore:
    """The engine's store: a SQLite file, then a fresh PostgreSQL database (``both_stores``)."""
    return engine.store


class Clock:
    """The window's decay clock (``ReorderWindow.clock``), moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _message(chat: str, seq: int) -> InboundMessage:
    return InboundMessage("telegram", chat, "u1", f"m{seq}", delivery_id=f"{chat}-{seq}", sequence=seq)


async def _claim(inbox: DurableInbox, chat: str) -> Claimed | None:
    """The chat's next claim, waiting out the window as the chat's worker does (a ceiling, not a margin)."""
    async with asyncio.timeout(60):
        while True:
            claimed = await inbox.next_message(("telegram", chat))
            if not isinstance(claimed, float):
                return claimed
            await asyncio.sleep(claimed)


def test_the_window_grows_to_the_lateness_seen_is_capped_and_decays_back() -> None:
    clock = Clock()
    window = ReorderWindow(0.3, most=3.0, margin=1.5, half_life=60.0, clock=clock)
    assert window.seconds() == 0.3
    assert not window.observe(0.1)  # inside the window: nothing to grow
    assert window.observe(1.0) and window.seconds() == pytest.approx(1.5)
    assert not window.observe(0.5)  # covered already
    clock.now += 60.0  # one half-life: half the growth is gone
    assert window.seconds() == pytest.approx(0.3 + 1.2 / 2)
    assert window.observe(100.0) and window.seconds() == 3.0  # never past ``most``
    clock.now += 60.0 * 40
    assert window.seconds() == pytest.approx(0.3)  # quiet again: the setting
    # An intake on its way counts while it is (a burst's first messages: none has come back yet).
    fresh = ReorderWindow(0.3, most=3.0, margin=2.0, half_life=60.0, clock=clock)
    token = fresh.began()
    assert fresh.seconds() == 0.3
    clock.now += 0.5
    assert fresh.seconds() == pytest.approx(1.0)  # twice the half second it has been on its way
    assert fresh.ended(token) == pytest.approx(0.5) and fresh.seconds() == pytest.approx(1.0)  # then seen
    off = ReorderWindow(0.0, clock=clock)
    assert not off.observe(5.0) and off.seconds() == 0.0  # gateway.reorderWindow 0: no window at all


def test_where_one_gateway_owns_the_store_its_intakes_own_time_grows_nothing() -> None:
    # SQLite: intakes and claims run one after another on the store's thread — a slow intake delayed
    # every reply and put nothing in order. Lateness seen still grows the window.
    clock = Clock()
    window = ReorderWindow(0.3, most=3.0, margin=2.0, half_life=60.0, clock=clock)
    window.follows_intakes = False
    token = window.began()
    clock.now += 1.0
    assert window.seconds() == 0.3  # not while it is on its way
    assert window.ended(token) == 0.0 and window.seconds() == 0.3  # nor once it is back
    assert window.observe(1.0) and window.seconds() == pytest.approx(2.0)


def test_the_gateway_follows_intakes_only_on_a_shared_database(engine: MemoryEngine, tmp_path: Path) -> None:
    # the setting read from the configuration (``inbox_of``), whichever store the engine runs on
    for url, follows in ((None, False), ("postgresql://replicas@db.example/tierclaw", True)):
        memory: dict[str, object] = {"dbPath": str(tmp_path / "m.db")}
        if url:
            memory["databaseUrl"] = url
        inbox = inbox_of(Config.model_validate({"memory": memory}), engine)
        assert inbox.reorder.follows_intakes is follows


def test_how_the_window_grows_is_configured(engine: MemoryEngine, tmp_path: Path) -> None:
    memory = {"dbPath": str(tmp_path / "m.db")}
    window = inbox_of(Config.model_validate({"memory": memory}), engine).reorder
    assert (window.least, window.margin, window.most, window.half_life) == (
        0.3,
        REORDER_MARGIN,
        REORDER_WINDOW_MOST,
        REORDER_HALF_LIFE,
    )  # the configuration's defaults are the window's own
    grows = {"reorderWindow": "0.2s", "reorderGrowth": 3, "reorderWindowMost": "5s", "reorderHalfLife": "2m"}
    window = inbox_of(Config.model_validate({"memory": memory, "gateway": grows}), engine).reorder
    assert (window.least, window.margin, window.most, window.half_life) == (0.2, 3.0, 5.0, 120.0)
    window.clock = clock = Clock()
    assert window.observe(1.0) and window.seconds() == pytest.approx(3.0)  # 3 × 1 s, under the 5 s cap
    clock.now += 120.0
    assert window.seconds() == pytest.approx(0.2 + (3.0 - 0.2) / 2)  # one half-life later


async def test_an_intake_says_how_late_its_message_came_after_a_later_one(store: MemoryStore) -> None:
    inbox = store.inbox
    first = Arrival()
    assert await inbox.add("telegram", "c1", "u20", "twenty", 20, arrival=first) is not None
    assert first.late_by_s is None  # nothing later of its chat was waiting
    await asyncio.sleep(LATE)
    late = Arrival()
    assert await inbox.add_and_hold("telegram", "c1", "u10", "ten", 10, "", "r1", 60.0, arrival=late) != (
        None,
        None,
    )
    assert late.late_by_s is not None and late.late_by_s >= LATE - 0.002  # the store's clock: ms on SQLite
    claim = Arrival()
    stored, _, _ = await inbox.add_hold_and_claim(
        "telegram", "c1", "u5", "five", 5, "", "r1", 60.0, settle_s=0.3, arrival=claim
    )
    assert stored is not None and claim.late_by_s is not None and claim.late_by_s >= late.late_by_s
    again = Arrival()  # a redelivery stores nothing and says nothing
    assert await inbox.add("telegram", "c1", "u10", "ten", 10, arrival=again) is None
    assert again.late_by_s is None
    for unordered, chat, seq in ((Arrival(), "c1", 0), (Arrival(), "c2", 1)):
        # no platform order, or nothing later in its own chat (c1's messages are another chat's)
        assert await inbox.add("telegram", chat, f"x{chat}{seq}", "x", seq, arrival=unordered) is not None
        assert unordered.late_by_s is None


async def test_an_earlier_message_late_past_the_fixed_window_is_answered_first_once_it_grew(
    store: MemoryStore,
) -> None:
    clock = Clock()
    inbox = DurableInbox(store, "r1", reorder_window=LEAST)
    inbox.reorder.clock = clock
    inbox.reorder.margin = 1000.0  # a lateness of LATE grows the window far past any wait here
    inbox.reorder.most = 3600.0
    # The fixed window's limit: "c0"'s message 20 is claimed once it is LEAST old; 10 arrives after that.
    _, held, wait = await inbox.accept_hold_and_claim(_message("c0", 20))
    assert held and wait == LEAST
    await asyncio.sleep(LATE)
    claimed = await _claim(inbox, "c0")
    assert claimed is not None and claimed.message.sequence == 20  # answered before 10, which is late
    assert inbox.reorder.seconds() == LEAST
    stored, _, _ = await inbox.accept_hold_and_claim(_message("c0", 10))
    assert stored is not None
    grown = inbox.reorder.seconds()
    assert grown >= 10.0  # it came LATE after 20: the window grew to cover that (and more: margin)
    # Now "c1"'s message 40 waits for the grown window, and 30, as late, is claimed first.
    _, held, wait = await inbox.accept_hold_and_claim(_message("c1", 40))
    assert held and wait == grown
    await asyncio.sleep(LATE)  # past the fixed window
    assert isinstance(await inbox.next_message(("telegram", "c1")), float)  # 40 still waits
    await inbox.accept_hold_and_claim(_message("c1", 30))
    clock.now += inbox.reorder.half_life * 60  # the system quietens: the window is LEAST again
    assert inbox.reorder.seconds() == pytest.approx(LEAST)
    first = await _claim(inbox, "c1")
    assert first is not None and first.message.sequence == 30
    marked, after, _, _ = await inbox.answered_then_next(first)
    following = after if isinstance(after, Claimed) else await _claim(inbox, "c1")
    assert marked and following is not None and following.message.sequence == 40
    # An idle chat waits the setting, no more; a channel that delivers in order not at all.
    _, _, wait = await inbox.accept_hold_and_claim(_message("c2", 50))
    assert wait == pytest.approx(LEAST)
    inbox.reorder.observe(1.0)
    inbox.in_order.add("telegram")
    _, _, in_order = await inbox.accept_hold_and_claim(_message("c3", 60))
    assert isinstance(in_order, Claimed)  # claimed at intake: no wait


async def test_a_slow_intake_grows_the_window_at_once_and_a_quick_one_does_not(store: MemoryStore) -> None:
    # Before any message is seen out of order: an intake whose statement took long says an earlier message
    # may be as long on its way inside another intake. The clock moves only where the test moves it.
    clock = Clock()
    inbox = DurableInbox(store, "r1", reorder_window=LEAST)
    inbox.reorder.clock = clock
    real_add = store.inbox.add_hold_and_claim

    async def slow_add(*args: object, **kwargs: object) -> object:
        clock.now += 1.0  # this intake's statement "took" a second
        return await real_add(*args, **kwargs)  # type: ignore[arg-type]

    await inbox.accept_hold_and_claim(_message("c1", 10))  # the clock did not move: took 0 s
    assert inbox.reorder.seconds() == LEAST
    store.inbox.add_hold_and_claim = slow_add  # type: ignore[method-assign, assignment]
    _, _, wait = await inbox.accept_hold_and_claim(_message("c2", 20))
    assert wait == LEAST  # its own wait was set before it was seen slow
    assert inbox.reorder.seconds() == pytest.approx(1.0 * inbox.reorder.margin, rel=0.05)
    # the next message waits it
    _, _, wait = await inbox.accept_hold_and_claim(_message("c3", 30))
    assert isinstance(wait, float) and wait == pytest.approx(inbox.reorder.margin, rel=0.05)
