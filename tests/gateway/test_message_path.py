"""End to end through the terminal channel object, the real loop, SQLite and the real ``openai`` client
pointed at the local OpenAI-compatible stub (tests/openai_stub.py)."""

from __future__ import annotations

import asyncio
import io
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from channels.base import OutboundMessage
from channels.console import ConsoleChannel
from gateway.app import Runtime
from gateway.assistant import APOLOGY, APOLOGY_BY_KIND
from gateway.cli import main
from gateway.config import Config, load_config
from gateway.scheduler import DAILY_JOB, WEEKLY_JOB
from localservers.openai_server import OpenAIStub, StubReply
from memory.clock import utcnow
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.job_log import JobLog
from memory.store.turn_watermark import pending
from memory.text import tokenizer

OWNER = "console:local"


class Terminal(ConsoleChannel):
    """The console channel on a pipe we type into, recording each reply it prints."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self._typing = os.fdopen(write_fd, "w", encoding="utf-8")
        super().__init__(os.fdopen(read_fd, "r", encoding="utf-8"), io.StringIO(), interactive=False)
        self.replies: list[str] = []

    async def send(self, message: OutboundMessage) -> None:
        await super().send(message)
        self.replies.append(message.text)

    def type(self, line: str) -> None:
        self._typing.write(line + "\n")
        self._typing.flush()

    def end_input(self) -> None:
        self._typing.close()

    async def reply(self, count: int, timeout: float = 30.0) -> str:
        """Wait until ``count`` replies have been printed; returns the last one."""
        for _ in range(int(timeout / 0.01)):
            if len(self.replies) >= count:
                return self.replies[count - 1]
            await asyncio.sleep(0.01)
        raise AssertionError(f"only {len(self.replies)} replies, expected {count}: {self.replies}")


def make_config(tmp_path: Path, stub: OpenAIStub, database_url: str = "", **extraction: object) -> Config:
    raw = {
        "provider": {
            "apiKey": "sk-test-000000",
            "baseUrl": stub.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": database_url,
            "model": "memory-model",
            "extraction": {"quietGap": "0.3s", "retryBackoff": "0.05s", **extraction},
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


@pytest.fixture(autouse=True)
def _dictionary_loaded() -> None:
    """jieba's dictionary loads in the background at start and the first message waits for the rest;
    these tests time quiet gaps of 0.3 s, so it is loaded before they start."""
    tokenizer.warm_up()


def is_scratchpad_update(body: dict) -> bool:
    return "<current_scratchpad>" in body["messages"][-1]["content"]


def extractions(stub: OpenAIStub) -> list[dict]:
    """The memory model's extraction calls (each extracted session is followed by a scratchpad update)."""
    return [body for body in stub.json_requests() if not is_scratchpad_update(body)]


def extraction_reply(body: dict) -> StubReply | None:
    """Memory model: one fact per 'My … is …' user line, the scratchpad unchanged; main model: the stub
    default."""
    if body.get("response_format", {}).get("type") != "json_object":
        return None
    if is_scratchpad_update(body):
        return StubReply(content=json.dumps({"scratchpad": ""}))
    conversation = body["messages"][-1]["content"]
    facts = [
        {
            "content": line.split("user:", 1)[1].strip(),
            "project": "_global",
            "topic": "pets",
            "category": "identity",
            "importance": 0.9,
        }
        for line in conversation.splitlines()
        if "user:" in line and "My dog" in line
    ]
    return StubReply(content=json.dumps({"facts": facts, "summary": "talked about the dog"}))


async def _buffered(runtime: Runtime) -> int:
    return (await runtime.engine.stats())["buffered_turns"]


