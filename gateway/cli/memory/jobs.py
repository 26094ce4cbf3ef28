"""The subcommands that run memory jobs now: flush the buffer, retry dead letters, compress, reindex
(with a progress bar)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import TYPE_CHECKING

from gateway.cli.memory.common import CliError, fail, say
from gateway.cli.memory.progress import ProgressBar
from gateway.config import Config
from memory.engine import MemoryEngine
from memory.text.wording import plural
from memory.vectors.cache import CachedEmbedder, build_cached_embedder

if TYPE_CHECKING:
    from memory.vectors.embedding import EmbeddingSettings

log = logging.getLogger("tierclaw.cli")


async def _with_memory_jobs(engine: MemoryEngine, args: argparse.Namespace, body) -> int:
    """Build the configured memory model, extraction service and jobs around ``engine`` for ``body``."""
    # Imported here: the message-path modules pull in openai and apscheduler, which the browsing
    # commands never need.
    from gateway.app import memory_services
    from gateway.providers import build_models

    models = build_models(args.loaded_config, engine.embedder)
    extraction, jobs = memory_services(args.loaded_config, engine, models.memory)
    try:
        return await body(extraction, jobs, models.memory.label)
    finally:
        await extraction.close()
        await models.close()


async def run_retry(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from memory.pipeline.buffer import ExtractionBuffer

    owner = args.owner if args.owner_given else None
    count = await ExtractionBuffer(engine.store.buffer).requeue_dead(owner)
    if not count:
        say(args, "no dead letters to re-queue", {"requeued": 0, "extracted": []})
        return 0
    if not args.now:
        later = "the gateway extracts them at the owner's next message or the daily sweep (or use --now)"
        say(args, f"re-queued {count} turns\n{later}", {"requeued": count, "extracted": []})
        return 0

    async def run(extraction, _jobs, label: str) -> int:
        owners = [b.owner for b in await extraction.buffer.backlog(owner)]
        failed = 0
        lines, extracted = [f"re-queued {count} turns"], []
        for who in owners:
            result = await extraction.flush(who, force=True)
            failed += result.failed
            lines.append(f"{who}: {result.turns} turns extracted with {label}, {result.facts} facts")
            extracted.append({"owner": who, "messages": result.turns, "memories": result.facts})
        say(args, "\n".join(lines), {"requeued": count, "model": label, "extracted": extracted})
        return 1 if failed else 0

    return await _with_memory_jobs(engine, args, run)


# ``memory flush`` has no deadline of its own: the person asked for it and watches it (Ctrl-C stops it,
# and what is not extracted stays buffered).
FLUSH_WAIT_SECONDS = 24 * 3600.0


async def run_flush(engine: MemoryEngine, args: argparse.Namespace) -> int:
    if args.all and args.owner_given:
        raise CliError("use either --owner OWNER or --all, not both")
    owner = args.owner if args.owner_given else None

    async def run(extraction, _jobs, label: str) -> int:
        backlog = await extraction.buffer.backlog(owner)
        if not backlog:
            text = "nothing to flush: no buffered messages" + (f" for {owner}" if owner else "")
            say(args, text, {"messages": 0, "memories": 0, "summaries": 0, "failed": 0, "still_buffered": 0})
            return 0
        total_turns = sum(item.turns for item in backlog)
        print(
            f"extracting {total_turns} buffered messages of {len(backlog)} owner(s) with {label}…",
            file=sys.stderr,
        )
        with ProgressBar("extracting", "messages") as bar:
            bar(0, total_turns)

            def progress(who: str, result) -> None:
                failed = f", {plural(result.failed, 'failed batch')} left for retry" if result.failed else ""
                bar.note(
                    f"{who}: {plural(result.turns, 'message')} -> {plural(result.facts, 'memory')}{failed}"
                )
                bar(min(bar.done + result.turns, total_turns), total_turns)

            if owner is None:
                result = await extraction.flush_all(FLUSH_WAIT_SECONDS, progress)
            else:
                result = await extraction.flush(owner, force=True)
                progress(owner, result)
        left = await extraction.buffer.pending_turns(owner)
        line = (
            f"flushed {plural(result.turns, 'message')} into {plural(result.facts, 'memory')} and "
            f"{plural(result.events, 'summary')}"
        )
        if left:
            line += f"; {left} messages still buffered (a failing memory model: see tierclaw status)"
        counts = {"messages": result.turns, "memories": result.facts, "summaries": result.events}
        say(args, line, {**counts, "failed": result.failed, "still_buffered": left, "model": label})
        return 1 if result.failed else 0

    return await _with_memory_jobs(engine, args, run)


async def run_compress(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.scheduler import DAILY_JOB, WEEKLY_JOB

    async def run(_extraction, jobs, label: str) -> int:
        name = DAILY_JOB if args.daily else WEEKLY_JOB
        outcome = await jobs.run(name)
        say(args, f"{name} ({label}): {outcome}", {"job": name, "model": label, "outcome": outcome})
        return 1 if "failed" in outcome else 0

    return await _with_memory_jobs(engine, args, run)


# --------------------------------------------------------------------------- embeddings


def embedding_settings(config: Config) -> EmbeddingSettings:
    """The embedding settings of ``config`` (``memory.embedding``; a test may substitute them here)."""
    return config.memory.embedding.settings()


def configured_embedder(config: Config, engine: MemoryEngine) -> CachedEmbedder | None:
    """The configured embedder behind the vector cache, or None when embeddings are off.

    Nothing loads until a command embeds something (``search`` ranks like the assistant, writes get
    their vectors and semantic dedup); ``list``, ``stats`` and ``export`` never touch the model.
    """
    try:
        return build_cached_embedder(embedding_settings(config), engine.store.vectors)
    except ValueError as exc:
        raise CliError(f"memory.embedding: {exc}") from None


def _reindex_embedder(engine: MemoryEngine) -> CachedEmbedder:
    """The configured embedder behind the persistent vector cache; CliError (exit 1) when embeddings are off.

    The cache means a reindex after switching models back and forth reuses the vectors made before.
    """
    embedder = engine.embedder if isinstance(engine.embedder, CachedEmbedder) else None
    if embedder is None:
        raise CliError('embeddings are off: set memory.embedding.provider to "local" or "openai"', 1)
    return embedder


def _memories(n: int) -> str:
    return plural(n, "memory")


async def run_reindex(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from memory.vectors.reindex import EmbeddingError, reindex

    owner = args.owner if args.owner_given else None
    scope = f" of {owner}" if owner else ""
    embedder = _reindex_embedder(engine)  # closed by _with_engine
    model_key = embedder.model_key
    # --turns: the kept conversation turns (conversation_search) instead of the memories.
    target = engine.conversation if args.turns else engine.vectors
    noun = "turns" if args.turns else "memories"
    what = "kept turn" if args.turns else "live memory"
    missing = await target.count_missing_embeddings(model_key, owner)
    nothing = {"model": model_key, "target": noun, "embedded": 0, "skipped": 0, "refused": 0}
    if not missing:  # said at once, without a bar that would only count to zero
        say(args, f"nothing to reindex: every {what}{scope} has a {model_key} vector", nothing)
        return 0
    progress = ProgressBar(f"embedding with {model_key}", noun)
    try:
        with progress:
            # Known before the first batch, so that an early Ctrl-C or failure can say "0 of N", and the
            # bar shows up while a local model is still loading.
            progress(0, missing)
            result = await reindex(
                target, embedder, owner=owner, batch_size=args.batch_size, progress=progress
            )
    except EmbeddingError as exc:
        fail(str(exc), 1)
        if progress.done:
            print(
                f"{progress.done} of {progress.total} {noun}{scope} were embedded and kept; "
                "run tierclaw memory reindex again to resume",
                file=sys.stderr,
            )
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl-C: asyncio.run cancels this task (or the interrupt lands here directly). The batches stored
        # so far stay; the exit status is the usual one for SIGINT.
        print(
            f"interrupted after {progress.done} of {progress.total} {noun}{scope}; finished batches are "
            "saved, run tierclaw memory reindex again to resume",
            file=sys.stderr,
        )
        return 130
    if not result.done:  # what was missing was embedded meanwhile (the gateway's backfill)
        say(args, f"nothing to reindex: every {what}{scope} has a {model_key} vector", nothing)
        return 0
    rate = result.done / result.seconds if result.seconds > 0 else 0.0
    count = plural(result.embedded, "turn") if args.turns else _memories(result.embedded)
    line = f"embedded {count}{scope} with {model_key}"
    line += f" in {result.seconds:.1f}s ({rate:.0f}/s)"
    if result.skipped:
        line += f"; {result.skipped} changed while being embedded: run it again to embed them"
    if result.refused:
        line += f"; {result.refused} refused by the embedder (--log-level DEBUG says which), left without"
    done = {"embedded": result.embedded, "skipped": result.skipped, "refused": result.refused}
    say(args, line, {**nothing, **done, "seconds": round(result.seconds, 3)})
    return 0
