"""Wire one running tierclaw together: database, models, extraction, scheduler, process loop, channels.

``Runtime.open`` builds everything from a ``Config``; ``start`` brings it up (resuming buffered
extraction, catching up missed jobs in the background); ``close`` takes it down in the reverse order,
leaving unextracted turns in the buffer for the next run. ``tierclaw chat`` and ``tierclaw gateway`` and
the throughput benchmark all run through this one path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from datetime import tzinfo
from zoneinfo import ZoneInfo

from tzlocal import get_localzone

from channels.base import Channel, DeliversInOrder, DropsRepeatedReplies, PollsAlone, StopsReceiving
from channels.seen import KeepsSeenMarks
from gateway.assistant import Assistant, AssistantSettings
from gateway.config import Config
from gateway.heap import freeze_startup_heap
from gateway.identity import Identities
from gateway.inbox import DurableInbox, ReorderWindow
from gateway.loop import ProcessLoop
from gateway.media.build import build_media
from gateway.memory_tools import ToolSettings
from gateway.providers import Models, build_models, no_answer_hint, offline_hint_for
from gateway.reminders.book import ReminderBook, ReminderSettings
from gateway.reminders.delivery import ReminderDelivery
from gateway.replica import replica_id
from gateway.scheduler import JobTimes, MemoryJobs
from gateway.seen_marks import StoreSeenMarks
from memory.engine import MemoryEngine
from memory.files.file_memory import FileMemory
from memory.model.protocol import MemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.pipeline.extraction_results import FlushResult
from memory.pipeline.job_log import JobLog
from memory.retrieval.ranking import RelevanceFloor
from memory.sessions import SessionStore
from memory.store.singleton import Singleton
from memory.vectors.cache import build_cached_embedder
from memory.vectors.reindex import EmbeddingBackfill

log = logging.getLogger("tierclaw.gateway")


def timezone_of(config: Config) -> tzinfo:
    """The configured zone, or the machine's local zone when ``timezone`` is empty."""
    return ZoneInfo(config.timezone) if config.timezone else get_localzone()


def reminder_book(config: Config, engine: MemoryEngine) -> ReminderBook | None:
    """The reminders of everyone (``reminders.enabled``), with the zone of a person who set none:
    ``agent.timezone``, else ``timezone``, else the machine's."""
    if not config.reminders.enabled:
        return None
    section = config.reminders
    settings = ReminderSettings(section.max_per_person, section.max_text_chars, section.late_within)
    zone = ZoneInfo(config.agent.timezone) if config.agent.timezone else timezone_of(config)
    return ReminderBook(engine.store, settings, zone)


def job_times(config: Config) -> JobTimes:
    """When the memory jobs run, from ``memory.extraction.dailyFlush`` and ``memory.compression``."""
    co = config.memory.compression
    every = config.gateway.jobs_every
    return JobTimes(config.memory.extraction.daily_flush, co.daily, co.weekly_day, co.weekly, every)


def memory_services(
    config: Config, engine: MemoryEngine, model: MemoryModel
) -> tuple[ExtractionService, MemoryJobs]:
    """The extraction service and the scheduled jobs as the config sets them (gateway and CLI alike)."""
    ex = config.memory.extraction
    tz = timezone_of(config)
    extraction = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        model,
        ExtractionSettings(
            quiet_gap=ex.quiet_gap,
            token_budget=ex.token_budget,
            max_attempts=ex.max_attempts,
            retry_backoff=ex.retry_backoff,
            scratchpad=config.memory.scratchpad,
        ),
        tz=tz,
        replica=replica_id(config.gateway.replica_id),  # the holder named in extraction claims
    )
    jobs = MemoryJobs(
        engine,
        extraction,
        model,
        job_log=JobLog(engine.store.jobs, engine.store.job_claims),
        tz=tz,
        times=job_times(config),
        embedding_cache_days=config.memory.embedding.cache_days,
        turn_retention_days=config.memory.turn_retention_days,
        replica=replica_id(config.gateway.replica_id),  # the holder named in job claims
    )
    return extraction, jobs


