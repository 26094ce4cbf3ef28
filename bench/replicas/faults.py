"""The fault trials (issue 38): the webhook trial's set-up (bench/replicas/webhook.py) with another
fault instead of a kill, each run reporting the same keys.

- ``stall``: replica 0 SIGSTOPped once ``kill_at`` of the updates were accepted, for ``stall_for``
  seconds — past its chat holds' 30 s lease, so the others take its chats over — then SIGCONTinued. It
  wakes holding replies it had made before the stall: the fence (gateway/loop.py ``may_send``) must
  keep every one of them from going out. ``takeover_s``: from the stop until the last message pending
  at it was answered; ``in_flight_at_kill``: its claims not marked answered at the stop.
- ``skew``: replica 1's clock runs ``skew`` seconds ahead (``gateway.clockOffset``); nobody is killed.
  Leases, due times and sweeps run on the database's clock, so it must change nothing.
- ``race``: each chat's messages are delivered two at a time, concurrently, over two connections (so to
  two replicas, behind the round-robin forwarder): they reach the database in either order and must be
  answered in the platform's (the update id's). Nobody is killed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.replicas.counting import Sent
from bench.replicas.gateways import Replica
from bench.replicas.trial import TrialSettings, answered_after, in_flight_at, kill_accepted
from bench.replicas.webhook import FIRST_USER, chat_text, run_webhook, telegram_replies
from localservers.telegram_server import TelegramStub
from localservers.telegram_webhook import WebhookSender


async def run_stall(s: TrialSettings, base: Path) -> dict[str, Any]:
    """One stall trial (see the module docstring)."""
    return await run_webhook(s, base, mode="stall", fault=_stall)


async def run_skew(s: TrialSettings, base: Path) -> dict[str, Any]:
    """One skew trial: replica 1 (replica 0 when alone) ``skew`` seconds ahead, no kill."""
    skewed = 1 if s.replicas > 1 else 0
    return await run_webhook(s, base, mode="skew", fault=_no_fault, clock_offsets={skewed: s.skew})


async def run_race(s: TrialSettings, base: Path) -> dict[str, Any]:
    """One race trial: each chat's messages two at a time over two connections, no kill."""
    return await run_webhook(s, base, mode="race", fault=_no_fault, send=_send_in_pairs)


async def _no_fault(
    s: TrialSettings, replicas: list[Replica], tg: TelegramStub, sent: Sent, http: aiohttp.ClientSession
) -> tuple[float | None, int | None]:
    return None, None


async def _stall(
    s: TrialSettings, replicas: list[Replica], tg: TelegramStub, sent: Sent, http: aiohttp.ClientSession
) -> tuple[float | None, int | None]:
    """SIGSTOP replica 0 once ``kill_at`` of the updates were accepted, SIGCONT it ``stall_for`` seconds
    later; (seconds until the messages pending at the stop were answered, its sends in flight then)."""
    if s.kill_at is None:
        return None, None
    victim = replicas[0]
    await kill_accepted(s, sent)
    victim.pause()
    stopped = time.monotonic()
    answered = {m for _, m in telegram_replies(tg)}
    pending = {m for m in sent.accepted_at if m not in answered}
    try:
        flying = await in_flight_at(s, victim)
        await asyncio.sleep(max(s.stall_for - (time.monotonic() - stopped), 0.0))
    finally:
        victim.resume()
    wait = s.idle + s.stall_for
    return await answered_after(lambda: telegram_replies(tg), stopped, pending, wait), flying


async def _send_in_pairs(tg: TelegramStub, sender: WebhookSender, s: TrialSettings, sent: Sent) -> None:
    """Each chat's messages two at a time: both posted at once (two connections), the next pair once
    both were accepted; chats concurrently."""

    async def one(message: dict[str, Any], update: dict[str, Any]) -> None:
        sent.posted[message["message_id"]] = (str(update["update_id"]), time.time())
        await sender.deliver(update)
        sent.accepted_at[message["message_id"]] = time.monotonic()

    async def one_chat(chat: int) -> None:
        user = tg.user(FIRST_USER + chat, first_name=f"P{chat}")
        for first in range(0, s.messages, 2):
            pair = [
                tg.message(chat_text(chat, n), sender=user) for n in range(first, min(first + 2, s.messages))
            ]
            for n, message in enumerate(pair, first):
                sent.add(message["message_id"], chat, n)
            updates = [tg.update(message) for message in pair]  # update ids in the chat's order
            await asyncio.gather(*(one(m, u) for m, u in zip(pair, updates, strict=True)))

    sent.started = time.monotonic()
    await asyncio.gather(*(one_chat(c) for c in range(s.chats)))