async def _gap_passes(runtime: Runtime, owner: str = OWNER, buffered: int = 2) -> None:
    """The owner's quiet gap (an hour in these tests) ends now, on the database's clock: its due time is
    pushed with a token budget of 0, which every buffer has reached. How long a reply took on a busy
    machine then never decides which turns one extraction gets. First the last exchange is written
    (``buffered`` turns waiting): it goes with the message's answered-mark, after the reply is seen, and
    pushes the due time itself."""
    async with asyncio.timeout(30):
        while await _buffered(runtime) < buffered:
            await asyncio.sleep(0.01)
    assert await runtime.engine.store.extraction_due.push(owner, 0, 3600)


@pytest.mark.both_stores
async def test_told_fact_is_extracted_after_the_gap_and_recalled_later(
    tmp_path: Path, memory_url: str
) -> None:
    with OpenAIStub(responder=extraction_reply) as stub:
        term = Terminal()
        runtime = await Runtime.open(make_config(tmp_path, stub, memory_url, quietGap="1h"), [term])
        try:
            await runtime.start(schedule=False)
            term.type("My dog is called Biscuit and he loves the beach.")
            await term.reply(1)
            assert extractions(stub) == []  # extraction waits for the quiet gap
            await _gap_passes(runtime)
            assert await stub.await_for(lambda s: len(extractions(s)) == 1)
            async with asyncio.timeout(30):
                while await _buffered(runtime) != 0:
                    await asyncio.sleep(0.01)
            await runtime.assistant.extraction.idle()  # the buffer empties inside the batch's commit
            memories = await runtime.engine.list(OWNER)
            assert [m.content for m in memories] == ["My dog is called Biscuit and he loves the beach."]

            term.type("What do you remember about my dog?")
            await term.reply(2)
            question = stub.chat_requests()[-1]["messages"]
            assert question[0]["role"] == "system"
            user_turn = question[-1]["content"]
            assert "<memory>" in user_turn and "Biscuit" in user_turn.split("</memory>")[0]
            assert user_turn.endswith("What do you remember about my dog?")
            # Tier 0: the earlier exchange is in the history
            assert any(m["content"].startswith("My dog is called Biscuit") for m in question[1:-1])

            # the memory block is never fed back to extraction
            await _gap_passes(runtime)
            assert await stub.await_for(lambda s: len(extractions(s)) == 2)
            second = extractions(stub)[1]["messages"][-1]["content"]
            assert "What do you remember about my dog?" in second
            assert "<memory>" not in second and "Notes from earlier conversations" not in second
            assert extractions(stub)[0]["temperature"] == 0.3
            assert extractions(stub)[0]["model"] == "memory-model"
            assert stub.chat_requests()[0]["model"] == "main-model"
        finally:
            await runtime.close()


async def test_new_hands_the_session_to_extraction_and_starts_fresh(tmp_path: Path) -> None:
    with OpenAIStub(responder=extraction_reply) as stub:
        term = Terminal()
        runtime = await Runtime.open(make_config(tmp_path, stub, quietGap="1h"), [term])
        try:
            await runtime.start(schedule=False)
            term.type("My dog is called Pepper.")
            await term.reply(1)
            term.type("/new")
            assert "new conversation" in (await term.reply(2)).lower()
            assert await stub.await_for(lambda s: len(extractions(s)) == 1)  # flushed despite 1 h gap
            assert "My dog is called Pepper." in extractions(stub)[0]["messages"][-1]["content"]
            await runtime.assistant.extraction.idle()
            assert await _buffered(runtime) == 0  # /new left nothing buffered
            term.type("hello again")
            await term.reply(3)
            history = stub.chat_requests()[-1]["messages"][1:-1]
            assert history == []  # the new session starts empty
        finally:
            await runtime.close()


async def test_memory_command_shows_what_was_just_said(tmp_path: Path) -> None:
    with OpenAIStub(responder=extraction_reply) as stub:
        term = Terminal()
        # /memory waits exitFlush for the extraction: a ceiling (it returns when done), not the default 15 s
        config = make_config(tmp_path, stub, quietGap="1h", exitFlush="120s")
        runtime = await Runtime.open(config, [term])
        try:
            await runtime.start(schedule=False)
            term.type("My dog is called Pepper.")
            await term.reply(1)
            term.type("/memory")
            listing = await term.reply(2)
            assert "My dog is called Pepper." in listing  # extracted first, despite the 1 h gap
            assert "still being turned into memories" not in listing
            assert await _buffered(runtime) == 0
        finally:
            await runtime.close()


