"""Filling in memory vectors: ``reindex`` (one resumable pass) and ``EmbeddingBackfill`` (the gateway's
background filler).

Why a separate pass at all: a memory is written first and embedded when possible. The embedder may be
failing (API down, rate limited), embeddings may have been switched on after years of memories, or the
model may have changed (another ``model_key``: its vectors are never compared with the old ones). In all
these cases the memory is stored without a usable vector, FTS still finds it, and this module makes up
the difference later, without anyone waiting for it.

Why walk by id: ``MemoryEngine.missing_embeddings`` returns the rows still lacking a vector of the model,
in id order after a cursor. Each batch is stored as soon as it is embedded, so a pass stopped at any point
(Ctrl-C, crash, embedder failure) has kept every completed batch, and the next pass finds only the rest:
nothing is embedded twice. The cursor also guarantees that a pass ends even when some rows cannot be
stored (edited between read and write): they lie behind the cursor and wait for the next pass.

Why row claims: several gateways on one database each run the backfill. Before embedding a batch, a pass
given ``RowClaims`` claims its rows in the database (``embedding_claims``, with a lease) and embeds only
those it got; another replica's pass walking the same rows skips them and goes on with the next, so the
replicas share the work instead of doing it twice (docs/scale-out.md, "Extraction"). Claims per row, not
one claim per pass: two replicas embed different rows at once, and a write on one replica never waits
for another's whole pass. A claim is dropped once its batch is stored; a replica that dies leaves its
claims to run out (``CLAIM_LEASE``), and a later pass embeds those rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from memory.engine import MemoryEngine
from memory.replica import default_replica
from memory.store.coordination_api import EmbeddingClaimRowsAPI
from memory.store.errors import is_database_error, store_was_closed
from memory.vectors.embedding import EmbeddingError

__all__ = ["EmbeddingBackfill", "EmbeddingError", "PassageEmbedder", "ReindexResult", "RowClaims", "reindex"]

log = logging.getLogger("tierclaw.memory")

# Texts per embedder call for ``tierclaw memory reindex``: large enough to amortise a model or API call,
# small enough that an interrupted run loses little work.
DEFAULT_BATCH_SIZE = 64
# The background filler uses smaller batches and pauses between them: a local model shares the CPU (and
# the engine its write lock) with the reply path, which must never wait behind a long backfill.
BACKFILL_BATCH_SIZE = 32
BACKFILL_PAUSE = 0.05
# A full pass runs at least this often even if nobody calls ``notify`` (catches anything missed).
BACKFILL_INTERVAL = 600.0
# After a failed pass: wait RETRY_INITIAL, doubling on every further failure up to RETRY_MAX.
RETRY_INITIAL = 30.0
RETRY_MAX = 600.0
# How long a claim on rows being embedded holds: longer than one batch's embedder call ever takes.
CLAIM_LEASE = 300.0


class PassageEmbedder(Protocol):
    """What a pass needs of an embedder: its ``model_key`` and passage embedding (a ``MemoryEmbedder``,
    usually a ``CachedEmbedder``, satisfies it)."""

    @property
    def model_key(self) -> str: ...

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(slots=True)
class ReindexResult:
    """What one pass did.

    ``total`` is how many memories lacked a vector when the pass started (raised if memories written
    during the pass were picked up too); ``embedded`` got one; ``skipped`` were edited between being read
    and stored, so their vector would have described the old text: the next pass embeds them again.
    """

    embedded: int = 0
    skipped: int = 0
    total: int = 0
    seconds: float = 0.0
    refused: int = 0  # texts the embedder refused on their own (e.g. over an API's limit): left without
    elsewhere: int = 0  # rows another replica's pass had claimed: it embeds them

    @property
    def done(self) -> int:
        """Memories handled so far (embedded, skipped, refused, or left to another replica)."""
        return self.embedded + self.skipped + self.refused + self.elsewhere


class RowClaims:
    """This replica's claims on the rows of one ``target`` ("memories" or "turns") it is about to embed,
    on the store's ``embedding_claims`` (see the module docstring)."""

    def __init__(
        self,
        rows: EmbeddingClaimRowsAPI,
        target: str,
        replica: str,
        *,
        lease: float = CLAIM_LEASE,
    ) -> None:
        self._rows = rows
        self.target = target
        self.replica = replica
        self.lease = lease
        self._generations: dict[int, int] = {}  # row id -> the generation of this replica's claim on it

    async def take(self, ids: Sequence[int]) -> set[int]:
        """The ids claimed for this replica: those no other replica holds with a live lease (the lease
        runs on the store's clock)."""
        taken = await self._rows.claim(self.target, ids, self.replica, self.lease)
        self._generations.update(taken)
        return set(taken)

    async def still_held(self, ids: Sequence[int]) -> set[int]:
        """Of ``ids`` (taken here), those still this replica's at the generation it took them with: the
        fence before their vectors are stored, so a pass that stalled past its lease stores nothing
        another replica took over."""
        mine = {i: self._generations[i] for i in ids if i in self._generations}
        return set(await self._rows.held(self.target, mine, self.replica))

    async def drop(self, ids: Sequence[int]) -> None:
        """Release the claims once the rows are stored (or given up on)."""
        for row_id in ids:
            self._generations.pop(row_id, None)
        await self._rows.release(self.target, ids, self.replica)


