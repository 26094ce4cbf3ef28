"""Messages per second through the whole gateway with tiered memory on vs off, and cold-start time.

    python -m bench.gateway_throughput [--chats N] [--messages M] [--embedding local|openai|none]
        [--vector-cache FILE.npz] [--query-cache off|on] [--json]

Everything runs through the production path: ``Runtime`` (config file → ``load_config``), the process
loop, the assistant, SQLite, and the real ``openai`` client talking HTTP to the local OpenAI-compatible
stub (localservers/openai_server.py) at zero latency, so the model costs nothing and what is left is the
gateway.

Each mode runs on a fresh temporary directory:

* memory ON (``memory.enabled: true``): before the clock starts, every chat owner gets a realistic store
  (200 memories by default, English and Chinese, some in named projects, plus a small Tier 1 profile), so
  the gate, ``known_projects``, retrieval (FTS + ranking + access-time touch) and the profile really run.
  The extraction quiet gap is 1 h and the token budget is at its maximum, so no background extraction
  (memory-model call) runs inside the timed window; buffering each turn (an INSERT, awaited on the reply
  path) *is* timed, as are Tier 0 history reads and writes.
* memory OFF (``memory.enabled: false``): file memory (MEMORY.md + daily notes) in the temp workspace;
  no retrieval, no buffering, no extraction. Tier 0 history still lives in SQLite.

N chats (one sender each, so N owners) × M messages are delivered all at once, round-robin over chats;
the loop answers each chat in order, at most ``agent.maxConcurrentChats`` (default 8) chats at a time.
Throughput is messages answered / wall time from the first deliver to the last reply sent (a bench
channel records ``send`` times). Reply latency is send time − deliver time per message, so it includes
waiting behind the chat's earlier messages. A few untimed warm-up messages run per mode first.

Embeddings (``--embedding``, default ``local`` as in the product; ``openai`` is served by the same stub's
``/v1/embeddings``; ``none`` is keyword search only) are set in the config file's ``memory.embedding``, so
``Runtime.open`` attaches the cached embedder, its warm-up and its backfill as in production. The preload
is embedded before the clock, every text once, into the engine's ``embedding_cache`` (``--vector-cache``
keeps the vectors in an .npz between runs, so a rerun skips the model); the write path then finds them
there and stores every memory with its vector. The clock starts only after the runtime's model warm-up
has finished and its backfill has completed a pass with nothing left to embed
(``count_missing_embeddings == 0``), so neither runs inside the timed window (checked: the JSON's
``backfill_passes_in_window`` and ``passage_embeds_in_window`` are 0). The bench's template messages
repeat a lot (263 distinct texts among the 760 retrieving messages at the default size), which real
chats rarely do, so by default (``--query-cache off``) the engine gets the same ``CachedEmbedder`` with its
in-process query LRU switched off and every retrieval pays for its query embedding; ``--query-cache on``
keeps the product's LRU. Query embeddings are timed where the engine calls the embedder.

Startup is measured in fresh subprocesses (``--startup-probe``): from spawning the interpreter to the
first reply sent for one message delivered right after ``start``, on a fresh database with memory on. It
therefore includes interpreter start, imports (openai, jieba, pydantic…), config loading, jieba's
dictionary load, schema creation and the first model round trip — what a user waits for. With
embeddings on, the model warm-up starts in the background at ``start``; the first reply's query embedding
waits for it (or, after ``memory.embedding.queryTimeoutMs``, goes keyword-only: the probe reports that).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from bench.bench_channel import BenchChannel
from bench.database_option import add_database_option, scratch_memory, store_name
from bench.embedding_option import add_embedding_args
from bench.report import emit_json
from bench.stub_process import stub_server
from bench.thread_cpu import ThreadClock
from bench.throughput_data import (
    _FIRING,
    CHANNEL,
    Owner,
    Preload,
    make_owners,
    messages_for,
    seed_files,
    seed_store,
    write_config,
    write_workspace,
)
from bench.throughput_embedding import Embedding, time_embedder, wait_until_embedder_ready
from bench.throughput_report import ModeResult, print_report, summarize
from bench.throughput_startup import measure_startup, probe
from channels.base import InboundMessage
from gateway.app import Runtime
from gateway.assistant import APOLOGY
from gateway.config import load_config
from gateway.event_loop import loop_name
from gateway.event_loop import run as run_on_gateway_loop
from gateway.notices import FAILURE_REPLY
from memory.model.keeper import head_usable
from memory.retrieval.gate import should_retrieve

DEFAULT_CHATS = 20
DEFAULT_MESSAGES = 50
DEFAULT_MEMORIES = 200
WARMUP_MESSAGES = 4
SERIAL_MESSAGES = 40  # one at a time, after the timed window (not part of the throughput)
STARTUP_RUNS = 3


# --------------------------------------------------------------------------- one mode


async def run_mode(
    *,
    memory: bool,
    base_url: str,
    chats: int,
    messages: int,
    per_owner: int,
    tmp: Path,
    embedding: Embedding | None = None,
    database_url: str = "",
) -> ModeResult:
    """Seed, open, wait for the embedder, warm up, then deliver chats × messages at once and wait for
    every reply."""
    embedding = embedding or Embedding()
    owners = make_owners(chats)
    config = load_config(
        write_config(tmp, base_url, memory=memory, embedding=embedding, database_url=database_url),
        env=embedding.env(),
    )
    write_workspace(config.workspace_path())
    preload = Preload()
    if memory:
        settings = config.memory.embedding.settings()
        embed = settings if settings.provider != "none" else None
        preload = await seed_store(config.memory_target(), owners, per_owner, embed, embedding.vector_cache)
        if preload.missing:
            raise RuntimeError(f"{preload.missing} preloaded memories have no vector")
    else:
        seed_files(config.workspace_path(), owners)
    plan = [(o, messages_for(o, messages)) for o in owners]
    warm = [make_owners(chats)[i % chats] for i in range(WARMUP_MESSAGES)]
    channel = BenchChannel()
    runtime = await Runtime.open(config, [channel])
    try:
        timer = None
        if runtime.engine.embedder is not None:
            timer = await time_embedder(runtime, config, query_cache=embedding.query_cache)
        await runtime.start(schedule=False, freeze_heap=True)  # as tierclaw gateway
        ready_wait = await wait_until_embedder_ready(runtime) if timer is not None else 0.0
        # Warm-up (untimed): separate chats of the same owners, so per-owner caches are as in a running
        # gateway but the timed chats start with empty histories.
        for i, o in enumerate(warm):
            text = o.fill(_FIRING[i % len(_FIRING)])
            await runtime.loop.deliver(InboundMessage(CHANNEL, f"warm{i}", o.sender_id, text, f"warm{i}"))
        await runtime.loop.drain()
        runtime.assistant.memory_timing.samples_ms.clear()
        channel.reset()

        inbound = [
            InboundMessage(CHANNEL, o.chat_id, o.sender_id, texts[j], f"{o.chat_id}:{j}")
            for j in range(messages)
            for o, texts in plan
        ]
        projects = {o.owner: frozenset(o.projects) for o in owners}
        # With the bundled embedder the rules only refuse what a rule can know: every other message has
        # its query embedded for the learned head (issue 35).
        learned = head_usable(runtime.engine.embedder)
        fired = sum(
            should_retrieve(m.text, projects[f"{CHANNEL}:{m.sender_id}"], learned=learned) for m in inbound
        )
        delivered_at: dict[str, float] = {}
        lru_hits = 0
        if timer is not None:
            timer.query_ms.clear()
            timer.failed = timer.passage_calls = 0
            lru_hits = timer.inner.query_hits
        passes = runtime.backfill.passes if runtime.backfill is not None else 0
        threads = ThreadClock.now()
        cpu_started = time.process_time()
        started = time.perf_counter()
        for m in inbound:
            delivered_at[m.message_id] = time.perf_counter()
            await runtime.loop.deliver(m)
        intake = time.perf_counter() - started
        await runtime.loop.drain()
        if len(channel.sent_at) != len(inbound):
            raise RuntimeError(f"{len(channel.sent_at)} replies for {len(inbound)} messages")
        failed = [t for t in channel.texts.values() if t in (APOLOGY, FAILURE_REPLY)]
        if failed:
            raise RuntimeError(f"{len(failed)} of {len(inbound)} replies were failures: {failed[0]!r}")
        wall = max(channel.sent_at.values()) - started
        cpu = time.process_time() - cpu_started
        thread_cpu = threads.roles()
        passes = (runtime.backfill.passes if runtime.backfill is not None else 0) - passes
        latencies = [(channel.sent_at[k] - t) * 1000.0 for k, t in delivered_at.items()]
        buffered = (await runtime.engine.stats()).get("buffered_turns", 0) if memory else 0
        timed_memory = list(runtime.assistant.memory_timing.samples_ms)
        query_ms, query_hits, passage_calls = [], 0, 0
        if timer is not None:
            query_ms = list(timer.query_ms)
            query_hits = timer.inner.query_hits - lru_hits
            passage_calls = timer.passage_calls
            timer.query_ms.clear()
        serial_memory, serial_reply = await _serial(runtime, channel, plan)
        return ModeResult(
            memory=memory,
            messages=len(inbound),
            wall_s=wall,
            cpu_s=cpu,
            model_cpu_s=None if thread_cpu is None else thread_cpu["model"],
            thread_cpu_s=thread_cpu,
            intake_s=intake,
            latencies_ms=latencies,
            memory_ms=timed_memory,
            gate_fired=fired if memory else 0,
            memories=preload.memories,
            buffered_turns=int(buffered),
            max_concurrent=config.agent.max_concurrent_chats,
            serial_memory_ms=serial_memory,
            serial_reply_ms=serial_reply,
            preload=preload,
            ready_wait_s=ready_wait,
            query_embed_ms=query_ms,
            serial_query_embed_ms=list(timer.query_ms) if timer is not None else [],
            query_embed_failed=timer.failed if timer is not None else 0,
            query_cache_hits=query_hits,
            passage_embeds_in_window=passage_calls,
            backfill_passes_in_window=passes,
        )
    finally:
        await runtime.close()


async def _serial(
    runtime: Runtime, channel: BenchChannel, plan: list[tuple[Owner, list[str]]]
) -> tuple[list[float], list[float]]:
    """After the timed window: SERIAL_MESSAGES more messages in the same chats, one at a time.

    Under load the memory samples also hold time spent waiting for the event loop and the shared
    SQLite connection; alone they show what the memory steps themselves cost. The chats keep their full
    history, so the serial reply time is the per-message cost of the timed run without queueing.
    """
    samples = runtime.assistant.memory_timing.samples_ms
    samples.clear()
    channel.reset()
    reply_ms = []
    for k in range(SERIAL_MESSAGES):
        owner, texts = plan[k % len(plan)]
        message_id = f"serial{k}"
        msg = InboundMessage(CHANNEL, owner.chat_id, owner.sender_id, texts[k % len(texts)], message_id)
        started = time.perf_counter()
        await runtime.loop.deliver(msg)
        await runtime.loop.drain()
        reply_ms.append((channel.sent_at[message_id] - started) * 1000.0)
    return list(samples), reply_ms


T = TypeVar("T")


async def on_loop(work: Awaitable[T]) -> tuple[str, T]:
    """``work``'s result with the kind of event loop it ran on ("uvloop" or "asyncio")."""
    return loop_name(asyncio.get_running_loop()), await work


