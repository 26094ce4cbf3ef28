"""The scratchpad: updated by the memory model (on the local OpenAI server) when a session is extracted,
left alone by the offline model, shown in the system prompt, and read/replaced/cleared by the person
(`/scratchpad`, `tierclaw memory scratchpad`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.assistant import Assistant, AssistantSettings
from gateway.cli import main
from localservers.openai_server import OpenAIStub, StubReply
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.model.openai_model import OpenAIMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.pipeline.job_log import JobLog
from memory.scratchpad import SCRATCHPAD_MAX_CHARS, fit
from memory.sessions import SessionStore
from tests.support.stub_clients import client_for

NOTE = "## Active projects\n- Falcon 2.4 release\n\n## Next steps\n- write the release notes"

pytestmark = pytest.mark.usefixtures("close_stub_clients")


def memory_model(stub: OpenAIStub) -> OpenAIMemoryModel:
    return OpenAIMemoryModel(client_for(stub, api_key="sk-test-scratch-01"), "memory-model")


async def extract(engine: MemoryEngine, model, *, scratchpad: bool = True) -> None:
    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(quiet_gap=3600, scratchpad=scratchpad),
    )
    try:
        await service.record(
            "alice",
            channel="telegram",
            chat_id="1",
            sender_id="1",
            role="user",
            content="Falcon 2.4 ships Friday",
        )
        await service.flush("alice", force=True)
    finally:
        await service.close()


async def test_the_memory_model_updates_it_after_a_session(engine: MemoryEngine) -> None:
    with OpenAIStub() as stub:
        stub.script(
            StubReply(content=json.dumps({"facts": [], "summary": "Falcon release plans"})),
            StubReply(content=json.dumps({"scratchpad": NOTE})),
        )
        await extract(engine, memory_model(stub))
        update = stub.json_requests()[1]
        assert "<current_scratchpad>\n(empty)\n</current_scratchpad>" in update["messages"][1]["content"]
        assert "Falcon 2.4 ships Friday" in update["messages"][1]["content"]
    note = await engine.scratchpad.get("alice")
    assert note.content == NOTE and note.updated_at
    assert (await engine.scratchpad.get("bob")).content == ""


async def test_a_failed_update_keeps_the_note_and_the_extraction(engine: MemoryEngine) -> None:
    await engine.scratchpad.put("alice", "## Current focus\n- tea")
    with OpenAIStub() as stub:
        stub.script(
            StubReply(content=json.dumps({"facts": [], "summary": "talked"})),
            StubReply(content='{"other": 1}'),
        )
        await extract(engine, memory_model(stub))
    assert (await engine.scratchpad.get("alice")).content == "## Current focus\n- tea"
    assert len(await engine.events.find("alice")) == 1  # the session itself was saved


async def test_the_offline_model_and_the_switch_leave_it_alone(engine: MemoryEngine) -> None:
    await engine.scratchpad.put("alice", "## Current focus\n- tea")
    await extract(engine, OfflineMemoryModel())
    assert (await engine.scratchpad.get("alice")).content == "## Current focus\n- tea"
    with OpenAIStub() as stub:
        await extract(engine, memory_model(stub), scratchpad=False)
        assert len(stub.json_requests()) == 1  # extraction only
    assert (await engine.scratchpad.get("alice")).content == "## Current focus\n- tea"


def test_fit_cuts_at_a_line_end() -> None:
    long = "\n".join(f"- item {i:04d}" for i in range(400))
    assert len(fit(long)) <= SCRATCHPAD_MAX_CHARS and fit(long).splitlines()[-1].startswith("- item ")
    assert len(fit(long).splitlines()[-1]) == len("- item 0000")  # never half a line
    assert fit("  \n\n x\x00y \n") == "xy"


async def test_it_is_in_the_system_prompt_and_the_chat_command(engine: MemoryEngine, tmp_path: Path) -> None:
    seen: list[ChatRequest] = []

    class Recorder:
        label = "recorder"

        async def reply(self, request: ChatRequest) -> str:
            seen.append(request)
            return "ok"

    service = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        OfflineMemoryModel(),
        ExtractionSettings(quiet_gap=3600),
    )
    bot = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=Recorder(),
        settings=AssistantSettings(workspace=tmp_path),
        extraction=service,
    )

    async def say(text: str, *, group: bool = False) -> str | None:
        return await bot.handle(
            InboundMessage(channel="telegram", chat_id="1", sender_id="1", text=text, is_group=group)
        )

    try:
        assert "empty" in (await say("/scratchpad") or "")
        replaced = await say(f"/scratchpad set {NOTE}")
        assert replaced is not None and replaced.startswith("Scratchpad replaced")
        shown = await say("/scratchpad")
        assert shown is not None and shown.endswith(NOTE)
        await say("How is Falcon going?")
        assert "# Scratchpad: what is going on for the user now\n### Active projects" in seen[-1].system
        assert "private chat" in (await say("/scratchpad", group=True) or "")
        assert await say("/scratchpad clear") == "Cleared my scratchpad about you."
        await say("And now?")
        assert "Scratchpad" not in seen[-1].system
    finally:
        await service.close()


def test_the_cli_prints_sets_edits_and_clears(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    db = str(tmp_path / "m.db")
    assert main(["memory", "add", "I keep bees", "--db", db, "--owner", "alice"]) == 0
    capsys.readouterr()
    assert main(["memory", "scratchpad", "--db", db]) == 0
    assert capsys.readouterr().out.strip() == "alice has no scratchpad yet"
    assert main(["memory", "scratchpad", "--db", db, "--set", NOTE]) == 0
    capsys.readouterr()
    assert main(["memory", "scratchpad", "--db", db, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["owner"] == "alice" and shown["content"] == NOTE and shown["updated_at"]
    assert main(["memory", "scratchpad", "--db", db]) == 0
    assert capsys.readouterr().out.strip() == NOTE

    # --edit: the editor gets the note in a private file and its changes are saved.
    editor = tmp_path / "editor.py"
    seen_mode = tmp_path / "mode.txt"
    editor.write_text(
        "import os, stat, sys\n"
        f"open({str(seen_mode)!r}, 'w').write(oct(stat.S_IMODE(os.stat(sys.argv[1]).st_mode)))\n"
        "text = open(sys.argv[1]).read()\n"
        "open(sys.argv[1], 'w').write(text.replace('write the release notes', 'publish the release'))\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    assert main(["memory", "scratchpad", "--db", db, "--edit"]) == 0
    capsys.readouterr()
    assert seen_mode.read_text() == oct(0o600)
    assert main(["memory", "scratchpad", "--db", db, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert "publish the release" in shown["content"] and "write the release notes" not in shown["content"]

    monkeypatch.setenv("EDITOR", f"{sys.executable} -c 'import sys; sys.exit(3)'")
    assert main(["memory", "scratchpad", "--db", db, "--edit"]) == 1
    assert "nothing saved" in capsys.readouterr().err
    assert main(["memory", "scratchpad", "--db", db, "--clear"]) == 0
    assert main(["memory", "scratchpad", "--db", db, "--clear"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "cleared the scratchpad of alice",
        "alice has no scratchpad",
    ]


async def test_the_daily_job_refreshes_it_from_yesterdays_episodes(engine: MemoryEngine) -> None:
    from datetime import UTC, datetime

    from gateway.scheduler import MemoryJobs
    from memory.records import Episode

    await engine.scratchpad.put("alice", NOTE)
    await engine.events.add(
        "alice",
        "Released Falcon 2.4 and published the notes",
        event_date="2026-11-24",
        episode=Episode(goal="ship Falcon 2.4", outcome="done", entities=["Falcon"]),
    )
    await engine.events.add("bob", "Talked about tea", event_date="2026-11-20")  # not yesterday: untouched
    with OpenAIStub() as stub:
        stub.responder = lambda body: (
            StubReply(content=json.dumps({"scratchpad": "## Current focus\n- Falcon 2.5 planning"}))
            if "<current_scratchpad>" in body["messages"][-1]["content"]
            else None
        )
        model = memory_model(stub)
        service = ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            model,
            ExtractionSettings(quiet_gap=3600, scratchpad=True),
        )
        jobs = MemoryJobs(engine, service, model, job_log=JobLog(engine.store.jobs), tz=UTC)
        try:
            outcome = await jobs.daily(datetime(2026, 11, 25, 3, 0, tzinfo=UTC))
        finally:
            await service.close()
        updates = [b for b in stub.json_requests() if "<current_scratchpad>" in b["messages"][-1]["content"]]
    assert "1 scratchpads refreshed" in outcome
    (update,) = updates
    assert "Released Falcon 2.4" in update["messages"][-1]["content"]
    assert "goal: ship Falcon 2.4; outcome: done" in update["messages"][-1]["content"]
    assert (await engine.scratchpad.get("alice")).content == "## Current focus\n- Falcon 2.5 planning"
    assert (await engine.scratchpad.get("bob")).content == ""
