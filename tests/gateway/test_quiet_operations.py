"""What an operator should not read as something broken (issue 37, item 12): a clean stop while a job
queries PostgreSQL logs no traceback; a job still running when its next run comes is skipped with one
quiet line, not an apscheduler warning each time; a message with a NUL is repaired like a lone surrogate
and answered, with at most one log line for its chat."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC
from pathlib import Path

import pytest

from channels.base import InboundMessage
from gateway.app import Runtime
from gateway.config import load_config
from gateway.scheduler import SWEEP_JOB, JobTimes, MemoryJobs
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.model.protocol import Extraction, Turn
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.pipeline.job_log import JobLog
from tests.support.typed_channel import ChatChannel
from tests.support.waiting import until


async def _until(condition, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "the condition never came"
        await asyncio.sleep(0.05)


class StuckModel(OfflineMemoryModel):
    """An offline memory model whose extraction waits until released: a job that runs long."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def extract(self, turns: list[Turn]) -> Extraction:
        self.started.set()
        await self.release.wait()
        return await super().extract(turns)


async def test_a_job_still_running_is_skipped_with_one_quiet_line(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    model = StuckModel()
    buffer = ExtractionBuffer(engine.store.buffer)
    extraction = ExtractionService(engine, buffer, model, ExtractionSettings(quiet_gap=3600))
    await buffer.append("alice", channel="t", chat_id="1", sender_id="1", role="user", content="I keep bees")
    jobs = MemoryJobs(
        engine, extraction, model, job_log=JobLog(engine.store.jobs), tz=UTC, times=JobTimes(every=1)
    )
    attempts = [0]

    def fires() -> int:  # every run apscheduler started or refused, of the sweep job
        return sum(
            1
            for r in caplog.records
            if SWEEP_JOB in r.getMessage()
            and ("Running job" in r.getMessage() or "skipped" in r.getMessage())
        )

    # apscheduler's own level too: a CLI test earlier in the process holds it at WARNING (log_setup.py),
    # and its "Running job" lines are what counts the runs here.
    with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, logger="apscheduler"):
        jobs.start()
        try:
            await asyncio.wait_for(model.started.wait(), 90)
            await _until(lambda: fires() >= 4)  # the stuck run, then three periods that came meanwhile
            attempts[0] = fires()
        finally:
            model.release.set()
            await jobs.stop()
            await extraction.close()
    loud = [r for r in caplog.records if r.name.startswith("apscheduler") and r.levelno >= logging.WARNING]
    assert loud == []  # no "maximum number of running instances reached" each time
    quiet = [r for r in caplog.records if "still running" in r.getMessage() and SWEEP_JOB in r.getMessage()]
    assert len(quiet) == 1 and quiet[0].levelno == logging.INFO


def _postgres_config(tmp_path: Path, url: str) -> Path:
    raw = {
        "provider": {"type": "offline"},
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "m.db"), "databaseUrl": url, "embedding": {"provider": "none"}},
        "gateway": {"jobsEvery": "1s"},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


async def test_stopping_while_a_job_queries_postgresql_logs_no_traceback(
    tmp_path: Path, postgres_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    querying = asyncio.Event()

    async def slow_sweep(self: MemoryJobs) -> str:  # a job in the middle of a long statement
        querying.set()
        await self.engine.store.db.read("SELECT pg_sleep(120)")
        return "slept"

    monkeypatch.setattr(MemoryJobs, "sweep", slow_sweep)
    runtime = await Runtime.open(
        load_config(_postgres_config(tmp_path, postgres_url), env={}), [ChatChannel()]
    )
    with caplog.at_level(logging.DEBUG):
        await runtime.start()
        await asyncio.wait_for(querying.wait(), 90)
        await runtime.shutdown(drain_timeout=5)
    noisy = [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert noisy == [], [f"{r.name}: {r.getMessage()}" for r in noisy]
    assert "query cancellation" not in caplog.text and "Traceback" not in caplog.text


async def test_a_message_with_a_nul_is_repaired_and_answered_with_one_line_per_chat(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    raw = {
        "provider": {"type": "offline"},
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "m.db"), "embedding": {"provider": "none"}},
    }
    (tmp_path / "config.json").write_text(json.dumps(raw), encoding="utf-8")
    channel = ChatChannel()
    runtime = await Runtime.open(load_config(tmp_path / "config.json", env={}), [channel])
    try:
        await runtime.start(schedule=False)
        with caplog.at_level(logging.INFO):
            replies = [await channel.say(f"My dog\x00 is called Biscuit {n}") for n in range(3)]
            assert channel.deliver is not None  # another chat of the same person: its own one line
            await channel.deliver(InboundMessage("test", "c2", "u1", "hi\x00 there", message_id="c2-1"))
            await until(lambda: len(channel.replies) == 4, what="the other chat's answer")
            await asyncio.wait_for(runtime.loop.drain(), 30)  # each exchange is written after its send
        assert all(reply.startswith("[offline model]") for reply in replies)  # answered, not an apology
        turns = await runtime.engine.conversation.all_turns("test:u1")
        assert [t.content for t in turns] == [
            *(f"My dog\ufffd is called Biscuit {n}" for n in range(3)),
            "hi\ufffd there",
        ]
    finally:
        await runtime.close()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    repaired = [r.getMessage() for r in caplog.records if "U+FFFD" in r.getMessage()]
    assert len(repaired) == 2 and "test:c1" in repaired[0] and "test:c2" in repaired[1], repaired
    assert "Biscuit" not in caplog.text  # never the content
