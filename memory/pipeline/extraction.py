"""The extraction service (docs/architecture.md, "Extraction and compression"): buffered turns become Tier
2 facts and a Tier 3 summary.

Every message is written to the buffer first (``record``); extraction runs later, per owner, when one of
three triggers fires: a quiet gap with no new message from the owner (default 3 min), the owner's buffer
reaching the token budget (default ~6000 estimated tokens), or the daily sweep (``sweep``, scheduled by
the gateway). Nothing here is awaited on the reply path except the turns' INSERT and the due-time push.

The first two triggers are due times in the database, not timers in this process, and an extraction runs
under a claim on its owner (``extraction_due.py``): with several gateways on one database, an owner whose
turns reach two replicas is extracted once, by whichever replica polls first (docs/scale-out.md,
"Extraction").

A failed call (model error, invalid JSON) leaves the turns in the buffer and schedules a retry with
exponential backoff; after ``max_attempts`` failures the turns become dead letters. A batch commits as one
transaction: its turns leave the buffer, its facts and its summary are written, all or none — a crash
half-way leaves the turns buffered and nothing written. The removal (``turn_watermark.py``) comes first
and is the batch's claim: if another run already committed some of these turns, the batch is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from memory.clock import from_db, utcnow
from memory.engine import MemoryEngine
from memory.model.protocol import Extraction, MemoryModel, Turn
from memory.pipeline.buffer import BufferedTurn, ExtractionBuffer, OwnerBacklog
from memory.pipeline.extraction_due import DEFAULT_LEASE, DEFAULT_POLL, DueTimes, OwnerClaim
from memory.pipeline.extraction_results import BatchAlreadyWritten, ClaimLost, FlushResult
from memory.records import Fact, WriteResult
from memory.replica import default_replica
from memory.scratchpad import fit
from memory.store.errors import store_was_closed
from memory.writes import validated

log = logging.getLogger("tierclaw.memory")

# Owners one replica extracts at once from its poll (more wait for its next poll, or another replica).
MAX_PARALLEL = 4
# A poll woken for a due time set here looks a little after it (the database compares wall-clock times).
POLL_SLACK = 0.01


@dataclass(slots=True)
class ExtractionSettings:
    """The triggers and retry policy (``memory.extraction`` in the config)."""

    quiet_gap: float = 180.0
    token_budget: int = 6000
    max_attempts: int = 5
    retry_backoff: float = 60.0
    scratchpad: bool = False  # after each batch, let the memory model update the person's scratchpad
    lease: float = DEFAULT_LEASE  # a claim on an owner holds this long unrenewed (extraction_due.py)
    poll_interval: float = DEFAULT_POLL  # how often to look for owners due on any replica


class ExtractionService:
    """Buffers turns and runs batch extraction per owner in background tasks, when the owner's due time
    in the database comes (``extraction_due.py``), on this replica or another."""

    def __init__(
        self,
        engine: MemoryEngine,
        buffer: ExtractionBuffer,
        model: MemoryModel,
        settings: ExtractionSettings | None = None,
        *,
        tz: tzinfo = UTC,
        clock: Callable[[], datetime] = utcnow,
        replica: str | None = None,
    ) -> None:
        self.engine = engine
        self.buffer = buffer  # on the store's ``buffer``, handed over where the runtime is wired
        self.model = model
        self.settings = settings or ExtractionSettings()
        self._tz = tz
        self.clock = clock  # what a buffered turn's created_at is (memory/exchange.py reads it too)
        # The owners' due times and claims, shared by every replica on the database; the in-process
        # lock below only keeps two tasks of this process off one owner.
        self.due = DueTimes(
            engine.store.extraction_due,
            replica or default_replica(),
            lease=self.settings.lease,
            clock=clock,
        )
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task] = set()
        self._closed = False
        self._paused = False  # ``flush_all`` runs: the poll starts nothing behind it
        # Held from claiming a due owner until its task is in ``_tasks``: ``settle`` then sees either the
        # claim or the task, never the moment between.
        self._claiming = asyncio.Lock()
        self._poller: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._soon: list[float] = []  # loop times when a due time set here falls due: wake the poll then
        self.kept = 0  # memories this process's extractions wrote (the terminal says so when it ends)

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> int:
        """Give owners with turns left in the buffer a due time unless they have one (another replica
        may have set it), and start polling; returns how many owners wait.

        An owner whose quiet gap already passed while the process was down is extracted right away.
        """
        backlog = await self.buffer.backlog()
        for item in backlog:
            await self.due.ensure(item.owner, self._resume_due(item))
        self._poll_soon(0.0)
        if backlog:
            log.info("[memory] extraction resumed with %d owners waiting", len(backlog))
        return len(backlog)

    def _resume_due(self, item: OwnerBacklog) -> datetime:
        """When an owner's buffered turns are due: the quiet gap after the newest, or its retry time."""
        due = from_db(item.last_created_at) + timedelta(seconds=self.settings.quiet_gap)
        if item.next_attempt_at:
            due = max(due, from_db(item.next_attempt_at))
        return due

    async def close(self) -> None:
        """Stop polling and cancel running extractions; unextracted turns stay in the buffer, their
        claims are released (another replica, or the next start, extracts them)."""
        self._closed = True
        tasks = list(self._tasks)
        if self._poller is not None:
            tasks.append(self._poller)
            self._poller = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def idle(self) -> None:
        """Wait until no extraction task is running (tests and ``/new`` use it)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def settle(self) -> None:
        """Extract every owner due now and wait until no extraction runs: what the poll starts within
        ``POLL_SLACK`` of a message that filled the budget, done before the caller goes on. A person's next
        message comes seconds later, by which time it is done; a benchmark that sends the next one at once
        (``bench/conversation_recall.py``) calls this so every run sees the same memories."""
        async with self._claiming:
            while (owner := await self.due.claim_due()) is not None:
                self._spawn(owner, force=False)
        await self.idle()

    # ----------------------------------------------------------------- recording

    async def record(
        self, owner: str, *, channel: str, chat_id: str, sender_id: str, role: str, content: str
    ) -> int:
        """Buffer one message (awaited: an INSERT), then push the owner's due time (one statement): the
        quiet gap from now, or now when the owner's buffered turns — on every replica — reached the token
        budget; extraction then starts in the background on whichever replica polls first."""
        turn_id = await self.buffer.append(
            owner,
            channel=channel,
            chat_id=chat_id,
            sender_id=sender_id,
            role=role,
            content=content,
            now=self.clock(),
        )
        delay = await self.due.push(
            owner, quiet_gap=self.settings.quiet_gap, token_budget=self.settings.token_budget
        )
        self._poll_soon(delay)
        return turn_id

    def buffered(self, due_now: bool) -> None:
        """Turns were buffered and the due time pushed in the caller's write (``memory/exchange.py``)."""
        self._poll_soon(0.0 if due_now else self.settings.quiet_gap)

    def flush_soon(self, owner: str) -> None:
        """Start extracting the owner's buffer now, in the background, turns waiting out a retry backoff
        included (``/new`` hands a session over; its reply does not wait)."""
        if not self._closed:
            self._spawn(owner, force=True)

    async def flush_now(self, owner: str, wait: float) -> bool:
        """Extract the owner's pending turns now and wait up to ``wait`` seconds (``/memory`` shows them);
        when another replica is extracting the owner, wait for it first (within ``wait``).

        True when the flush finished in time; otherwise it goes on in the background and False says so.
        """
        if self._closed:
            return False
        task = self._spawn(owner, force=False, patience=wait)
        done, _ = await asyncio.wait({task}, timeout=max(wait, 0.0))
        return task in done

    async def flush_all(
        self, wait: float, progress: Callable[[str, FlushResult], None] | None = None
    ) -> FlushResult:
        """Extract every owner's buffered turns now, for at most ``wait`` seconds (leaving the terminal
        chat, ``tierclaw memory flush``).

        The poll starts nothing new meanwhile. What is not extracted when the time is up stays in the
        buffer, due now, and another replica or the next start extracts it: a batch cut short is written
        again without duplicates (see the module docstring). ``progress(owner, result)`` is called after
        each owner; an owner another replica is extracting is left to it.
        """
        self._paused = True
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
        try:
            done, _ = await asyncio.wait({task}, timeout=max(wait, 0.0))
            if not done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            elif (failure := task.exception()) is not None:
                raise failure
        finally:
            self._paused = False
        return total

    def _spawn(self, owner: str, *, force: bool, patience: float = 0.0) -> asyncio.Task[FlushResult]:
        task = asyncio.get_running_loop().create_task(
            self._flush(owner, force=force, patience=patience), name=f"extract:{owner}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ----------------------------------------------------------------- polling for due owners

    def _poll_soon(self, delay: float) -> None:
        """Make this replica's poll look again ``delay`` seconds from now (a due time it set itself), so
        a quiet gap shorter than the poll interval is not rounded up to it; starts the poll."""
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        at = loop.time() + max(delay, 0.0) + POLL_SLACK
        if not self._soon or at < self._soon[0]:  # a later one needs no wake: the poll gets to it
            self._wake.set()
        heapq.heappush(self._soon, at)
        if self._poller is None or self._poller.done():
            self._poller = loop.create_task(self._poll(), name="extract:poll")

    async def _poll(self) -> None:
        """Every ``poll_interval`` seconds (or when a due time set here falls due): claim the owners due
        now that nobody holds, one at a time, and extract each in the background."""
        loop = asyncio.get_running_loop()
        failures = 0
        while not self._closed:
            timeout = self.settings.poll_interval
            if self._soon:
                timeout = min(timeout, max(self._soon[0] - loop.time(), 0.0))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
            self._wake.clear()
            while self._soon and self._soon[0] <= loop.time():
                heapq.heappop(self._soon)
            if self._paused:
                continue
            try:
                async with self._claiming:
                    while len(self._tasks) < MAX_PARALLEL and not self._paused:
                        owner = await self.due.claim_due()
                        if owner is None:
                            break
                        self._spawn(owner, force=False)
                failures = 0
            except Exception as exc:  # the database is away: the next poll tries again
                if store_was_closed(exc):
                    return
                failures += 1
                level = logging.WARNING if failures == 1 else logging.DEBUG
                log.log(level, "[memory] could not poll for due extractions: %s", type(exc).__name__)

    # ----------------------------------------------------------------- extraction

    async def flush(self, owner: str, *, force: bool = False) -> FlushResult:
        """Extract the owner's buffered turns, one budget-sized batch at a time, under this replica's
        claim on the owner (nothing, when another replica is extracting it now).

        Without ``force`` (due-time path) turns in a retry backoff wait; with ``force`` (``/new``, the
        daily sweep) they are tried now. Stops at the first failing batch, which is scheduled for retry.
        """
        return await self._flush(owner, force=force, patience=0.0)

    async def _flush(self, owner: str, *, force: bool, patience: float) -> FlushResult:
        result = FlushResult()
        async with self._locks.setdefault(owner, asyncio.Lock()):
            claim = await self.due.claim_when_free(owner, patience)
            if claim is None:
                log.debug("[memory] owner=%s is being extracted by another replica", owner)
                return result
            try:
                async with self.due.renewing(claim):
                    retry_at = await self._extract_claimed(claim, force, result)
                    next_due = retry_at or await self._next_due(owner)
                if claim.lost:
                    log.warning(
                        "[memory] owner=%s: another replica took this extraction over (this one stalled "
                        "past its lease); nothing more is written here",
                        owner,
                    )
            except asyncio.CancelledError:  # stopping: due now, for another replica or the next start
                await self.due.release(claim, self.clock())
                raise
            except Exception:  # the database failed under the flush: try again after the backoff
                await self.due.release(claim, self.clock() + timedelta(seconds=self.settings.retry_backoff))
                raise
            await self.due.release(claim, next_due)
        return result

    async def _extract_claimed(self, claim: OwnerClaim, force: bool, result: FlushResult) -> datetime | None:
        """Batches until the buffer is empty, a batch fails (its retry time is returned) or the claim
        was lost to another replica."""
        while not claim.lost:
            batch = await self.buffer.batch(claim.owner, self.settings.token_budget, ignore_backoff=force)
            if not batch:
                return None
            done, retry_at = await self._extract_batch(claim, batch, result)
            if not done:
                return retry_at
        return None

    async def _next_due(self, owner: str) -> datetime | None:
        """After a flush: when the owner's remaining turns (waiting out a retry) are due, or None."""
        backlog = await self.buffer.backlog(owner)
        return self._resume_due(backlog[0]) if backlog else None

    async def sweep(self) -> FlushResult:
        """The daily sweep: flush every owner's buffer regardless of the quiet gap."""
        total = FlushResult()
        for item in await self.buffer.backlog():
            total.add(await self.flush(item.owner, force=True))
        log.info("[memory] sweep extracted %d turns, %d failed batches", total.turns, total.failed)
        return total

    async def _extract_batch(
        self, claim: OwnerClaim, batch: list[BufferedTurn], result: FlushResult
    ) -> tuple[bool, datetime | None]:
        """Extract and write one batch; (written, retry time when it failed and will be retried)."""
        owner = claim.owner
        ids = [t.id for t in batch]
        ref = f"buffer:{ids[0]}-{ids[-1]}"
        turns = [Turn(t.role, t.content, t.created_at) for t in batch]
        try:
            extraction = await self.model.extract(turns)
            written = await self._store(claim, batch, extraction, ref)
        except asyncio.CancelledError:
            raise
        except ClaimLost:
            claim.lost = True
            return True, None
        except BatchAlreadyWritten:
            log.info("[memory] batch %s owner=%s was already extracted by another run", ref, owner)
            return True, None
        except Exception as exc:  # model or parse failure: keep the turns, retry later
            return False, await self._failed(owner, ids, exc, result)
        result.batches += 1
        result.turns += len(ids)
        result.facts += written
        self.kept += written
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
        return True, None

    async def _failed(
        self, owner: str, ids: list[int], exc: Exception, result: FlushResult
    ) -> datetime | None:
        """Record a batch's failure on its turns: the retry time, or None when they went to dead letters."""
        dead, next_at = await self.buffer.record_failure(
            ids,
            f"{type(exc).__name__}: {exc}",
            max_attempts=self.settings.max_attempts,
            backoff_seconds=self.settings.retry_backoff,
            clock=self.clock,
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
            return None
        log.warning(
            "[memory] extraction failed for owner=%s (%s); retry at %s",
            owner,
            type(exc).__name__,
            next_at.isoformat(timespec="seconds"),
        )
        self._poll_soon((next_at - self.clock()).total_seconds())
        return next_at

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

    async def _store(
        self, claim: OwnerClaim, batch: list[BufferedTurn], extraction: Extraction, ref: str
    ) -> int:
        """Commit the batch in one transaction — check the owner's claim is still this replica's at its
        generation (the fence), claim its turns (remove them from the buffer), write its summary (an
        episode), its facts (clean path) and the episode's fact ids — and return how many facts were
        written.

        ``ClaimLost`` or ``BatchAlreadyWritten`` (and nothing written) when the claim changed hands or
        some of the turns were gone already.
        """
        owner = claim.owner
        now = self.clock()
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
            if not await self.due.fence(claim):
                raise ClaimLost(ref)
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