def relevance_floor(config: Config) -> RelevanceFloor:
    """``memory.relevanceFloor`` as the retrieval's ``RelevanceFloor``."""
    floor = config.memory.relevance_floor
    return RelevanceFloor(
        floor.keyword_match,
        floor.hybrid_match,
        floor.hybrid_cosine,
        floor.keyword_match_zh,
        floor.hybrid_cosine_zh,
        floor.hybrid_lift,
        floor.other_match,
        floor.other_cosine,
        floor.other_cosine_zh,
        floor.rescue_lift,
        floor.rescue_lift_zh,
        floor.rescue_gap,
        floor.other_lift,
        floor.other_lift_zh,
    )


def inbox_of(config: Config, engine: MemoryEngine, channels: Sequence[Channel] = ()) -> DurableInbox:
    """The durable inbox of this replica: its id names its chat holds; ``gateway.reorderWindow`` and how
    it grows (``reorderGrowth``, ``reorderWindowMost``, ``reorderHalfLife``)."""
    replica = replica_id(config.gateway.replica_id)
    inbox = DurableInbox(engine.store, replica)
    gateway = config.gateway
    inbox.reorder = ReorderWindow(
        gateway.reorder_window,
        most=gateway.reorder_window_most,
        margin=gateway.reorder_growth,
        half_life=gateway.reorder_half_life,
    )
    inbox.history = config.agent.history_messages  # read with each claim: no read of its own
    if config.memory.database_url:  # replicas share it: a takeover's claimant may only be stalled
        inbox.in_flight_wait = inbox.lease.total_seconds()
    # and their intakes run at once on many connections: one still on its way is unseen by a claim
    inbox.reorder.follows_intakes = bool(config.memory.database_url)
    for channel in channels:  # a repeat of a reply is dropped there: a takeover answers again at once
        if isinstance(channel, DropsRepeatedReplies) and channel.drops_repeated_replies:
            inbox.repeats_dropped.add(channel.name)
    return inbox


def attach_embedder(config: Config, engine: MemoryEngine) -> EmbeddingBackfill | None:
    """Give the engine the configured embedder (behind the content-hash cache) and its backfill.

    Nothing is loaded or contacted here (the local model loads on first use, off the event loop).
    Returns None when ``memory.embedding.provider`` is "none" (keyword search only).
    """
    settings = config.memory.embedding
    embedder = build_cached_embedder(settings.settings(), engine.store.vectors)
    if embedder is None:
        return None
    engine.embedder = embedder
    engine.embedding.query_timeout = settings.query_timeout_ms / 1000
    backfill = EmbeddingBackfill(engine, replica=replica_id(config.gateway.replica_id))
    engine.writer.on_vectors_missing = backfill.notify
    return backfill


