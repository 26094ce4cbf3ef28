"""Episodes: the extraction that writes a daily event writes it as an episode (goal, outcome, entities,
start and end, the facts extracted with it), through the memory model on the local OpenAI server; events
of older databases move forward; memory_search lists episodes; `tierclaw memory events`."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.memory_tools import MemoryTools, ToolSettings
from localservers.openai_server import OpenAIStub, StubReply
from memory.engine import MemoryEngine
from memory.model.openai_model import OpenAIMemoryModel
from memory.model.output import parse_episode
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Episode
from memory.store import schema
from tests.support.stub_clients import client_for

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

pytestmark = pytest.mark.usefixtures("close_stub_clients")


def memory_model(stub: OpenAIStub) -> OpenAIMemoryModel:
    return OpenAIMemoryModel(client_for(stub, api_key="sk-test-episodes-01"), "memory-model")


EXTRACTED = {
    "facts": [
        {"content": "The user's Falcon release is version 2.4", "project": "falcon", "category": "decision"},
        {"content": "The user deploys Falcon with Ansible", "project": "falcon", "category": "config"},
    ],
    "summary": "Prepared the Falcon 2.4 release; deployment scripts fixed, release notes still to write.",
    "episode": {"goal": "ship Falcon 2.4", "outcome": "partial", "entities": ["Falcon", "Ansible", "Falcon"]},
}


async def test_extraction_writes_an_episode_with_its_facts(engine: MemoryEngine) -> None:
    clock = [START]
    with OpenAIStub() as stub:
        stub.script(StubReply(content=json.dumps(EXTRACTED)))
        service = ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            memory_model(stub),
            ExtractionSettings(quiet_gap=3600),
            clock=lambda: clock[0],
        )
        try:
            for minutes, (role, text) in enumerate(
                [
                    ("user", "Let's get Falcon 2.4 out today"),
                    ("assistant", "Sure."),
                    ("user", "Ansible fixed"),
                ]
            ):
                clock[0] = START + timedelta(minutes=10 * minutes)
                await service.record(
                    "alice", channel="telegram", chat_id="1", sender_id="1", role=role, content=text
                )
            result = await service.flush("alice", force=True)
        finally:
            await service.close()
        request = stub.json_requests()[0]
        assert '"episode"' in request["messages"][0]["content"]  # the prompt asks for it
    assert result.facts == 2 and result.events == 1
    (episode,) = await engine.events.find("alice")
    assert episode.goal == "ship Falcon 2.4" and episode.outcome == "partial"
    assert episode.entities == ["Falcon", "Ansible"]
    assert episode.started_at == "2026-11-20 09:00:00" and episode.ended_at == "2026-11-20 09:20:00"
    facts = {m.id: m.content for m in await engine.list("alice")}
    assert sorted(episode.fact_ids) == sorted(facts) and len(facts) == 2
    # Found by its goal and entities, not only by its summary's words:
    assert [e.id for e in await engine.events.find("alice", query="Ansible")] == [episode.id]


def test_parse_episode_is_tolerant() -> None:
    assert parse_episode(None) == Episode()
    assert parse_episode({"goal": 5, "outcome": "WON", "entities": "Falcon"}) == Episode()
    assert parse_episode(
        {"goal": " fix  the build ", "outcome": "Done", "entities": ["a", "", 3, "a", "b"]}
    ) == (Episode(goal="fix the build", outcome="done", entities=["a", "b"]))


async def test_events_of_an_older_database_move_forward(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, target=6)
    conn.execute(
        "INSERT INTO daily_events (owner, event_date, summary, search_text, created_at) "
        "VALUES ('alice', '2026-01-05', 'Planned the garden', 'plan garden', '2026-01-05 18:00:00')"
    )
    conn.close()
    engine = await MemoryEngine.open(path)
    try:
        (event,) = await engine.events.find("alice")
    finally:
        await engine.close()
    assert event.summary == "Planned the garden" and event.goal == "" and event.outcome == ""
    assert event.started_at == event.ended_at == "2026-01-05 18:00:00"
    assert event.entities == [] and event.fact_ids == []


async def test_memory_search_lists_episodes_with_their_type(engine: MemoryEngine) -> None:
    await engine.events.add(
        "alice",
        "Booked the Lisbon flights for the conference",
        event_date="2026-11-02",
        episode=Episode(goal="travel to the Lisbon conference", outcome="done", entities=["Lisbon"]),
    )
    await engine.events.add("bob", "Lisbon flights for bob", event_date="2026-11-02")
    box = MemoryTools(engine, "alice", "when did I book Lisbon?", ToolSettings())
    result = json.loads(await box.call("memory_search", '{"query": "Lisbon flights"}'))
    (episode,) = [r for r in result["results"] if r["type"] == "episode"]
    assert episode["goal"] == "travel to the Lisbon conference" and episode["outcome"] == "done"
    assert "bob" not in json.dumps(result)


def test_cli_lists_episodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    db = tmp_path / "m.db"

    async def fill() -> None:
        engine = await MemoryEngine.open(db)
        try:
            await engine.events.add(
                "alice",
                "Tried to fix the flaky CI job",
                event_date="2026-11-10",
                episode=Episode(goal="green CI", outcome="failed", entities=["GitHub Actions"]),
            )
            await engine.events.add("alice", "Chatted about tea", event_date="2026-11-11")
        finally:
            await engine.close()

    asyncio.run(fill())
    assert main(["memory", "events", "--db", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split()[1:3] == ["2026-11-11", "-"]
    assert "failed" in out[3] and "GitHub Actions" in out[3] and "green CI — Tried to fix" in out[3]
    assert main(["memory", "events", "--db", str(db), "--until", "2026-11-10", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)
    assert only["outcome"] == "failed" and only["entities"] == ["GitHub Actions"]
    assert main(["memory", "events", "--db", str(db), "--since", "last week"]) == 2


def test_export_and_import_keep_an_episodes_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    source, dest = tmp_path / "a.db", tmp_path / "b.db"

    async def fill() -> None:
        engine = await MemoryEngine.open(source)
        try:
            await engine.events.add(
                "alice",
                "Moved the blog to a static site",
                event_date="2026-11-12",
                episode=Episode(goal="cheaper hosting", outcome="done", entities=["blog", "Hugo"]),
            )
        finally:
            await engine.close()

    asyncio.run(fill())
    export = tmp_path / "export.json"
    assert main(["memory", "export", "--db", str(source), "-o", str(export)]) == 0
    assert main(["memory", "import", str(export), "--db", str(dest)]) == 0
    capsys.readouterr()
    assert main(["memory", "events", "--db", str(dest), "--json"]) == 0
    (event,) = json.loads(capsys.readouterr().out)
    assert (event["goal"], event["outcome"], event["entities"]) == (
        "cheaper hosting",
        "done",
        ["blog", "Hugo"],
    )