class VectorTarget(Protocol):
    """Rows that get vectors: ``engine.vectors`` (memories) or ``engine.conversation`` (kept turns)."""

    async def count_missing_embeddings(self, model_key: str, owner: str | None = None) -> int: ...

    async def missing_embeddings(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]: ...

    async def set_embeddings(self, model_key: str, items: Sequence[tuple[int, str, np.ndarray]]) -> int: ...


async def reindex(
    engine: VectorTarget,
    embedder: PassageEmbedder,
    *,
    owner: str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Callable[[int, int], None] | None = None,
    pause: float = 0.0,
    claims: RowClaims | None = None,
) -> ReindexResult:
    """Give every live memory (of ``owner``, or of everyone) a vector of ``embedder.model_key`` — or every
    kept turn, when ``engine`` is ``engine.conversation`` (memories: ``engine.vectors``).

    Walks the missing rows by id, ``batch_size`` at a time; each batch is embedded with one
    ``embed_passages`` call and stored at once, then ``progress(done, total)`` is called. An error from the
    embedder (``EmbeddingError``) or the database propagates after the completed batches were stored, so
    running it again resumes where it stopped. ``pause`` seconds are slept between batches (the background
    filler yields to the reply path this way). With ``claims`` (the gateway's filler), only the rows of a
    batch this replica claims are embedded; the others are another replica's (``result.elsewhere``).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    started = time.monotonic()
    model_key = embedder.model_key
    result = ReindexResult(total=await engine.count_missing_embeddings(model_key, owner))
    after_id = 0
    try:
        while True:
            batch = await engine.missing_embeddings(
                model_key, after_id=after_id, limit=batch_size, owner=owner
            )
            if not batch:
                break
            after_id = batch[-1][0]
            await _embed_claimed(engine, embedder, batch, model_key, claims, result, owner)
            result.total = max(result.total, result.done)
            if progress is not None:
                progress(result.done, result.total)
            if len(batch) < batch_size:
                break  # the walk reached the end; memories written from now on are the next pass's
            await asyncio.sleep(pause)
    finally:
        result.seconds = time.monotonic() - started
    return result


async def _embed_claimed(
    engine: VectorTarget,
    embedder: PassageEmbedder,
    batch: list[tuple[int, str, str]],
    model_key: str,
    claims: RowClaims | None,
    result: ReindexResult,
    owner: str | None = None,
) -> None:
    """Embed and store the rows of ``batch`` this replica holds (all of them without ``claims``), then
    release the claims; counts into ``result``. The rows claimed are read again first: another replica
    may have stored their vectors and dropped its claims between this pass's read and its claim, and a
    row embedded there is not embedded here again."""
    held: set[int] | None = None
    if claims is not None:
        held = await claims.take([row[0] for row in batch])
        result.elsewhere += len(batch) - len(held)
        if held:
            again = await engine.missing_embeddings(
                model_key, after_id=min(held) - 1, limit=len(batch), owner=owner
            )
            still = {row[0] for row in again} & held
            result.elsewhere += len(held) - len(still)
            batch = [row for row in batch if row[0] in still]
        else:
            batch = []
    try:
        if not batch:
            return
        items = await _embed_batch(embedder, batch, model_key)
        if claims is not None:  # the fence: rows taken over while this pass embedded are not stored
            kept = await claims.still_held([row[0] for row in items])
            items = [item for item in items if item[0] in kept]
        stored = await engine.set_embeddings(model_key, items)
        result.embedded += stored
        result.skipped += len(items) - stored
        result.refused += len(batch) - len(items)
    finally:
        if claims is not None and held:
            await claims.drop(sorted(held))


async def _embed_batch(
    embedder: PassageEmbedder, batch: list[tuple[int, str, str]], model_key: str
) -> list[tuple[int, str, np.ndarray]]:
    """(id, content, vector) for a batch of missing rows.

    When the batch fails, its texts are tried one by one: a single text the embedder always refuses
    (one over an API's token limit) must not stop every memory behind it from ever getting a vector.
    Texts that fail alone are left out; if every one fails, the embedder itself is down and the first
    error propagates.
    """
    texts = [content for _, _, content in batch]
    try:
        vectors = _checked(await embedder.embed_passages(texts), len(texts), model_key)
    except EmbeddingError:
        if len(batch) == 1:
            raise
    else:
        return [(memory_id, content, vectors[i]) for i, (memory_id, _, content) in enumerate(batch)]
    items: list[tuple[int, str, np.ndarray]] = []
    first_error: EmbeddingError | None = None
    for memory_id, _, content in batch:
        try:
            vector = _checked(await embedder.embed_passages([content]), 1, model_key)[0]
        except EmbeddingError as exc:
            first_error = first_error or exc
            log.debug("[memory] embedder %s refused memory %d", model_key, memory_id)
            continue
        items.append((memory_id, content, vector))
    if not items and first_error is not None:
        raise first_error
    return items


def _checked(vectors: np.ndarray, n: int, model_key: str) -> np.ndarray:
    """The embedder's output as (n, dim) float32, or an ``EmbeddingError`` (never a wrong row stored)."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] == 0:
        raise EmbeddingError(f"embedder {model_key} returned shape {arr.shape} for {n} texts")
    if not np.isfinite(arr).all():
        raise EmbeddingError(f"embedder {model_key} returned non-finite values")
    return arr


class EmbeddingBackfill:
    """The gateway's background filler: memories and kept conversation turns without a vector get one,
    without anyone waiting (``last_result`` is the memories' pass, ``last_turns_result`` the turns').

    ``start()`` runs a pass at once (memories from before embeddings were enabled), then one whenever
    ``notify()`` is called (a memory was written while the embedder was failing) or every ``interval``
    seconds. A failing embedder is logged once per streak of failures and retried after a backoff that
    doubles up to ``retry_max``; ``notify`` does not cut a backoff short, so a burst of writes during an
    outage does not hammer the embedder. ``stop()`` cancels the task; a pass interrupted this way keeps
    its completed batches. Closing the engine under a running pass ends the task quietly.

    ``embedder`` defaults to ``engine.embedder``, read at every pass (None: nothing to do until one is set).
    Each batch's rows are claimed for ``replica`` first (``RowClaims``): backfills of several gateways on
    one database embed each row once.
    """

    def __init__(
        self,
        engine: MemoryEngine,
        embedder: PassageEmbedder | None = None,
        *,
        batch_size: int = BACKFILL_BATCH_SIZE,
        pause: float = BACKFILL_PAUSE,
        interval: float = BACKFILL_INTERVAL,
        retry_initial: float = RETRY_INITIAL,
        retry_max: float = RETRY_MAX,
        replica: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._engine = engine
        self._embedder = embedder
        self.batch_size = batch_size
        self.pause = pause
        self.interval = interval
        self.retry_initial = retry_initial
        self.retry_max = max(retry_max, retry_initial)
        # Rows claimed before embedding, so replicas on one database share the work (module docstring).
        who = replica or default_replica()
        claim_rows = engine.store.embedding_claims
        self._claims = RowClaims(claim_rows, "memories", who), RowClaims(claim_rows, "turns", who)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # For status and tests: passes completed, failures in the current streak, the last good pass.
        self.passes = 0
        self.failures = 0
        self.last_result: ReindexResult | None = None
        self.last_turns_result: ReindexResult | None = None

    @property
    def running(self) -> bool:
        """Whether the background task is alive."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the background task (on the running loop); a second call does nothing."""
        if self.running:
            return
        self._stopping = False
        self._wake.set()  # first pass at once
        self._task = asyncio.get_running_loop().create_task(self._run(), name="memory-embedding-backfill")

    def notify(self) -> None:
        """Something may be missing a vector now: run a pass soon (after the current one, if any)."""
        self._wake.set()

    async def stop(self) -> None:
        """Cancel the task and wait for it to end; safe to call twice or without ``start``."""
        self._stopping = True
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        # asyncio.wait, not ``await task``: our own cancellation (if stop itself is cancelled) must still
        # propagate, while the task's CancelledError is the expected outcome.
        await asyncio.wait([task])
        if not task.cancelled() and task.exception() is not None:
            log.debug("[memory] embedding backfill ended with an error", exc_info=task.exception())

    async def _run(self) -> None:
        delay = self.retry_initial
        while not self._stopping:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel that arrives once
            # the event is already set, and stop() would wait for this task forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
            self._wake.clear()  # a notify during the pass below sets it again: another pass follows
            embedder = self._embedder if self._embedder is not None else self._engine.embedder
            if embedder is None:
                continue
            try:
                memory_claims, turn_claims = self._claims
                result = await reindex(
                    self._engine.vectors,
                    embedder,
                    batch_size=self.batch_size,
                    pause=self.pause,
                    claims=memory_claims,
                )
                turns = await reindex(
                    self._engine.conversation,
                    embedder,
                    batch_size=self.batch_size,
                    pause=self.pause,
                    claims=turn_claims,
                )
            except Exception as exc:
                if self._stopping or store_was_closed(exc):
                    log.debug("[memory] embedding backfill stopped: the engine is closed")
                    return
                self.failures += 1
                self._log_failure(exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.retry_max)
                self._wake.set()  # retry after the backoff, not at the next interval
                continue
            if self.failures:
                log.info("[memory] embedding backfill working again after %d failed attempts", self.failures)
            self.failures = 0
            delay = self.retry_initial
            self.passes += 1
            self.last_result = result
            self.last_turns_result = turns
            if result.done or turns.done:
                log.info(
                    "[memory] embedding backfill: %d memory and %d turn vectors (%s) in %.1fs, "
                    "%d changed meanwhile, %d refused by the embedder",
                    result.embedded,
                    turns.embedded,
                    embedder.model_key,
                    result.seconds + turns.seconds,
                    result.skipped,
                    result.refused + turns.refused,
                )
            if result.skipped:
                self._wake.set()  # the edited rows are behind this pass's cursor: fetch them now

    def _log_failure(self, exc: Exception, delay: float) -> None:
        """One WARNING per failure streak, the rest at DEBUG. Only an ``EmbeddingError``'s, a database
        error's or an OS error's message is shown above DEBUG: any other exception's text might quote a
        memory."""
        if isinstance(exc, EmbeddingError | OSError) or is_database_error(exc):
            what = f"{type(exc).__name__}: {exc}"
        else:
            what = f"{type(exc).__name__} (details at DEBUG)"
        if self.failures == 1:
            log.warning(
                "[memory] embedding backfill failed, memories stay searchable by text; retrying in %.0fs "
                "(further failures at DEBUG): %s",
                delay,
                what,
            )
        else:
            log.debug("[memory] embedding backfill failed again (%d in a row)", self.failures)
        log.debug("[memory] embedding backfill failure", exc_info=exc)
