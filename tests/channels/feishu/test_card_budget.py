"""The app's CardKit update budget (channels/feishu/cardkit.py, ``Budget``): the wait it answers is the one
the limits say — the calls counted in each window, checked against every call of the window."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from channels.feishu.cardkit import Budget


def _wait_by_counting(calls: list[float], now: float, limits: tuple[tuple[float, int], ...]) -> float:
    """What the limits say, from every call in each window."""
    waits = [0.0]
    for window, limit in limits:
        recent = [at for at in calls if now - at < window]
        if len(recent) >= limit:
            waits.append(recent[-limit] + window - now)
    return max(waits)


@given(st.lists(st.floats(min_value=0.0, max_value=5.0), max_size=60), st.floats(0.0, 3.0))
def test_the_wait_is_what_the_limits_say(gaps: list[float], after: float) -> None:
    clock = [0.0]
    budget = Budget(per_second=4, per_minute=12, clock=lambda: clock[0])
    taken: list[float] = []
    for gap in gaps:
        clock[0] += gap
        if budget.take():
            taken.append(clock[0])
    clock[0] += after
    kept = [at for at in taken if clock[0] - at < 60.0]
    assert budget.wait() == _wait_by_counting(kept, clock[0], ((1.0, 4), (60.0, 12)))


def test_a_full_second_waits_for_its_oldest_call_to_leave() -> None:
    clock = [10.0]
    budget = Budget(per_second=2, per_minute=100, clock=lambda: clock[0])
    assert budget.take() and budget.take()
    clock[0] = 10.25
    assert not budget.take() and budget.wait() == 0.75
    clock[0] = 11.0
    assert budget.take()