class Runtime:
    """Everything one tierclaw process runs. Create with ``await Runtime.open(config, channels)``."""

    def __init__(
        self,
        config: Config,
        engine: MemoryEngine,
        models: Models,
        assistant: Assistant,
        loop: ProcessLoop,
        channels: Sequence[Channel],
        jobs: MemoryJobs | None,
    ) -> None:
        self.config = config
        self.engine = engine
        self.models = models
        self.assistant = assistant
        self.loop = loop
        self.channels = list(channels)
        self.jobs = jobs
        self._catch_up: asyncio.Task | None = None
        self.backfill: EmbeddingBackfill | None = None
        self._warm_up: asyncio.Task | None = None
        self._singletons: list[Singleton] = []  # the Telegram poller's lock (docs/scale-out.md)
        self.inbox = loop.inbox or inbox_of(config, engine)
        self.on_takeover: Callable[[], None] | None = None  # tierclaw_lease_takeovers_total (ops_http.py)
        loop.on_takeover = self._taken_over
        self.delivery: ReminderDelivery | None = None  # due reminders of this runtime's channels

    @classmethod
    async def open(
        cls, config: Config, channels: Sequence[Channel], *, models: Models | None = None
    ) -> Runtime:
        """Open the database and build the parts (nothing runs until ``start``)."""
        engine = await MemoryEngine.open(config.memory_target())
        try:
            backfill = attach_embedder(config, engine) if config.memory.enabled else None
            models = models or build_models(config, engine.embedder)
            sessions = SessionStore(engine.store.sessions)
            extraction: ExtractionService | None = None
            file_memory: FileMemory | None = None
            jobs: MemoryJobs | None = None
            if config.memory.enabled:
                extraction, jobs = memory_services(config, engine, models.memory)
            else:
                file_memory = FileMemory(config.workspace_path())
            media = build_media(config, engine.attachments, {c.name: c for c in channels})
            assistant = Assistant(
                engine=engine,
                sessions=sessions,
                chat_model=models.chat,
                settings=AssistantSettings(
                    workspace=config.workspace_path(),
                    history_messages=config.agent.history_messages,
                    top_k=config.memory.top_k,
                    flush_wait=config.memory.extraction.exit_flush,
                    floor=relevance_floor(config),
                    notice=models.notice,
                    tools=ToolSettings(
                        enabled=config.agent.tools,
                        max_rounds=config.agent.max_tool_rounds,
                        budget_chars=config.agent.tool_result_chars,
                    ),
                    max_message_tokens=config.memory.extraction.token_budget,
                    hint=offline_hint_for(config),
                ),
                identities=Identities(config.users),
                extraction=extraction,
                file_memory=file_memory,
                media=media if config.memory.enabled else None,
                reminders=reminder_book(config, engine),
            )
            loop = ProcessLoop(
                assistant.handle,
                max_concurrent=config.agent.max_concurrent_chats,
                deadline=config.agent.reply_deadline,
                inbox=inbox_of(config, engine, channels),
                deadline_hint=no_answer_hint(config),
            )
            loop.streams.enabled = config.agent.stream  # replies shown while made (gateway/streaming.py)
            for channel in channels:
                loop.add_channel(channel)
                if isinstance(channel, KeepsSeenMarks):  # its dedup marks live in the memory database
                    channel.use_seen_marks(StoreSeenMarks(engine.store.seen, channel.name))
        except BaseException:
            await engine.close()
            raise
        runtime = cls(config, engine, models, assistant, loop, channels, jobs)
        runtime.backfill = backfill
        return runtime

    async def start(self, *, schedule: bool = True, freeze_heap: bool = False) -> None:
        """Resume extraction, start the loop and the channels; jobs are scheduled and caught up.

        ``freeze_heap``: a process that keeps this runtime to its end (``tierclaw gateway``, ``tierclaw
        chat``) moves what is alive once everything started out of the garbage collector's walks
        (gateway/heap.py)."""
        if self.assistant.extraction is not None:
            await self.assistant.extraction.start()
        if self.backfill is not None:
            # The first load of the local model may take a second: in the background, so start-up does
            # not wait and the first reply most likely does not either.
            self._warm_up = asyncio.create_task(self.engine.warm_up_embedder(), name="embedder-warm-up")
            self.backfill.start()
        if self.assistant.media is not None:
            self.assistant.media.start()
        # Leftovers are held before the channels start (so they are answered first, in order); their
        # workers wait for their channel to be started before answering (gateway/channel_starts.py).
        self.loop.starts.hold(c.name for c in self.channels)
        self.loop.start()
        await self._answer_unanswered()
        if self.jobs is not None and schedule:
            self.jobs.start()
            self._catch_up = asyncio.create_task(self.jobs.catch_up(), name="jobs-catch-up")
        for channel in self.channels:
            self._one_poller(channel)
            if isinstance(channel, DeliversInOrder) and channel.delivers_in_order:
                self.inbox.in_order.add(channel.name)  # its chats skip the reorder window
            await channel.start(self.loop.deliver)
            self.loop.starts.started(channel.name)
        if self.assistant.reminders is not None:  # sends through the channels: once they are started
            replica = replica_id(self.config.gateway.replica_id)
            channels = {c.name: c for c in self.channels}
            self.delivery = ReminderDelivery(self.engine, self.assistant.reminders, channels, replica)
            self.delivery.start()
        if freeze_heap:
            freeze_startup_heap()
        log.info(
            "[gateway] started: model=%s memory=%s channels=%s",
            self.models.chat.label,
            self.models.memory.label if self.assistant.extraction else "files",
            ",".join(c.name for c in self.channels) or "none",
        )

    def _one_poller(self, channel: Channel) -> None:
        """A channel that polls (Telegram: one ``getUpdates`` consumer per bot) polls only while this
        replica holds the database's lock for it (``store.singleton``: an advisory lock on PostgreSQL,
        always this process's on SQLite); the channel only sees "may I poll now?" (channels/ never
        imports the store)."""
        if not isinstance(channel, PollsAlone):
            return
        lock = self.engine.store.singleton(f"poller:{channel.name}")
        self._singletons.append(lock)
        channel.may_poll = lock.acquire

    async def _answer_unanswered(self) -> None:
        """Before any new input, hold the chats with messages stored earlier and not answered, so they
        are answered first, each in order; the loop then renews its holds and takes over the chats of
        replicas that died (docs/scale-out.md, "The message path"). Only this runtime's channels are
        swept: `tierclaw chat` leaves a gateway's messages to it. On SQLite one gateway owns the file, so
        every waiting chat is this one's; on PostgreSQL only those no live replica holds (or this
        replica id's own, after a restart under a fixed ``gateway.replicaId``)."""
        await self.inbox.prune()
        one_process = not self.config.memory.database_url
        taken = await self.loop.take_waiting(at_start=True, every=one_process)
        if taken:
            log.info("[gateway] answering the waiting messages of %d chat(s) received before", taken)

    def _taken_over(self, chat: tuple[str, str], holder: str) -> None:
        """A dead replica's chat was taken over: counted in ``tierclaw_lease_takeovers_total``."""
        if self.on_takeover is not None:
            self.on_takeover()

    async def save_memories(self, wait: float) -> tuple[FlushResult, int]:
        """Before a short-lived process exits (the terminal chat): extract every pending turn and let
        the jobs catch-up started at launch finish, within ``wait`` seconds in all.

        Returns what was extracted and how many turns are still buffered (extracted at the next
        start). A catch-up cut short is not recorded as run, so the next start runs it again.
        """
        extraction = self.assistant.extraction
        if extraction is None:
            return FlushResult(), 0
        deadline = asyncio.get_running_loop().time() + wait
        result = await extraction.flush_all(wait)
        if self._catch_up is not None and not self._catch_up.done():
            remaining = deadline - asyncio.get_running_loop().time()
            await asyncio.wait({self._catch_up}, timeout=max(remaining, 0.0))
        return result, await extraction.buffer.pending_turns()

    async def shutdown(self, drain_timeout: float) -> int:
        """Stop intake on every channel, answer what was taken in (up to ``drain_timeout`` s), close.

        Returns how many messages or replies were still pending when the time ran out (logged). Intake
        stops first so nothing new is taken in that could not be answered.
        """
        for channel in self.channels:
            if isinstance(channel, StopsReceiving):
                try:
                    await channel.stop_receiving()
                except Exception as exc:
                    log.warning("[gateway] %s did not stop receiving cleanly: %s", channel.name, exc)
        unanswered = 0
        try:
            await asyncio.wait_for(self.loop.drain(), timeout=drain_timeout)
        except TimeoutError:
            unanswered = self.loop.pending
            log.warning(
                "[gateway] stopping with %d message(s) unanswered after %.0f s (the model did not finish)",
                unanswered,
                drain_timeout,
            )
        finally:
            await self.close()
        return unanswered

    async def close(self) -> None:
        """Stop reminders, channels, loop, jobs and extraction, then close clients and the database."""
        if self.delivery is not None:
            await self.delivery.stop()
        for channel in self.channels:
            with contextlib.suppress(Exception):
                await channel.stop()
        await self.loop.stop()
        for lock in self._singletons:  # another replica polls at its next try
            with contextlib.suppress(Exception):
                await lock.release()
        if self._catch_up is not None and not self._catch_up.done():
            self._catch_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._catch_up
        if self.jobs is not None:
            await self.jobs.stop()  # the runs going on end before the database closes under them
        if self.assistant.extraction is not None:
            await self.assistant.extraction.close()
        if self._warm_up is not None and not self._warm_up.done():
            self._warm_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._warm_up
        if self.backfill is not None:
            await self.backfill.stop()
        if self.engine.embedder is not None:
            with contextlib.suppress(Exception):
                await self.engine.embedder.close()
        await self.models.close()
        if self.assistant.media is not None:
            await self.assistant.media.close()
        await self.engine.close()
