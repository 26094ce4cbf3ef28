"""Start-up with several gateways on one PostgreSQL database (gateway/app.py, docs/scale-out.md): a
starting replica leaves the chats another live replica holds alone, takes over the chats whose replica
died (its hold's lease ran out), and a replica restarting under its own id takes its own back."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest

from channels.base import Deliver, InboundMessage, OutboundMessage
from gateway.app import Runtime
from gateway.config import load_config
from localservers.openai_server import OpenAIStub

Open = Callable[[str], Awaitable[tuple[Runtime, "Recorder"]]]


class Recorder:
    """A channel named like Telegram's that records what the runtime sends."""

    name = "telegram"

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)

    async def stop(self) -> None:
        pass


@pytest.fixture
async def open_replica(tmp_path: Path, model: OpenAIStub, postgres_url: str) -> AsyncIterator[Open]:
    opened: list[Runtime] = []

    async def open_one(replica: str) -> tuple[Runtime, Recorder]:
        raw = {
            "provider": {"apiKey": "sk-test-0000", "baseUrl": model.base_url, "maxRetries": 0},
            "agent": {"workspace": str(tmp_path / "ws"), "tools": False},
            "memory": {"databaseUrl": postgres_url, "embedding": {"provider": "none"}},
            "gateway": {"replicaId": replica},
            "timezone": "UTC",
        }
        path = tmp_path / f"{replica}.json"
        path.write_text(json.dumps(raw), encoding="utf-8")
        channel = Recorder()
        runtime = await Runtime.open(load_config(path, env={}), [channel])
        opened.append(runtime)
        return runtime, channel

    try:
        yield open_one
    finally:
        for runtime in opened:
            await runtime.close()


def _message(text: str, key: str, chat: str = "7") -> InboundMessage:
    return InboundMessage("telegram", chat, chat, text, delivery_id=key)


async def _until(condition: Callable[[], bool], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_starting_replica_leaves_a_live_replicas_chat_and_takes_a_dead_ones(
    open_replica: Open,
) -> None:
    live, _ = await open_replica("r1")
    # r1 took a message of chat 7 in and holds the chat (its lease is live); "r9" held chat 8 with a
    # message waiting and died (its lease ran out: -1 s on the database's clock).
    await live.inbox.accept(_message("in flight on r1", "u1"))
    assert await live.inbox.hold(("telegram", "7"))
    dead_inbox = type(live.inbox)(live.engine.store, "r9", lease=timedelta(seconds=-1))
    await dead_inbox.accept(_message("left by the dead r9", "u2", chat="8"))
    assert await dead_inbox.hold(("telegram", "8"))

    starting, channel = await open_replica("r2")
    starting.loop.sweep_every = 0.1
    takeovers: list[int] = []
    starting.on_takeover = lambda: takeovers.append(1)
    sweeps: list[int] = []
    sweep = starting.loop.take_waiting

    async def counted(**kwargs: bool) -> int:
        taken = await sweep(**kwargs)
        sweeps.append(taken)
        return taken

    starting.loop.take_waiting = counted  # type: ignore[method-assign]
    await starting.start(schedule=False)
    await asyncio.wait_for(starting.loop.drain(), 30)
    assert [m.text for m in channel.sent] == ["stub reply: left by the dead r9"]

    # chat 7 stays r1's while its lease is live, sweep after sweep of r2's ...
    await _until(lambda: len(sweeps) >= 4)
    assert len(channel.sent) == 1 and await live.inbox.holder(("telegram", "7")) == "r1"
    # ... and once r1 stops renewing (its lease runs out), r2 takes it over and answers it.
    live.inbox.lease = timedelta(seconds=-1)
    assert await live.inbox.hold(("telegram", "7"))
    await _until(lambda: len(channel.sent) == 2)
    await asyncio.wait_for(starting.loop.drain(), 30)
    assert [m.text for m in channel.sent][1] == "stub reply: in flight on r1"
    assert len(takeovers) == 2  # r9's at start, r1's once its lease ran out
    assert await starting.inbox.unanswered() == []
    assert await starting.engine.store.chat_holds.all() == []  # each let go once answered


async def test_a_replica_restarting_under_its_own_id_answers_its_own_chats_at_once(
    open_replica: Open,
) -> None:
    before, _ = await open_replica("r1")
    await before.inbox.accept(_message("asked before the restart", "u1"))
    assert await before.inbox.hold(("telegram", "7"))  # the lease is still live: the process died

    again, channel = await open_replica("r1")
    await again.start(schedule=False)
    await asyncio.wait_for(again.loop.drain(), 30)
    assert [m.text for m in channel.sent] == ["stub reply: asked before the restart"]


async def test_a_replica_restarting_under_its_own_id_says_its_own_claim_was_cut_short(
    open_replica: Open, caplog: pytest.LogCaptureFixture
) -> None:
    """The message was claimed too before the restart (its send intent on record): the restarted replica
    claims it again and answers it, and the one line it logs says the claim was its own, cut short —
    not that another replica stopped (no takeover: gateway/in_flight.py)."""
    before, _ = await open_replica("r1")
    await before.inbox.accept(_message("claimed before the restart", "u1"))
    assert await before.inbox.hold(("telegram", "7"))
    claimed = await before.inbox.next_message(("telegram", "7"))
    assert claimed is not None and claimed.in_flight_by is None

    again, channel = await open_replica("r1")
    with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
        await again.start(schedule=False)
        await asyncio.wait_for(again.loop.drain(), 30)
    assert [m.text for m in channel.sent] == ["stub reply: claimed before the restart"]
    said = [r.getMessage() for r in caplog.records if "answering it again" in r.getMessage()]
    assert len(said) == 1 and "claimed before by this replica (r1)" in said[0], said
    assert "stopped before marking" not in said[0]
