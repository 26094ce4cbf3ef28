"""The benches' in-process channel: records when each reply was sent and what it said.

Shared by ``bench.gateway_throughput`` (throughput and the startup probe) and ``bench.db_cost``, which
deliver messages straight into the gateway loop and time the replies by the ``reply_to`` message id.
"""

from __future__ import annotations

import asyncio
import time

from bench.throughput_data import CHANNEL
from channels.base import Deliver, OutboundMessage


class BenchChannel:
    """A Channel that records when each reply was sent (by the ``reply_to`` message id)."""

    def __init__(self) -> None:
        self.sent_at: dict[str, float] = {}
        self.texts: dict[str, str] = {}
        self.first_reply = asyncio.Event()
        self.deliver: Deliver | None = None

    @property
    def name(self) -> str:
        return CHANNEL

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def send(self, message: OutboundMessage) -> None:
        self.sent_at[message.reply_to] = time.perf_counter()
        self.texts[message.reply_to] = message.text
        self.first_reply.set()

    async def stop(self) -> None:
        self.deliver = None

    def reset(self) -> None:
        self.sent_at.clear()
        self.texts.clear()