@pytest.mark.both_stores
async def test_buffer_survives_a_restart_mid_gap(tmp_path: Path, memory_url: str) -> None:
    with OpenAIStub(responder=extraction_reply) as stub:
        config = make_config(tmp_path, stub, memory_url, quietGap="1h")
        term = Terminal()
        runtime = await Runtime.open(config, [term])
        try:
            await runtime.start(schedule=False)
            term.type("My dog is called Rex.")
            await term.reply(1)
            # the exchange goes with the answered-mark, after the send; close does not wait for it
            await asyncio.wait_for(runtime.loop.drain(), 30)
        finally:
            await runtime.close()  # down before the gap ended
        assert extractions(stub) == []

        term = Terminal()
        runtime = await Runtime.open(config, [term])
        try:
            assert await _buffered(runtime) == 2  # the user's words and the reply, kept in the database
            await runtime.start(schedule=False)
            await _gap_passes(runtime)  # while it was down
            assert await stub.await_for(lambda s: len(extractions(s)) == 1)
            async with asyncio.timeout(30):
                while await _buffered(runtime) != 0:
                    await asyncio.sleep(0.01)
            await runtime.assistant.extraction.idle()  # the buffer empties inside the batch's commit
            assert [m.content for m in await runtime.engine.list(OWNER)] == ["My dog is called Rex."]
            term.type("hi")  # Tier 0 survived the restart too
            await term.reply(1)
            assert any("Rex" in m["content"] for m in stub.chat_requests()[-1]["messages"][1:-1])
        finally:
            await runtime.close()


@pytest.mark.both_stores
async def test_model_failure_apologises_and_still_records_the_turn(tmp_path: Path, memory_url: str) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=500))
        term = Terminal()
        runtime = await Runtime.open(make_config(tmp_path, stub, memory_url, quietGap="1h"), [term])
        try:
            await runtime.start(schedule=False)
            term.type("My favourite tea is genmaicha")
            assert await term.reply(1) == APOLOGY
            await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
            rows = await runtime.engine.store.db.read(f"SELECT role, content FROM {pending(False)}")
            assert rows == [("user", "My favourite tea is genmaicha")]
            term.type("are you back?")
            assert (await term.reply(2)).startswith("stub reply:")
            history = stub.chat_requests()[-1]["messages"][1:-1]
            assert history == [{"role": "user", "content": "My favourite tea is genmaicha"}]
        finally:
            await runtime.close()


async def test_a_refused_api_key_gets_an_apology_that_says_waiting_will_not_help(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=401))
        term = Terminal()
        runtime = await Runtime.open(make_config(tmp_path, stub, quietGap="1h"), [term])
        try:
            await runtime.start(schedule=False)
            term.type("hello")
            assert await term.reply(1) == APOLOGY_BY_KIND["auth"]
        finally:
            await runtime.close()


async def test_slow_model_times_out_into_an_apology(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="too late", delay=3600))  # never in time
        config = make_config(tmp_path, stub, quietGap="1h")
        config.provider.timeout_seconds = 0.3
        term = Terminal()
        runtime = await Runtime.open(config, [term])
        try:
            await runtime.start(schedule=False)
            term.type("hello there, how are you")
            assert await term.reply(1) == APOLOGY
        finally:
            await runtime.close()


