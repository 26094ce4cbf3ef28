"""The operations endpoints (gateway/ops_http.py, gateway/metrics.py) over real HTTP, on a real runtime:
/healthz, /readyz's reasons, /metrics counting what the loop did, and the replica id in log lines."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from channels.base import Deliver, InboundMessage, OutboundMessage
from gateway.app import Runtime
from gateway.config import load_config
from gateway.ops_http import Operations, start_operations
from gateway.replica import ReplicaFormatter, replica_id, tag_log_lines
from localservers.openai_server import OpenAIStub, StubReply


class Recorder:
    name = "test"

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []
        self.deliver: Deliver | None = None

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)

    async def stop(self) -> None:
        pass


def _config(tmp_path: Path, stub: OpenAIStub, **gateway: object):
    raw = {
        "provider": {"apiKey": "sk-test-000000", "baseUrl": stub.base_url, "maxRetries": 0},
        "agent": {"workspace": str(tmp_path / "ws"), "tools": False},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "extraction": {"quietGap": "1h"},
            "embedding": {"provider": "none"},
        },
        "gateway": {"http": {"port": 0}, **gateway},
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


async def _get(url: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, response.headers.get("Content-Type", ""), await response.text()


def _samples(text: str) -> dict[str, float]:
    """``name{labels}`` → value, for every sample of the exposition."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            out[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return out


async def test_ready_only_between_start_and_stop_and_metrics_count_the_messages(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="first answer"), StubReply(content="no", status=500))
        channel = Recorder()
        runtime = await Runtime.open(_config(tmp_path, stub, replicaId="gw-a"), [channel])
        ops = await start_operations(runtime)
        try:
            assert ops.url is not None
            assert await _get(ops.url + "/healthz") == (
                200,
                "application/json; charset=utf-8",
                json.dumps({"alive": True, "replica": "gw-a"}),
            )
            status, _, body = await _get(ops.url + "/readyz")
            assert (status, json.loads(body)["reason"]) == (503, "starting")

            await runtime.start(schedule=False)
            ops.ready()
            status, _, body = await _get(ops.url + "/readyz")
            assert (status, json.loads(body)) == (200, {"ready": True, "replica": "gw-a"})

            assert channel.deliver is not None
            await channel.deliver(InboundMessage("test", "c1", "u1", "hello there", message_id="m1"))
            await channel.deliver(InboundMessage("test", "c1", "u1", "and again", message_id="m2"))
            await asyncio.wait_for(runtime.loop.drain(), 60)

            status, content_type, text = await _get(ops.url + "/metrics")
            assert status == 200 and content_type.startswith("text/plain")
            got = _samples(text)
            assert got["tierclaw_replica_info{replica=gw-a}"] == 1
            assert got["tierclaw_messages_received_total"] == 2
            assert got["tierclaw_messages_answered_total"] == 1  # "first answer"
            assert got["tierclaw_messages_failed_total"] == 1  # the model's 500: an apology went out
            assert got["tierclaw_reply_seconds_count"] == 2
            assert got["tierclaw_retrieval_seconds_count"] == 2
            assert got["tierclaw_inbox_backlog"] == 0
            assert got["tierclaw_extraction_backlog"] == 3  # two user turns and the one real reply
            assert got["tierclaw_dead_letters"] == 0
            assert got["tierclaw_database_up"] == 1
            assert got["tierclaw_lease_takeovers_total"] == 0

            ops.stopping()
            status, _, body = await _get(ops.url + "/readyz")
            assert (status, json.loads(body)["reason"]) == (503, "stopping")
        finally:
            await ops.stop()
            await runtime.close()


async def test_readyz_says_when_the_database_does_not_answer(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        runtime = await Runtime.open(_config(tmp_path, stub), [Recorder()])
        ops = await start_operations(runtime)
        try:
            ops.ready()
            assert await ops.not_ready_reason() is None
            await runtime.engine.close()  # the database goes away under a running gateway
            reason = await ops.not_ready_reason()
            assert reason is not None and reason.startswith("database unreachable: ")
            assert ops.url is not None
            status, _, text = await _get(ops.url + "/metrics")
            assert status == 200 and _samples(text)["tierclaw_database_up"] == 0
        finally:
            await ops.stop()
            await runtime.close()


async def test_without_a_port_nothing_listens_and_nothing_is_counted(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        config = _config(tmp_path, stub)
        config.gateway.http.port = None
        runtime = await Runtime.open(config, [Recorder()])
        try:
            ops = await start_operations(runtime)
            assert isinstance(ops, Operations)
            assert (ops.url, ops.metrics, runtime.loop.observer) == (None, None, None)
        finally:
            await runtime.close()


def test_each_log_line_starts_with_the_replica_id() -> None:
    logger = logging.getLogger("tests.replica")
    logger.propagate = False
    lines: list[str] = []

    class ListHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = ListHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    try:
        tag_log_lines("gw-1", logger)
        tag_log_lines("gw-2", logger)  # tagged again: the new id, one prefix
        logger.warning("[gateway] hello")
    finally:
        logger.removeHandler(handler)
    assert lines == ["[replica gw-2] WARNING tests.replica: [gateway] hello"]
    assert isinstance(handler.formatter, ReplicaFormatter)


def test_the_default_replica_id_differs_per_process() -> None:
    import os

    assert replica_id("gw-a") == "gw-a"
    assert replica_id().endswith(f"-{os.getpid()}")
