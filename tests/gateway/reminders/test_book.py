"""The bad inputs of issue 36 item 5 through ``ReminderBook``: each gets a clear reply in the person's
language and nothing is stored; the per-person cap; time zones set by name, city or offset, keeping the
wall-clock time of waiting reminders (README "Reminders")."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from gateway.reminders.book import Created, Refused, ReminderBook, ReminderSettings, local_of
from gateway.reminders.wording import EN, ZH
from memory.engine import MemoryEngine

NOW = datetime(2027, 1, 29, 2, 0, tzinfo=UTC)  # Friday 29 January, 10:00 in Shanghai


def book(engine: MemoryEngine, **settings: object) -> ReminderBook:
    return ReminderBook(
        engine.store, ReminderSettings(**settings), ZoneInfo("Asia/Shanghai"), clock=lambda: NOW
    )  # type: ignore[arg-type]


async def stored(engine: MemoryEngine) -> int:
    return await engine.store.reminders.count()


@pytest.mark.both_stores
@pytest.mark.parametrize(
    ("said", "reason", "words"),
    [
        ("remind me yesterday at 5pm to pay the bill", "past", EN["past"]),
        ("昨天下午五点提醒我交电费", "past", ZH["past"]),
        ("remind me on the 5th to pay the rent", "ambiguous", "on 5 February"),
        ("5号提醒我交房租", "ambiguous", "2月5日"),
        ("remind me on 30 February to check the pension", "impossible", EN["impossible"]),
        ("2月30日提醒我体检", "impossible", ZH["impossible"]),
        ("remind me to call the bank", "no_time", EN["no_time"]),
        ("提醒我开会", "no_time", ZH["no_time"]),
        ("remind me in 20 years to open the time capsule", "too_far", "10 years"),
    ],
)
async def test_a_bad_request_is_refused_in_the_persons_language_and_nothing_stored(
    engine: MemoryEngine, said: str, reason: str, words: str
) -> None:
    made = await book(engine).create("alice", "telegram", "42", said=said)
    assert isinstance(made, Refused) and made.reason == reason and words in made.said
    assert await stored(engine) == 0


@pytest.mark.both_stores
async def test_a_text_of_100_kb_is_refused_whole(engine: MemoryEngine) -> None:
    made = await book(engine).create(
        "alice", "telegram", "42", said="remind me tomorrow at 9 to " + "x" * 100_000
    )
    assert isinstance(made, Refused) and made.reason == "too_long" and "at most 1000" in made.said
    made_zh = await book(engine).create("alice", "telegram", "42", said="明天上午九点提醒我" + "字" * 100_000)
    assert isinstance(made_zh, Refused) and "最多 1000" in made_zh.said
    assert await stored(engine) == 0


@pytest.mark.both_stores
async def test_ten_thousand_requests_from_one_person_stop_at_the_cap(engine: MemoryEngine) -> None:
    reminders = book(engine, max_per_person=50)
    outcomes = [
        await reminders.create("alice", "telegram", "42", said=f"remind me in {n + 1} minutes to drink water")
        for n in range(200)
    ]
    refused = [o for o in outcomes if isinstance(o, Refused)]
    assert sum(isinstance(o, Created) for o in outcomes) == 50
    assert len(refused) == 150 and all(o.reason == "too_many" for o in refused)
    assert "/reminders cancel N" in refused[0].said
    assert await engine.store.reminders.count("alice", "pending") == 50
    assert isinstance(
        await reminders.create("bob", "telegram", "7", said="remind me in 5 minutes to eat"), Created
    )


@pytest.mark.both_stores
async def test_a_zone_by_name_city_or_offset_and_the_reminders_keep_their_clock_time(
    engine: MemoryEngine,
) -> None:
    reminders = book(engine)
    made = await reminders.create("alice", "telegram", "42", said="remind me tomorrow at 9 to call mum")
    assert isinstance(made, Created) and "(times are Asia/Shanghai; /timezone to change)" in made.said
    assert made.said.startswith("I'll remind you Sat 30 Jan 09:00: call mum")
    assert await reminders.set_zone("alice", "Mars/Olympus") is None
    assert await reminders.set_zone("alice", "london") == ZoneInfo("Europe/London")
    row = (await reminders.waiting("alice"))[0]
    assert row.zone == "Europe/London" and local_of(row) == datetime(2027, 1, 30, 9, 0)  # 09:00 in London now
    assert await reminders.set_zone("alice", "UTC+8") == ZoneInfo("Etc/GMT-8")
    assert await reminders.set_zone("alice", "东京") == ZoneInfo("Asia/Tokyo")
    again = await reminders.create("alice", "telegram", "42", said="remind me tomorrow at 9 to call dad")
    assert isinstance(again, Created) and "times are" not in again.said  # the person's own zone now


@pytest.mark.both_stores
async def test_the_models_parts_and_a_repeat_rule(engine: MemoryEngine) -> None:
    reminders = book(engine)
    made = await reminders.create(
        "alice", "feishu", "oc_1", text="交周报", when="周一早上八点", repeat="weekly:mon"
    )
    assert isinstance(made, Created) and made.repeat is not None and str(made.repeat) == "weekly:mon"
    assert made.local == datetime(2027, 2, 1, 8, 0)
    assert "每周一 08:00" in made.said
    bad = await reminders.create("alice", "feishu", "oc_1", text="x", when="tomorrow 9am", repeat="hourly")
    assert isinstance(bad, Refused) and bad.reason == "bad_repeat"
    assert await engine.store.reminders.count() == 1


def test_the_wording_tables_have_the_same_keys() -> None:
    assert EN.keys() == ZH.keys()
