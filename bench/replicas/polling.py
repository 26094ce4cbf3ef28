"""The polling trial: N replicas with Telegram in polling mode; exactly one polls (the advisory lock,
docs/scale-out.md "Channels"), the others stand by. Each chat's updates are queued in order at the
local Telegram server, the next once the poller confirmed the last (its ``getUpdates`` offset moved
past it: stored); once ``kill_at`` of them were confirmed the poller — the one replica whose log never
said it stands by — is SIGKILLed. ``takeover_s`` is from the kill until the next ``getUpdates`` the
server receives (another replica's: the dead one cannot call); the killed one is started again
``restart_after`` seconds after that (bench/replicas/__init__.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from bench.replicas.counting import Sent, poller
from bench.replicas.gateways import Replica, make_replica, start_all, stop_all, write_config
from bench.replicas.trial import TrialSettings, in_flight_at, kill_accepted, report, settle, until
from bench.replicas.webhook import FIRST_USER, chat_text, telegram_replies, telegram_section
from bench.stub_process import stub_server
from localservers.telegram_server import TelegramStub


def _confirmed(tg: TelegramStub, update_id: int) -> Callable[[], bool]:
    """Whether a replica has taken ``update_id`` and confirmed it (the stub no longer offers it)."""
    return lambda: update_id not in tg.pending_updates()


async def send_chats(tg: TelegramStub, s: TrialSettings, sent: Sent) -> None:
    """Each chat's updates queued in order, the next once the last was confirmed; chats concurrently."""

    async def one_chat(chat: int) -> None:
        user = tg.user(FIRST_USER + chat, first_name=f"P{chat}")
        for n in range(s.messages):
            message = tg.message(chat_text(chat, n), sender=user)
            sent.add(message["message_id"], chat, n)
            update_id = tg.push_update(tg.update(message))
            await until(_confirmed(tg, update_id), s.timeout)
            sent.accepted_at[message["message_id"]] = time.monotonic()

    sent.started = time.monotonic()
    await asyncio.gather(*(one_chat(c) for c in range(s.chats)))


async def run_polling(s: TrialSettings, base: Path) -> dict[str, Any]:
    """One polling trial; the run's JSON object plus ``seconds`` and ``poller_killed``."""
    with stub_server("process", "--delay", str(s.latency), "--notes") as model_url, TelegramStub() as tg:
        made = [make_replica(base, i, s.database, model_url, s.jobs_every) for i in range(s.replicas)]
        replicas = [r for r, _ in made]
        for r, config in made:
            config["channels"]["telegram"] = telegram_section(tg, "polling", r.channel_port, "")
            write_config(r, config)
        sent = Sent()
        try:
            async with aiohttp.ClientSession() as http:
                await start_all(replicas, http)
                work = asyncio.create_task(send_chats(tg, s, sent))
                killed = await _kill_poller(s, replicas, tg, sent, http)
                await work
                finished = await settle(lambda: telegram_replies(tg), set(sent.chat_of), s.idle)
                await asyncio.sleep(1.0)  # a late second answer would show now
        finally:
            stop_all(replicas)
    result = await report("polling", s, sent, lambda: telegram_replies(tg), replicas, finished)
    result["takeover_s"] = None if killed is None else killed[1]
    result["in_flight_at_kill"] = None if killed is None else killed[2]
    result["poller_killed"] = None if killed is None else replicas[killed[0]].name
    return result


async def _kill_poller(
    s: TrialSettings, replicas: list[Replica], tg: TelegramStub, sent: Sent, http: aiohttp.ClientSession
) -> tuple[int, float | None, int] | None:
    """SIGKILL the poller once ``kill_at`` of the updates were confirmed; (its index, seconds until
    another replica's first getUpdates — None if none came within ``idle`` —, its sends in flight at the
    kill); restart it after."""
    if s.kill_at is None:
        return None
    await kill_accepted(s, sent)
    if len(replicas) > 1:
        await until(lambda: poller({r.index: r.log_text() for r in replicas}) is not None, s.timeout)
    index = poller({r.index: r.log_text() for r in replicas}) or 0
    victim = replicas[index]
    victim.kill()
    killed = time.monotonic()
    flying = await in_flight_at(s, victim)

    def polled_since() -> list[float]:
        return [c.at for c in tg.requests("getUpdates") if c.at >= killed]

    takeover: float | None = None
    try:
        await until(lambda: bool(polled_since()), s.idle)
        takeover = round(polled_since()[0] - killed, 2)
    except TimeoutError:
        pass
    await asyncio.sleep(s.restart_after)
    victim.start()
    await victim.wait_ready(http)
    return index, takeover, flying
