"""What ``/metrics`` says about one gateway process, in Prometheus' text format (prometheus-client).

Counted as it happens (the loop tells ``received`` / ``finished``; the assistant tells each reply's
memory time): messages taken in, answered, failed (an apology, a deadline reply, a reply the channel could
not send); the reply latency from intake to the answer sent; the reply path's memory time (retrieval with
the buffer write, history and profile around it — the same samples the memory page charts). Read from the
database at each scrape (``refresh``): the inbox backlog, the extraction backlog and the dead letters —
through the store protocol, so it reads the same on either store. ``tierclaw_lease_takeovers_total``
counts work taken over from a dead replica (docs/scale-out.md; 0 until replicas share one database).
``tierclaw_replica_info`` carries ``gateway.replicaId`` (gateway/replica.py).

Each ``GatewayMetrics`` has its own registry, so a test (or a second runtime in one process) starts at
zero. prometheus-client is imported here only, and this module only when ``gateway.http.port`` is set.
"""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from channels.base import InboundMessage
from gateway.assistant import APOLOGY, APOLOGY_BY_KIND
from gateway.notices import DEADLINE_REPLY, FAILURE_REPLY
from memory.store.protocol import MemoryStore

log = logging.getLogger("tierclaw.gateway")

CONTENT_TYPE = CONTENT_TYPE_LATEST

# The answers that tell the person something went wrong (gateway/assistant.py, gateway/loop.py).
FAILURE_TEXTS = frozenset({APOLOGY, FAILURE_REPLY, DEADLINE_REPLY, *APOLOGY_BY_KIND.values()})

# Seconds. A reply is a model round trip (typically 0.5–10 s, up to agent.replyDeadline); the memory
# work on the reply path is milliseconds (README, "Embeddings": p95 ~20 ms hybrid at 10k memories).
REPLY_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300)
MEMORY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)


class GatewayMetrics:
    """The metrics of one gateway process; an observer of its ``ProcessLoop`` (``LoopObserver``)."""

    def __init__(self, replica: str) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.replica = Info("tierclaw_replica", "This gateway process (gateway.replicaId).", registry=r)
        self.replica.info({"replica": replica})
        self.received_total = Counter(
            "tierclaw_messages_received", "Messages taken in (stored in the inbox).", registry=r
        )
        self.answered_total = Counter(
            "tierclaw_messages_answered", "Messages whose reply was sent.", registry=r
        )
        self.failed_total = Counter(
            "tierclaw_messages_failed",
            "Messages answered with an apology, a deadline reply, or whose reply could not be sent.",
            registry=r,
        )
        self.reply_seconds = Histogram(
            "tierclaw_reply_seconds",
            "From a message taken in to its answer sent (includes waiting behind the chat's earlier ones).",
            buckets=REPLY_BUCKETS,
            registry=r,
        )
        self.retrieval_seconds = Histogram(
            "tierclaw_retrieval_seconds",
            "Memory work on the reply path: buffer write, history, gate and retrieval, profile.",
            buckets=MEMORY_BUCKETS,
            registry=r,
        )
        self.inbox_backlog = Gauge(
            "tierclaw_inbox_backlog", "Messages stored and not yet answered (all replicas).", registry=r
        )
        self.extraction_backlog = Gauge(
            "tierclaw_extraction_backlog", "Conversation turns buffered for extraction.", registry=r
        )
        self.dead_letters = Gauge(
            "tierclaw_dead_letters", "Buffered turns whose extraction failed maxAttempts times.", registry=r
        )
        self.database_up = Gauge(
            "tierclaw_database_up", "1 when the last scrape could read the database, else 0.", registry=r
        )
        self.lease_takeovers_total = Counter(
            "tierclaw_lease_takeovers",
            "Work (a message, a chat, a job) taken over from a replica whose lease ran out.",
            registry=r,
        )

    # --- LoopObserver --------------------------------------------------------------------------------

    def received(self, message: InboundMessage) -> None:
        self.received_total.inc()

    def finished(
        self, message: InboundMessage, reply: str | None, send_error: str | None, seconds: float
    ) -> None:
        if reply is None:  # nothing to answer (empty text) or cancelled: neither answered nor failed
            return
        self.reply_seconds.observe(seconds)
        if send_error is not None or reply in FAILURE_TEXTS:
            self.failed_total.inc()
        else:
            self.answered_total.inc()

    def memory_ms(self, ms: float) -> None:
        """One reply's memory time (``MemoryTiming.observer``)."""
        self.retrieval_seconds.observe(ms / 1000.0)

    # --- at each scrape ------------------------------------------------------------------------------

    async def refresh(self, store: MemoryStore) -> None:
        """Read the backlogs from the database; when it cannot be read, the last values stay and
        ``tierclaw_database_up`` is 0."""
        try:
            inbox = await store.inbox.count(answered=False)
            buffered = await store.buffer.count(dead=False)
            dead = await store.buffer.count(dead=True)
        except Exception as exc:
            log.warning("[gateway] metrics: the database could not be read: %s", exc)
            self.database_up.set(0)
            return
        self.inbox_backlog.set(inbox)
        self.extraction_backlog.set(buffered)
        self.dead_letters.set(dead)
        self.database_up.set(1)

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)
