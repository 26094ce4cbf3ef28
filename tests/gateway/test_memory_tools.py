"""Memory tools: the tool loop of OpenAIChatModel with the real openai client against the local server
scripted to answer with tool_calls, and the tools themselves on a real engine (owner bound, bad calls)."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.agent import ChatRequest, OpenAIChatModel
from gateway.memory_tools import MemoryTools, ToolSettings
from localservers.openai_server import OpenAIStub, StubReply
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.records import Fact
from tests.support.stub_clients import client_for


def model_for(stub: OpenAIStub) -> OpenAIChatModel:
    return OpenAIChatModel(client_for(stub, api_key="sk-test-tools-0001"), "tool-model")


# The memory tools read and write through the store: every test runs on SQLite and PostgreSQL.
pytestmark = [pytest.mark.both_stores, pytest.mark.usefixtures("close_stub_clients")]


@pytest.fixture
async def memories(engine: MemoryEngine) -> MemoryEngine:
    """alice: three memories (ids 1-3); bob: one (id 4)."""
    for owner, text, project in (
        ("alice", "Alice is allergic to peanuts", "_global"),
        ("alice", "Alice's project Falcon ships in March", "falcon"),
        ("alice", "Alice prefers oolong tea", "_global"),
        ("bob", "Bob's bank PIN hint is his cat's birthday", "_global"),
    ):
        await engine.write(owner, Fact(content=text, project=project))
    return engine


def tools(engine: MemoryEngine, owner: str = "alice", text: str = "hi", **kw: int) -> MemoryTools:
    return MemoryTools(engine, owner, text, ToolSettings(**kw))


def ask(text: str, box: MemoryTools) -> ChatRequest:
    return ChatRequest(system="You are tierclaw.", user_text=text, tools=box)


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m.get("role") == "tool"]


async def test_one_round_the_result_reaches_the_final_reply(memories: MemoryEngine) -> None:
    with OpenAIStub() as stub:
        stub.script(
            StubReply(tool_calls=[("memory_search", json.dumps({"query": "allergic"}))]),
            StubReply(content="You are allergic to peanuts."),
        )
        reply = await model_for(stub).reply(ask("What am I allergic to?", tools(memories)))
        assert reply == "You are allergic to peanuts."
        first, second = stub.chat_requests()
        assert [t["function"]["name"] for t in first["tools"]] == [
            "memory_search",
            "memory_get",
            "memory_save",
            "conversation_search",
            "memory_forget",
        ]
        assistant = second["messages"][-2]
        assert assistant["tool_calls"][0]["function"]["name"] == "memory_search"
        (result,) = tool_messages(second)
        assert result["tool_call_id"] == "call_1"
        hits = json.loads(result["content"])["results"]
        assert hits[0]["id"] == 1 and hits[0]["snippet"] == "Alice is allergic to peanuts"
        assert "tool_choice" not in second


async def test_several_rounds_and_parallel_calls(memories: MemoryEngine) -> None:
    with OpenAIStub() as stub:
        stub.script(
            StubReply(
                tool_calls=[("memory_search", '{"query": "tea"}'), ("memory_search", '{"query": "Falcon"}')]
            ),
            StubReply(tool_calls=[("memory_get", '{"ids": [2, 3]}')]),
            StubReply(content="Falcon ships in March; you like oolong."),
        )
        reply = await model_for(stub).reply(ask("Remind me of Falcon and my tea", tools(memories)))
        assert reply == "Falcon ships in March; you like oolong."
        last = stub.chat_requests()[-1]
        results = [json.loads(m["content"]) for m in tool_messages(last)]
        assert [m["tool_call_id"] for m in tool_messages(last)] == ["call_1", "call_2", "call_1"]
        assert results[0]["results"][0]["id"] == 3 and results[1]["results"][0]["id"] == 2
        got = results[2]["memories"]
        assert [m["id"] for m in got] == [2, 3] and got[0]["project"] == "falcon"
        assert got[0]["content"] == "Alice's project Falcon ships in March"


async def test_the_round_limit_asks_for_a_final_answer(memories: MemoryEngine) -> None:
    with OpenAIStub() as stub:
        stub.responder = lambda body: (
            StubReply(content="Here is what I found.")
            if body.get("tool_choice") == "none"
            else StubReply(tool_calls=[("memory_search", '{"query": "tea"}')])
        )
        reply = await model_for(stub).reply(ask("tea?", tools(memories, max_rounds=2)))
        assert reply == "Here is what I found."
        bodies = stub.chat_requests()
        assert len(bodies) == 3 and bodies[-1]["tool_choice"] == "none"
        assert len(tool_messages(bodies[-1])) == 2


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("memory_delete_all", "{}", "unknown tool"),
        ("memory_search", "{not json", "JSON object"),
        ("memory_search", "[1, 2]", "JSON object"),
        ("memory_search", '{"query": 5}', '"query" must be non-empty text'),
        ("memory_search", '{"query": "tea", "limit": "many"}', '"limit" must be an integer'),
        ("memory_search", '{"query": "tea", "since": "last week"}', "YYYY-MM-DD"),
        ("memory_get", '{"ids": "all"}', '"ids" must be'),
        ("memory_get", '{"ids": [true]}', '"ids" must be'),
        ("memory_save", '{"content": ""}', '"content" must be non-empty text'),
        ("memory_save", '{"content": "x y z", "category": "gossip"}', '"category" must be one of'),
        ("memory_forget", '{"id": "1"}', '"id" must be'),
        ("memory_forget", '{"id": 1}', "did not ask to forget"),
    ],
)
async def test_a_bad_call_is_a_tool_error_for_the_model(
    memories: MemoryEngine, name: str, arguments: str, error: str
) -> None:
    with OpenAIStub() as stub:
        stub.script(
            StubReply(tool_calls=[(name, arguments)]), StubReply(content="Sorry, let me answer anyway.")
        )
        reply = await model_for(stub).reply(ask("What do you know?", tools(memories)))
        assert reply == "Sorry, let me answer anyway."
        (result,) = tool_messages(stub.chat_requests()[-1])
        assert error in json.loads(result["content"])["error"]
    assert (await memories.get("alice", 1)) is not None and not (await memories.get("alice", 1)).is_archived


async def test_another_owners_ids_look_like_missing_ones(memories: MemoryEngine) -> None:
    box = tools(memories, text="please forget memory 4")
    got = json.loads(await box.call("memory_get", '{"ids": [4, 1]}'))
    assert got["not_found"] == [4] and [m["id"] for m in got["memories"]] == [1]
    refused = json.loads(await box.call("memory_forget", '{"id": 4}'))
    assert refused == {"error": "no live memory 4"}
    assert not (await memories.get("bob", 4)).is_archived


async def test_save_and_forget_go_through_the_write_path(memories: MemoryEngine) -> None:
    box = tools(memories, text="Forget that I like oolong, and remember I now drink green tea")
    saved = json.loads(
        await box.call("memory_save", '{"content": "Alice now drinks green tea", "category": "config"}')
    )
    assert saved["result"] == "inserted"
    again = json.loads(await box.call("memory_save", '{"content": "Alice now drinks green tea"}'))
    assert again == {"result": "merged", "id": saved["id"]}
    forgotten = json.loads(await box.call("memory_forget", '{"id": 3}'))
    assert forgotten == {"result": "forgotten", "id": 3, "content": "Alice prefers oolong tea"}
    assert (await memories.get("alice", 3)).is_archived
    assert (await memories.get("alice", saved["id"])).source == "tool"


async def test_search_filters_by_project_and_date(memories: MemoryEngine) -> None:
    box = tools(memories)
    falcon = json.loads(
        await box.call("memory_search", '{"query": "Falcon March ships", "project": "falcon"}')
    )
    assert [r["id"] for r in falcon["results"]] == [2]
    none = json.loads(await box.call("memory_search", '{"query": "Falcon", "until": "2000-01-01"}'))
    assert none == {"results": []}


async def test_results_share_the_replys_budget(memories: MemoryEngine) -> None:
    box = tools(memories, budget_chars=600)
    first = await box.call("memory_get", '{"ids": [1, 2, 3]}')
    assert json.loads(first)["truncated"] is True and len(first) <= 600
    spent = json.loads(await box.call("memory_search", '{"query": "tea"}'))
    assert "budget" in spent["error"]


async def test_one_log_line_per_call_without_content(
    memories: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        await tools(memories).call("memory_search", '{"query": "peanuts"}')
    lines = [r.getMessage() for r in caplog.records if "tool" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("[memory] tool memory_search owner=alice ok")
    assert "peanuts" not in lines[0]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    name=st.sampled_from(
        ["memory_search", "memory_get", "memory_save", "memory_forget", "conversation_search"]
    ),
    ids=st.lists(st.integers(min_value=-5, max_value=2**64), max_size=6),
    query=st.text(max_size=40),
)
async def test_no_call_ever_returns_another_owners_memory(
    memories: MemoryEngine, name: str, ids: list[int], query: str
) -> None:
    arguments = json.dumps(
        {"query": query or "x", "ids": ids, "id": ids[0] if ids else 4, "content": query or "x"}
    )
    box = tools(memories, text="forget it")
    result = await box.call(name, arguments)
    assert "Bob" not in result and "PIN" not in result
    assert not (await memories.get("bob", 4)).is_archived


async def test_the_assistant_binds_the_tools_to_the_senders_owner(engine: MemoryEngine, tmp_path) -> None:
    from channels.base import InboundMessage
    from gateway.assistant import Assistant, AssistantSettings
    from gateway.identity import Identities
    from memory.model.offline_model import OfflineMemoryModel
    from memory.pipeline.extraction import ExtractionService, ExtractionSettings
    from memory.sessions import SessionStore

    await engine.write("user:alice", Fact(content="Alice keeps bees on the roof"))
    await engine.write("telegram:2", Fact(content="Mallory keeps bees in the cellar"))
    extraction = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        OfflineMemoryModel(),
        ExtractionSettings(quiet_gap=3600),
    )
    with OpenAIStub() as stub:
        stub.script(
            StubReply(tool_calls=[("memory_search", '{"query": "bees"}')]), StubReply(content="On the roof.")
        )

        def assistant(enabled: bool) -> Assistant:
            return Assistant(
                engine=engine,
                sessions=SessionStore(engine.store.sessions),
                chat_model=model_for(stub),
                settings=AssistantSettings(workspace=tmp_path, tools=ToolSettings(enabled=enabled)),
                identities=Identities({"alice": ["telegram:1"]}),
                extraction=extraction,
            )

        try:
            message = InboundMessage(
                channel="telegram", chat_id="1", sender_id="1", text="Where are my bees?"
            )
            assert await assistant(True).handle(message) == "On the roof."
            (result,) = tool_messages(stub.chat_requests()[-1])
            assert "Alice keeps bees" in result["content"] and "Mallory" not in result["content"]
            await assistant(False).handle(message)
            assert "tools" not in stub.chat_requests()[-1]  # agent.tools = false: injection only
        finally:
            await extraction.close()
