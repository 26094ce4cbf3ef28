"""The model's reminder tools beside the memory tools: the real openai client against the local server
scripted to call them; the tools bound to one owner and chat, bad calls answered as errors (README
"Reminders"); the zone a person names."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from gateway.agent import ChatRequest, OpenAIChatModel
from gateway.memory_tools import MemoryTools, ToolSettings
from gateway.reminders.book import ReminderBook
from gateway.reminders.schedule import Repeat, moment, next_run
from gateway.reminders.tools import JoinedTools, ReminderTools
from gateway.reminders.zones import find_zone, mentioned_zone
from localservers.openai_server import OpenAIStub, StubReply
from memory.engine import MemoryEngine
from tests.support.stub_clients import client_for

pytestmark = pytest.mark.usefixtures("close_stub_clients")
NOW = datetime(2026, 12, 9, 10, 0, tzinfo=UTC)  # Wednesday, 10:00 in London


def joined(engine: MemoryEngine, owner: str = "telegram:42") -> JoinedTools:
    book = ReminderBook(engine.store, default_zone=ZoneInfo("Europe/London"), clock=lambda: NOW)
    memory = MemoryTools(engine, owner, "remind me", ToolSettings())
    return JoinedTools(memory, ReminderTools(book, owner, "telegram", "42"))


@pytest.mark.both_stores
async def test_the_model_schedules_lists_and_cancels_through_its_tools(engine: MemoryEngine) -> None:
    with OpenAIStub() as stub:
        stub.script(
            StubReply(
                tool_calls=[
                    ("reminder_create", json.dumps({"text": "call the dentist", "when": "Friday 9am"}))
                ]
            ),
            StubReply(tool_calls=[("reminder_list", "{}"), ("reminder_cancel", '{"id": 99}')]),
            StubReply(content="Done: Friday at 9."),
        )
        model = OpenAIChatModel(client_for(stub, api_key="sk-test-reminders-01"), "tool-model")
        tools = joined(engine)
        reply = await model.reply(
            ChatRequest(system="s", user_text="remind me Friday at 9 to call the dentist", tools=tools)
        )
        assert reply == "Done: Friday at 9."
        first, second, third = stub.chat_requests()
        names = [t["function"]["name"] for t in first["tools"]]
        assert names[:2] == ["memory_search", "memory_get"] and names[-4:] == [
            "reminder_create", "reminder_list", "reminder_cancel", "reminder_timezone"]  # fmt: skip
        created = json.loads(second["messages"][-1]["content"])
        assert created["scheduled"].startswith("I'll remind you Fri 11 Dec 09:00: call the dentist")
        listed, cancelled = (json.loads(m["content"]) for m in third["messages"][-2:])
        assert [r["text"] for r in listed["waiting"]] == ["call the dentist"] and listed[
            "zone"
        ] == "Europe/London"
        assert cancelled == {"error": "no waiting reminder 99"}
    (row,) = await engine.store.reminders.of_owner("telegram:42")
    assert (row.channel, row.chat_id, row.local_at) == ("telegram", "42", "2026-12-11 09:00")


@pytest.mark.both_stores
async def test_bad_calls_are_errors_and_another_persons_reminder_is_out_of_reach(
    engine: MemoryEngine,
) -> None:
    alice, bob = joined(engine, "telegram:1"), joined(engine, "telegram:2")
    made = json.loads(await alice.call("reminder_create", '{"said": "remind me in 1 hour to stretch"}'))
    assert "scheduled" in made
    assert json.loads(await bob.call("reminder_cancel", json.dumps({"id": made["id"]}))) == {
        "error": f"no waiting reminder {made['id']}"
    }
    assert "error" in json.loads(await alice.call("reminder_create", "not json"))
    assert "error" in json.loads(await alice.call("reminder_create", '{"text": 5}'))
    assert (
        json.loads(await alice.call("reminder_create", '{"text": "x", "when": "yesterday"}'))["reason"]
        == "past"
    )
    assert json.loads(await alice.call("reminder_timezone", '{"zone": "Atlantis/Capital"}'))["error"]
    assert json.loads(await alice.call("reminder_timezone", '{"zone": "Tokyo"}')) == {"zone": "Asia/Tokyo"}
    assert await engine.store.reminders.count() == 1


def test_zones_by_name_city_offset_and_in_a_statement() -> None:
    assert find_zone("europe/paris") == ZoneInfo("Europe/Paris")
    assert find_zone("New York") == ZoneInfo("America/New_York")
    assert find_zone("UTC-5") == ZoneInfo("Etc/GMT+5") and find_zone("UTC+15") is None
    assert find_zone("北京") == ZoneInfo("Asia/Shanghai") and find_zone("Narnia") is None
    assert mentioned_zone("I live in Tokyo") == ZoneInfo("Asia/Tokyo")
    assert mentioned_zone("我现在住在伦敦") == ZoneInfo("Europe/London")
    assert mentioned_zone("I'm in a meeting") is None


def test_a_repeat_keeps_its_clock_time_across_both_changes_of_summer_time() -> None:
    london = ZoneInfo("Europe/London")
    daily = Repeat("daily")
    before_spring = datetime(2027, 3, 27, 8, 0)
    after = next_run(daily, before_spring, london)
    assert after == datetime(2027, 3, 28, 8, 0)  # the wall clock stays 08:00
    assert (moment(after, london) - moment(before_spring, london)).total_seconds() == 23 * 3600
    before_autumn = datetime(2027, 10, 30, 8, 0)
    later = next_run(daily, before_autumn, london)
    assert (moment(later, london) - moment(before_autumn, london)).total_seconds() == 25 * 3600
    monthly = Repeat("monthly", day=31)
    assert next_run(monthly, datetime(2027, 1, 31, 9, 0), london) == datetime(2027, 2, 28, 9, 0)