async def test_invalid_extraction_json_is_retried_then_dead_lettered_then_requeued(tmp_path: Path) -> None:
    def broken_memory_model(body: dict) -> StubReply | None:
        if body.get("response_format", {}).get("type") == "json_object":
            return StubReply(content="this is not json")
        return None

    with OpenAIStub(responder=broken_memory_model) as stub:
        config = make_config(tmp_path, stub, quietGap="1h", maxAttempts=3)
        term = Terminal()
        runtime = await Runtime.open(config, [term])
        try:
            await runtime.start(schedule=False)
            term.type("My dog is called Nemo")
            await term.reply(1)
            await _gap_passes(runtime)  # one batch of both turns
            buffer = ExtractionBuffer(runtime.engine.store.buffer)
            async with asyncio.timeout(60):  # three tries, their backoffs between
                while await buffer.dead_letters() != 2:
                    await asyncio.sleep(0.02)
            assert await buffer.dead_letters() == 2  # both turns kept as dead letters, never dropped
            assert len(extractions(stub)) == 3  # one try and two retries, then no more
        finally:
            await runtime.close()
    # `tierclaw memory retry` re-queues them; the next run extracts them
    db = str(tmp_path / "memory.db")
    retry = ["memory", "retry", "--db", db, "--config", str(tmp_path / "config.json")]
    assert await asyncio.to_thread(main, retry) == 0  # the CLI runs its own event loop
    with OpenAIStub(responder=extraction_reply) as stub:
        config = make_config(tmp_path, stub, quietGap="0.05s")
        runtime = await Runtime.open(config, [Terminal()])
        try:
            await runtime.start(schedule=False)
            assert await stub.await_for(lambda s: len(extractions(s)) == 1)
            async with asyncio.timeout(30):  # the batch's write follows the model's answer
                while await _buffered(runtime) != 0:
                    await asyncio.sleep(0.01)
        finally:
            await runtime.close()


@pytest.mark.parametrize("field", ["quietGapp"])
def test_chat_with_a_bad_config_names_the_field(tmp_path: Path, field: str, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"memory": {"extraction": {field: "3m"}}}), encoding="utf-8")
    assert main(["chat", "--config", str(path)]) == 2
    assert f"memory.extraction.{field}" in capsys.readouterr().err


async def test_a_short_session_lets_the_launch_catch_up_finish(tmp_path: Path) -> None:
    # A daily job missed while down is caught up at start; a session that ends a moment later must not
    # cancel it (the terminal chat saves memories, then waits for the catch-up within the same bound).
    def slow_profile(body: dict) -> StubReply | None:
        # The weekly job's profile refresh takes a while, as a real model's does.
        if "entries" in json.dumps(body.get("messages", [])):
            return StubReply(content=json.dumps({"entries": []}), delay=1.5)
        return extraction_reply(body)

    with OpenAIStub(responder=slow_profile) as stub:
        config = make_config(tmp_path, stub, quietGap="1h")
        engine = await MemoryEngine.open(config.db_path())
        long_ago = utcnow() - timedelta(days=8)  # every job, the weekly one too, missed a run
        for job in ("extraction_sweep", DAILY_JOB, "weekly_compress"):
            await JobLog(engine.store.jobs).record(job, when=long_ago)
        await engine.close()
        term = Terminal()
        runtime = await Runtime.open(config, [term])
        try:
            await runtime.start()  # schedules the jobs and starts the catch-up
            term.type("My dog is called Pepper.")
            await term.reply(1)
            # As `tierclaw chat` does before saving (gateway/cli/run.py): the reply is shown before the
            # worker writes its exchange (the turns), so without the drain a starved loop can flush an
            # empty buffer and count the two turns written a moment later as left.
            await runtime.loop.drain()
            _, left = await runtime.save_memories(60.0)  # a ceiling: it returns when done
            assert left == 0  # extracted by the exit flush or by the caught-up sweep, whichever came first
            for job in (DAILY_JOB, WEEKLY_JOB):  # the missed jobs ran before the exit
                last = await JobLog(runtime.engine.store.jobs).last_run(job)
                assert last is not None and last > long_ago, job
        finally:
            await runtime.close()
