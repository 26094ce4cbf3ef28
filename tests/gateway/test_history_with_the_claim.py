"""The history of the message being answered comes with its claim (issue 38, item 5): the process loop
hands what the claim read (gateway/inbox.py) to the handler's ``SessionStore.history``
(memory/sessions.py ``primed``), so the reply path reads no history of its own — whether the message was
claimed on its own or by the answered-mark of the one before it — and the history is the same as a read
would give. On both stores (``memory_db``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from channels.base import InboundMessage, OutboundMessage
from gateway.inbox import DurableInbox
from gateway.loop import ProcessLoop
from memory.sessions import SessionStore
from memory.store.exchange import Exchange, ExchangeTurn
from memory.store.open import open_store
from memory.store.protocol import MemoryStore

T0 = "2026-01-02 03:04:05"


class Recorder:
    name = "test"

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []

    async def start(self, deliver) -> None:  # pragma: no cover - not used
        pass

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)

    async def stop(self) -> None:
        pass


@pytest.fixture
async def store(memory_db: str) -> AsyncIterator[MemoryStore]:
    opened = await open_store(memory_db, warm_text=False)
    try:
        yield opened
    finally:
        await opened.close()


def _msg(text: str, sequence: int) -> InboundMessage:
    return InboundMessage("test", "c1", "c1", text, message_id=text, delivery_id=text, sequence=sequence)


async def _until(condition: Any, timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_the_history_read_with_the_claim_is_the_handlers_and_no_read_is_made(
    store: MemoryStore,
) -> None:
    sessions = SessionStore(store.sessions)
    reads: list[tuple[object, ...]] = []
    recent = store.sessions.recent

    async def counted(*args: Any) -> list[tuple[str, str]]:
        reads.append(args)
        return await recent(*args)

    store.sessions.recent = counted  # type: ignore[method-assign]
    seen: list[list[tuple[str, str]]] = []
    second_stored = asyncio.Event()

    async def answers(message: InboundMessage) -> str:
        seen.append(await sessions.history(message.chat_key, 3))
        if message.text == "one":
            await second_stored.wait()  # "two" is claimed by this answer's mark
        reply = f"re:{message.text}"
        turns = [ExchangeTurn("user", message.text, "", "", 1), ExchangeTurn("assistant", reply, "", "", 1)]
        exchange = Exchange("o", "test", "c1", message.chat_key, 1, T0, turns, keep=False)
        await store.exchange.write(exchange, token_budget=0, quiet_gap_s=0.0)
        await sessions.appended(message.chat_key, 1, 2)
        return reply

    inbox = DurableInbox(store, "r1")
    inbox.history = 3
    loop = ProcessLoop(answers, inbox=inbox, sweep_every=0.05)
    channel = Recorder()
    loop.add_channel(channel)
    loop.start()
    try:
        await loop.deliver(_msg("one", 1))
        await _until(lambda: len(seen) == 1)
        await loop.deliver(_msg("two", 2))  # its chat's worker is busy: claimed by the mark of "one"
        second_stored.set()
        await asyncio.wait_for(loop.drain(), 30)
        await loop.deliver(_msg("three", 3))  # the chat was let go: held at intake, claimed on its own
        await asyncio.wait_for(loop.drain(), 30)
    finally:
        await asyncio.wait_for(loop.stop(), 60)
    assert [m.text for m in channel.sent] == ["re:one", "re:two", "re:three"]
    assert seen == [
        [],
        [("user", "one"), ("assistant", "re:one")],
        [("assistant", "re:one"), ("user", "two"), ("assistant", "re:two")],
    ]
    assert reads == []  # every history came with its claim
    assert await sessions.history("test:c1", 2) == [("user", "three"), ("assistant", "re:three")]
    assert len(reads) == 1  # outside an answer: read
