"""The extraction service (docs/architecture.md, "Extraction and compression"): buffered turns become Tier
2 facts and a Tier 3 summary.

Every message is written to the buffer first (``record``); extraction runs later, per owner, when one of
three triggers fires: a quiet gap with no new message from the owner (default 3 min), the owner's buffer
reaching the token budget (default ~6000 estimated tokens), or the daily sweep (``sweep``, scheduled by
the gateway). Nothing here is awaited on the reply path except the buffer INSERT.

A failed call (model error, invalid JSON) leaves the turns in the buffer and schedules a retry with
exponential backoff; after ``max_attempts`` failures the turns become dead letters. A batch commits as one
transaction: its turns leave the buffer, its facts and its summary are written, all or none — a crash
half-way leaves the turns buffered and nothing written. The removal comes first and is the batch's claim:
if another run already committed some of these turns, the batch is dropped instead of written twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from memory.clock import from_db, utcnow
from memory.engine import MemoryEngine
from memory.model.protocol import Extraction, MemoryModel, Turn
from memory.pipeline.buffer import BufferedTurn, ExtractionBuffer
from memory.records import Fact, WriteResult
from memory.scratchpad import fit
from memory.text.token_count import estimate_tokens
from memory.writes import validated

log = logging.getLogger("tierclaw.memory")


@dataclass(slots=True)
class ExtractionSettings:
    """The triggers and retry policy (``memory.extraction`` in the config)."""

    quiet_gap: float = 180.0
    token_budget: int = 6000
    max_attempts: int = 5
    retry_backoff: float = 60.0
    scratchpad: bool = False  # after each batch, let the memory model update the person's scratchpad


@dataclass(slots=True)
class FlushResult:
    """What one flush of an owner's buffer did."""

    batches: int = 0
    turns: int = 0
    facts: int = 0
    events: int = 0
    failed: int = 0
    dead: int = 0

    def add(self, other: FlushResult) -> None:
        """Count ``other`` into this result (several owners, several flushes)."""
        for name in ("batches", "turns", "facts", "events", "failed", "dead"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


class BatchAlreadyWritten(RuntimeError):
    """Another run committed some of this batch's turns first: writing it again would duplicate them."""


class ExtractionService:
    """Buffers turns and runs batch extraction per owner in background tasks."""

    def __init__(
        self,
        engine: MemoryEngine,
        buffer: ExtractionBuffer,
        model: MemoryModel,
        settings: ExtractionSettings | None = None,
        *,
        tz: tzinfo = UTC,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.engine = engine
        self.buffer = buffer  # on the store's ``buffer``, handed over where the runtime is wired
        self.model = model
        self.settings = settings or ExtractionSettings()
        self._tz = tz
        self._clock = clock
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # Estimated tokens recorded per owner since the owner's last flush started: a cheap, slightly
        # generous stand-in for SUM(token_count) on the reply path (the buffer stays the truth).
        self._recorded_tokens: dict[str, int] = {}
        self._tasks: set[asyncio.Task] = set()
        self._closed = False

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> int:
        """Re-arm timers for turns left in the buffer by an earlier run; returns how many owners wait.

        An owner whose quiet gap already passed while the process was down is extracted right away.
        """
        backlog = await self.buffer.backlog()
        now = self._clock()
        for item in backlog:
            due = from_db(item.last_created_at) + timedelta(seconds=self.settings.quiet_gap)
            if item.next_attempt_at:
                due = max(due, from_db(item.next_attempt_at))
            self._arm(item.owner, max(0.0, (due - now).total_seconds()))
        if backlog:
            log.info("[memory] extraction resumed with %d owners waiting", len(backlog))
        return len(backlog)

    async def close(self) -> None:
        """Stop timers and cancel running extractions; unextracted turns stay in the buffer."""
        self._closed = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def idle(self) -> None:
        """Wait until no extraction task is running (tests and ``/new`` use it)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ----------------------------------------------------------------- recording

    async def record(
        self,
        owner: str,
        *,
        channel: str,
        chat_id: str,
        sender_id: str,
        role: str,
        content: str,
    ) -> int:
        """Buffer one message (awaited: a single INSERT), then (re)start the owner's quiet-gap timer.

        If the owner's buffer reached the token budget, extraction starts at once in the background.
        """
        turn_id = await self.buffer.append(
            owner,
            channel=channel,
            chat_id=chat_id,
            sender_id=sender_id,
            role=role,
            content=content,
            now=self._clock(),
        )
        tokens = self._recorded_tokens.get(owner)
        if tokens is None:  # first message from this owner in this process: count what is buffered
            tokens = await self.buffer.pending_tokens(owner)
        else:
            tokens += estimate_tokens(content)
        self._recorded_tokens[owner] = tokens
        if tokens >= self.settings.token_budget:
            self._arm(owner, 0.0)
        else:
            self._arm(owner, self.settings.quiet_gap)
        return turn_id

    def flush_soon(self, owner: str) -> None:
        """Start extracting the owner's buffer now, in the background, turns waiting out a retry backoff
        included (``/new`` hands a session over; its reply does not wait)."""
        self._disarm(owner)
        if not self._closed:
            self._spawn(owner, force=True)

    async def flush_now(self, owner: str, wait: float) -> bool:
        """Extract the owner's pending turns now and wait up to ``wait`` seconds (``/memory`` shows them).

        True when the flush finished in time; otherwise it goes on in the background and False says so.
        """
        self._disarm(owner)
        if self._closed:
            return False
        task = self._spawn(owner, force=False)
        done, _ = await asyncio.wait({task}, timeout=max(wait, 0.0))
        return task in done

    async def flush_all(
        self, wait: float, progress: Callable[[str, FlushResult], None] | None = None
    ) -> FlushResult:
        """Extract every owner's buffered turns now, for at most ``wait`` seconds (leaving the terminal
        chat, ``tierclaw memory flush``).

        Timers are stopped first, so nothing new starts behind this. What is not extracted when the time
        is up stays in the buffer, and the next start extracts it (``start``): a batch cut short is
        written again without duplicates (see the module docstring). ``progress(owner, result)`` is
        called after each owner.
        """
        for owner in list(self._timers):
            self._disarm(owner)
        total = FlushResult()

        async def every_owner() -> None:
            for item in await self.buffer.backlog():
                one = await self.flush(item.owner)
                total.add(one)
                if progress is not None:
                    progress(item.owner, one)

        task = asyncio.get_running_loop().create_task(every_owner(), name="extract:all")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        done, _ = await asyncio.wait({task}, timeout=max(wait, 0.0))
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        elif (failure := task.exception()) is not None:
            raise failure
        return total

    def _disarm(self, owner: str) -> None:
        handle = self._timers.pop(owner, None)
        if handle is not None:
            handle.cancel()

    def _spawn(self, owner: str, *, force: bool) -> asyncio.Task[FlushResult]:
        task = asyncio.get_running_loop().create_task(self.flush(owner, force=force), name=f"extract:{owner}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _arm(self, owner: str, delay: float) -> None:
        """(Re)schedule the owner's extraction ``delay`` seconds from now."""
        if self._closed:
            return
        self._disarm(owner)
        loop = asyncio.get_running_loop()
        self._timers[owner] = loop.call_later(max(0.0, delay), self._fire, owner)

    def _fire(self, owner: str) -> None:
        self._timers.pop(owner, None)
        if not self._closed:
            self._spawn(owner, force=False)

    # ----------------------------------------------------------------- extraction

    async def flush(self, owner: str, *, force: bool = False) -> FlushResult:
        """Extract the owner's buffered turns, one budget-sized batch at a time.

        Without ``force`` (timer path) turns in a retry backoff wait; with ``force`` (``/new``, the daily
        sweep) they are tried now. Stops at the first failing batch, which is scheduled for retry.
        """
        result = FlushResult()
        lock = self._locks.setdefault(owner, asyncio.Lock())
        async with lock:
            self._recorded_tokens.pop(owner, None)  # recounted from the buffer at the next record
            while True:
                batch = await self.buffer.batch(
                    owner, self.settings.token_budget, now=self._clock(), ignore_backoff=force
                )
                if not batch:
                    break
                if not await self._extract_batch(owner, batch, result):
                    break
        return result

    async def sweep(self) -> FlushResult:
        """The daily sweep: flush every owner's buffer regardless of the quiet gap."""
        total = FlushResult()
        for item in await self.buffer.backlog():
            total.add(await self.flush(item.owner, force=True))
        log.info("[memory] sweep extracted %d turns, %d failed batches", total.turns, total.failed)
        return total

    async def _extract_batch(self, owner: str, batch: list[BufferedTurn], result: FlushResult) -> bool:
        ids = [t.id for t in batch]
        ref = f"buffer:{ids[0]}-{ids[-1]}"
        turns = [Turn(t.role, t.content, t.created_at) for t in batch]
        try:
            extraction = await self.model.extract(turns)
            written = await self._store(owner, batch, extraction, ref)
        except asyncio.CancelledError:
            raise
        except BatchAlreadyWritten:
            log.info("[memory] batch %s owner=%s was already extracted by another run", ref, owner)
            return True
        except Exception as exc:  # model or parse failure: keep the turns, retry later
            dead, next_at = await self.buffer.record_failure(
                ids,
                f"{type(exc).__name__}: {exc}",
                max_attempts=self.settings.max_attempts,
                backoff_seconds=self.settings.retry_backoff,
                now=self._clock(),
            )
            result.failed += 1
            if dead:
                result.dead += len(ids)
                log.warning(
                    "[memory] extraction failed for owner=%s (%s); %d turns moved to dead letters",
                    owner,
                    type(exc).__name__,
                    len(ids),
                )
            else:
                log.warning(
                    "[memory] extraction failed for owner=%s (%s); retry at %s",
                    owner,
                    type(exc).__name__,
                    next_at.isoformat(timespec="seconds"),
                )
                self._arm(owner, (next_at - self._clock()).total_seconds())
            return False
        result.batches += 1
        result.turns += len(ids)
        result.facts += written
        result.events += 1 if extraction.summary.strip() else 0
        if self.settings.scratchpad:
            await self._update_scratchpad(owner, turns)
        log.info(
            "[memory] extracted %d facts, %d summary from %d turns owner=%s",
            written,
            1 if extraction.summary.strip() else 0,
            len(ids),
            owner,
        )
        return True

    async def _update_scratchpad(self, owner: str, turns: list[Turn]) -> None:
        """The session just extracted may change what is going on (memory/scratchpad.py). A failure is
        logged and skipped: the note is a convenience, and the turns are already safe."""
        try:
            current = await self.engine.scratchpad.get(owner)
            new = await self.model.update_scratchpad(current.content, turns)
            if fit(new) != current.content:
                await self.engine.scratchpad.put(owner, new)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("[memory] scratchpad update failed for owner=%s: %s", owner, type(exc).__name__)

    async def _store(self, owner: str, batch: list[BufferedTurn], extraction: Extraction, ref: str) -> int:
        """Commit the batch in one transaction — claim its turns (remove them from the buffer), write its
        summary (an episode), its facts (clean path) and the episode's fact ids — and return how many
        facts were written.

        ``BatchAlreadyWritten`` (and nothing written) when some of the turns were gone already.
        """
        now = self._clock()
        ids = [t.id for t in batch]
        facts: list[Fact] = []
        for fact in extraction.facts:
            fact.source = "extraction"
            fact.source_ref = ref
            try:
                facts.append(validated(fact))
            except ValueError as exc:  # one malformed fact must not sink the batch
                log.warning("[memory] dropped an invalid extracted fact owner=%s: %s", owner, exc)
        summary = extraction.summary.strip()
        episode_ids: list[int] = []

        async def claim_and_summarise() -> None:
            if await self.buffer.remove(ids) != len(ids):
                raise BatchAlreadyWritten(ref)
            if summary and not await self.engine.events.find(owner, source_ref=ref, limit=1):
                first = batch[0]
                episode_ids.append(
                    await self.engine.events.add(
                        owner,
                        summary,
                        event_date=from_db(first.created_at).astimezone(self._tz).date(),
                        channel=first.channel,
                        sender_id=next((t.sender_id for t in batch if t.role == "user"), first.sender_id),
                        raw_tokens=sum(t.token_count for t in batch),
                        source_ref=ref,
                        episode=extraction.episode,
                        span=(from_db(first.created_at), from_db(batch[-1].created_at)),
                    )
                )

        async def link_episode(results: list[WriteResult]) -> None:
            if episode_ids and results:
                await self.engine.events.link_facts(owner, episode_ids[0], [r.id for r in results])

        results = await self.engine.write_many(
            owner, facts, now=now, first=claim_and_summarise, then=link_episode
        )
        return len(results)
