"""Embeddings in a running tierclaw: config → ``Runtime.open`` → embedder, warm-up and backfill → ``close``.

Real parts: the config loader, ``Runtime`` with its loop and commands, SQLite, the bundled local model, and
the real ``openai`` client against the local OpenAI-compatible stub (tests/openai_stub.py) for both the
chat model and, where configured, the embeddings API.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from gateway.app import Runtime
from gateway.config import Config, load_config
from localservers.openai_server import OpenAIStub, StubReply, embedding_inputs_of
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import LOCAL_MODEL_KEY
from memory.vectors.reindex import EmbeddingBackfill
from tests.support.typed_channel import ChatChannel
from tests.support.waiting import until

OWNER = "test:u1"
BACKGROUND_TASKS = {"memory-embedding-backfill", "embedder-warm-up", "embed-queries"}
EMBEDDING_KEY = "sk-emb-5566778899"

HANG_S = 120.0  # how long the stand-in's backfill batch hangs: far above any close


def make_config(
    tmp_path: Path, stub: OpenAIStub, embedding: dict | None = None, env: dict[str, str] | None = None
) -> Config:
    raw: dict = {
        "provider": {
            "apiKey": "sk-test-000000",
            "baseUrl": stub.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "memory.db"), "extraction": {"quietGap": "1h"}},
        "timezone": "UTC",
    }
    if embedding is not None:
        raw["memory"]["embedding"] = embedding
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env=env or {})


async def eventually(condition: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.02)


def background_tasks() -> set[str]:
    return {t.get_name() for t in asyncio.all_tasks() if not t.done()} & BACKGROUND_TASKS


async def end_background_tasks() -> None:
    """Cancel what a failed stop left running (so a failing test does not hang the session)."""
    for task in [t for t in asyncio.all_tasks() if t.get_name() in BACKGROUND_TASKS and not t.done()]:
        task.cancel()
        await asyncio.wait([task], timeout=5)


async def closed(runtime: Runtime, timeout: float = 30.0) -> None:
    """``runtime.close()``, failing the test (instead of hanging it) if it does not return in time."""
    try:
        await asyncio.wait_for(runtime.close(), timeout)
    except TimeoutError:
        await end_background_tasks()
        with contextlib.suppress(Exception):
            await runtime.engine.close()
        raise AssertionError(f"Runtime.close() did not return within {timeout} s") from None


async def test_default_config_attaches_the_local_model_and_backfills_remember(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        channel = ChatChannel()
        runtime = await Runtime.open(make_config(tmp_path, stub), [channel])
        engine = runtime.engine
        try:
            assert isinstance(engine.embedder, CachedEmbedder)
            assert engine.embedder.model_key == LOCAL_MODEL_KEY
            assert runtime.backfill is not None and not runtime.backfill.running  # nothing runs before start
            assert engine.writer.on_vectors_missing == runtime.backfill.notify
            assert engine.embedding.query_timeout == 1.0  # memory.embedding.queryTimeoutMs default

            await runtime.start(schedule=False)
            assert runtime.backfill.running
            reply = await channel.say("/remember I adopted a golden retriever puppy")
            assert reply.startswith("Remembered [")
            (memory,) = await engine.list(OWNER)

            async def embedded() -> bool:
                return await engine.vectors.count_missing_embeddings(LOCAL_MODEL_KEY) == 0

            await eventually(embedded, 60, "the backfill did not embed the /remember memory")
            assert engine.embedder.dim == 384
            vectors = await engine.vectors.of_owner(OWNER)
            assert vectors is not None and list(vectors.ids) == [memory.id]

            engine.embedding.query_timeout = 30  # the assertion below is about recall, not about the bound
            hits = await engine.search(OWNER, "what pet do I have?")  # no shared word: the vector finds it
            assert [h.id for h in hits] == [memory.id]
            assert stub.embedding_requests == []  # the local model never calls an API
        finally:
            await closed(runtime)
        assert not runtime.backfill.running
        assert background_tasks() == set()


@pytest.mark.parametrize("how", ["config", "env"])
async def test_provider_none_means_keyword_only_and_no_backfill(tmp_path: Path, how: str) -> None:
    with OpenAIStub() as stub:
        if how == "config":
            config = make_config(tmp_path, stub, {"provider": "none"})
        else:
            config = make_config(tmp_path, stub, env={"TIERCLAW_EMBEDDING_PROVIDER": "none"})
        assert config.memory.embedding.provider == "none"
        channel = ChatChannel()
        runtime = await Runtime.open(config, [channel])
        engine = runtime.engine
        try:
            assert engine.embedder is None
            assert runtime.backfill is None
            assert engine.writer.on_vectors_missing is None
            await runtime.start(schedule=False)
            assert background_tasks() == set()
            assert (await channel.say("/remember I adopted a golden retriever puppy")).startswith(
                "Remembered"
            )
            # no embedder and no backfill task (just checked): nobody can embed it
            assert await engine.vectors.count_missing_embeddings(LOCAL_MODEL_KEY) == 1
            rows = await engine.store.db.read("SELECT embedding, embedding_model FROM memories")
            assert [tuple(r) for r in rows] == [(None, None)]
            assert [h.content for h in await engine.search(OWNER, "golden retriever")] == [
                "I adopted a golden retriever puppy"
            ]
            assert await engine.search(OWNER, "what pet do I have?") == []
        finally:
            await closed(runtime)
        assert stub.embedding_requests == []


async def test_openai_provider_at_the_stub_embeds_and_backfills(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        config = make_config(
            tmp_path,
            stub,
            {
                "provider": "openai",
                "model": "emb-model",
                "baseUrl": stub.base_url,
                "apiKey": EMBEDDING_KEY,
                "dimensions": 8,
                "queryTimeoutMs": 5000,
            },
        )
        channel = ChatChannel()
        runtime = await Runtime.open(config, [channel])
        engine = runtime.engine
        try:
            assert engine.embedder is not None and engine.embedder.model_key == "openai:emb-model@8"
            assert engine.embedding.query_timeout == 5.0
            assert stub.embedding_requests == []  # nothing is contacted before start

            await runtime.start(schedule=False)
            assert await stub.await_for(lambda s: "warm up" in s.embedding_inputs())  # the warm-up query
            assert (await channel.say("/remember I prefer oolong tea")).startswith("Remembered")

            async def embedded() -> bool:
                return await engine.vectors.count_missing_embeddings("openai:emb-model@8") == 0

            await eventually(embedded, 60, "the backfill did not embed the /remember memory")
            assert "I prefer oolong tea" in stub.embedding_inputs()
            for body, headers in zip(stub.embedding_requests, stub.embedding_request_headers, strict=True):
                assert body["model"] == "emb-model" and body["dimensions"] == 8
                assert headers["authorization"] == f"Bearer {EMBEDDING_KEY}"  # its own key, not the chat one

            # A memory written on the extraction path is embedded at once (one more request, no backfill).
            before = len(stub.embedding_requests)
            await engine.write(OWNER, Fact(content="Lives in Hangzhou"))
            assert len(stub.embedding_requests) == before + 1
            assert await engine.vectors.count_missing_embeddings("openai:emb-model@8") == 0
            hits = await engine.search(OWNER, "Lives in Hangzhou")
            assert hits[0].content == "Lives in Hangzhou"
        finally:
            await closed(runtime)
        assert background_tasks() == set()


async def test_close_stops_a_backfill_in_the_middle_of_a_pass(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def slow_passages(body: dict) -> StubReply | None:
        if embedding_inputs_of(body) == ["warm up"]:
            return None  # the warm-up query is answered at once
        return StubReply(delay=HANG_S)  # a backfill batch hangs

    with OpenAIStub() as stub:
        stub.embedding_responder = slow_passages
        config = make_config(
            tmp_path,
            stub,
            {"provider": "openai", "model": "emb-model", "baseUrl": stub.base_url, "dimensions": 8},
        )
        runtime = await Runtime.open(config, [ChatChannel()])
        engine = runtime.engine
        with caplog.at_level(logging.DEBUG):
            await runtime.start(schedule=False)
            for i in range(3):
                await engine.write(OWNER, Fact(content=f"memory number {i} about topic {i}"), embed=False)
            assert await stub.await_for(lambda s: "memory number 0 about topic 0" in s.embedding_inputs(), 30)
            assert runtime.backfill is not None and runtime.backfill.running
            # The hanging request is cancelled, not waited for: waiting would take HANG_S; the ceiling
            # only decides how long a broken close takes to fail (tests/README.md).
            await closed(runtime, HANG_S / 2)
            gc.collect()
            await asyncio.sleep(0)
        assert not runtime.backfill.running
        assert background_tasks() == set()
        # Only our own tasks count: gc.collect() may also report garbage other tests left behind.
        problems = [
            r.getMessage()
            for r in caplog.records
            if r.levelno >= logging.WARNING
            and ("backfill" in r.getMessage() or any(name in r.getMessage() for name in BACKGROUND_TASKS))
        ]
        assert problems == []


async def test_close_right_after_start_while_the_local_model_warms_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with OpenAIStub() as stub:
        runtime = await Runtime.open(make_config(tmp_path, stub), [ChatChannel()])
        with caplog.at_level(logging.WARNING):
            await runtime.start(schedule=False)
            await closed(runtime)
            gc.collect()
            await asyncio.sleep(0)
        assert runtime.backfill is not None and not runtime.backfill.running
        assert background_tasks() == set()
        assert [r.getMessage() for r in caplog.records] == []


async def test_file_memory_runs_without_an_embedder(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        config = make_config(tmp_path, stub, env={"TIERCLAW_MEMORY_ENABLED": "false"})
        assert not config.memory.enabled and config.memory.embedding.provider == "local"
        runtime = await Runtime.open(config, [ChatChannel()])
        try:
            assert runtime.engine.embedder is None and runtime.backfill is None
            await runtime.start(schedule=False)
            assert background_tasks() == set()
        finally:
            await closed(runtime)


async def test_backfill_stop_right_after_a_notify_ends_the_task(engine: MemoryEngine) -> None:
    """What ``Runtime.close`` relies on: ``stop()`` ends the task whenever it comes, e.g. in the same
    loop turn as a ``notify()`` (a /remember just before shutdown)."""
    hung: list[int] = []
    for turns in range(4):
        backfill = EmbeddingBackfill(engine, pause=0, interval=3600)
        backfill.start()
        # The start's wake-up is taken (this engine has no embedder: the pass ends there, with no await
        # before the next wait): the task waits for the next one.
        await until(lambda b=backfill: not b._wake.is_set(), what="the first wake-up taken")
        backfill.notify()
        for _ in range(turns):
            await asyncio.sleep(0)
        try:
            await asyncio.wait_for(backfill.stop(), 30)  # a ceiling: a hang never ends
        except TimeoutError:
            hung.append(turns)
            await end_background_tasks()
        assert not backfill.running
    assert hung == [], f"stop() hung when it came {hung} loop turns after notify()"