async def run_modes(
    base_url: str,
    chats: int,
    messages: int,
    per_owner: int,
    rounds: int,
    embedding: Embedding | None = None,
    database: str | None = None,
) -> tuple[list[ModeResult], list[ModeResult]]:
    """``rounds`` × (memory ON, then OFF), each run on its own fresh temporary directory.

    Alternating the modes spreads slow moments of a shared machine over both of them.
    """
    on: list[ModeResult] = []
    off: list[ModeResult] = []
    for _ in range(rounds):
        for memory, out in ((True, on), (False, off)):
            scratch = database if memory else None  # memory OFF keeps no database
            with (
                tempfile.TemporaryDirectory(prefix="tierclaw-bench-") as tmp,
                scratch_memory(scratch) as target,
            ):
                out.append(
                    await run_mode(
                        memory=memory,
                        base_url=base_url,
                        chats=chats,
                        messages=messages,
                        per_owner=per_owner,
                        tmp=Path(tmp),
                        embedding=embedding,
                        database_url=target if scratch else "",
                    )
                )
    return on, off


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.gateway_throughput", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--chats", type=int, default=DEFAULT_CHATS, help=f"chats/owners (default {DEFAULT_CHATS})"
    )
    parser.add_argument(
        "--messages",
        type=int,
        default=DEFAULT_MESSAGES,
        help=f"messages per chat (default {DEFAULT_MESSAGES})",
    )
    parser.add_argument(
        "--memories",
        type=int,
        default=DEFAULT_MEMORIES,
        help=f"Tier 2 memories seeded per owner in the ON run (default {DEFAULT_MEMORIES})",
    )
    parser.add_argument(
        "--startup-runs",
        type=int,
        default=STARTUP_RUNS,
        help=f"startup subprocesses (default {STARTUP_RUNS})",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="ON/OFF pairs to run; rates are the median over rounds (default 1)",
    )
    parser.add_argument(
        "--stub",
        choices=("process", "thread"),
        default="process",
        help="run the stub model in a child process (default) or in a thread of this process",
    )
    add_embedding_args(parser)
    # --embedding openai talks to the stub's /v1/embeddings unless a base URL is given.
    parser.set_defaults(embedding_base_url=None)
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="an .npz of passage vectors kept between runs (outside the repo, e.g. /tmp): pre-fills the "
        "engine's embedding cache before the preload, and is extended with what had to be embedded",
    )
    parser.add_argument(
        "--query-cache",
        choices=("off", "on"),
        default="off",
        help="the in-process query-embedding LRU: off (default, every retrieval embeds its query) or on",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_database_option(parser)
    parser.add_argument("--startup-probe", nargs=2, metavar=("BASE_URL", "SPAWNED"), help=argparse.SUPPRESS)
    parser.add_argument("--probe-embedding", default=Embedding().to_json(), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.startup_probe:
        base_url, spawned = args.startup_probe
        timing = probe(base_url, float(spawned), Embedding.from_json(args.probe_embedding))
        print(json.dumps(run_on_gateway_loop(timing)))
        return 0
    if args.chats < 1 or args.messages < 1:
        parser.error(f"--chats and --messages must be at least 1 (got {args.chats} and {args.messages})")
    if args.memories < 0 or args.startup_runs < 1 or args.rounds < 1:
        parser.error("--memories must be >= 0, --startup-runs and --rounds >= 1")
    if args.embedding == "openai" and args.embedding_base_url is not None and not args.embedding_model:
        parser.error("--embedding openai with --embedding-base-url needs --embedding-model")
    embedding = Embedding(
        provider=args.embedding,
        model=args.embedding_model,
        base_url=args.embedding_base_url,
        dimensions=args.embedding_dimensions,
        query_cache=args.query_cache == "on",
        vector_cache=args.vector_cache,
    )

    with stub_server(args.stub) as base_url:
        startups = measure_startup(base_url, args.startup_runs, embedding)
        loop_kind, (on, off) = run_on_gateway_loop(
            on_loop(
                run_modes(
                    base_url, args.chats, args.messages, args.memories, args.rounds, embedding, args.database
                )
            )
        )
    result = summarize(on, off, startups, args.chats, embedding)
    result["event_loop"] = loop_kind  # as tierclaw gateway runs: uvloop's when installed
    result["store"] = store_name(args.database)
    result["stub"] = args.stub
    print_report(result)
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
