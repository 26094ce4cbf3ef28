"""The webhook trial (and the throughput runs): N replicas with Telegram in webhook mode behind the
round-robin forwarder, the local Telegram server posting each chat's updates in order and retrying each
until 2xx; replica 0 SIGKILLed once ``kill_at`` of them were accepted and started again
``restart_after`` seconds later (bench/replicas/__init__.py). The fault trials (bench/replicas/faults.py)
run the same with another fault, sending or config."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bench.replicas.counting import Sent
from bench.replicas.cpu import snapshot, spent
from bench.replicas.gateways import Replica, make_replica, start_all, stop_all, write_config
from bench.replicas.trial import (
    TrialSettings,
    answered_after,
    in_flight_at,
    kill_accepted,
    report,
    settle,
)
from bench.stub_process import stub_server
from localservers.round_robin import RoundRobin
from localservers.telegram_server import TelegramStub
from localservers.telegram_webhook import WebhookSender

SECRET = "bench-replicas-secret"
FIRST_USER = 1000

# A trial's fault, run while the messages go in: (seconds from the fault until the messages pending at it
# were answered, messages the replica had in flight when it died or stopped), or (None, None): no fault.
Fault = Callable[
    [TrialSettings, list[Replica], TelegramStub, Sent, aiohttp.ClientSession],
    Awaitable[tuple[float | None, int | None]],
]
Sending = Callable[[TelegramStub, WebhookSender, TrialSettings, Sent], Coroutine[Any, Any, None]]


def telegram_replies(tg: TelegramStub) -> list[tuple[float, Any]]:
    """(time, replied-to message id) of every reply the bot sent, in arrival order."""
    out = []
    for call in tg.sent():
        target = call.json("reply_parameters") or {}
        if target.get("message_id"):
            out.append((call.at, int(target["message_id"])))
    return out


def chat_text(chat: int, n: int) -> str:
    """Message ``n`` of ``chat``: one ``note:WORD`` the stub's memory model turns into one fact."""
    return f"message {n} of chat {chat}: note:c{chat}m{n}"


async def send_chats(tg: TelegramStub, sender: WebhookSender, s: TrialSettings, sent: Sent) -> None:
    """Each chat's messages in order, one accepted before the next; chats concurrently."""

    async def one_chat(chat: int) -> None:
        user = tg.user(FIRST_USER + chat, first_name=f"P{chat}")
        for n in range(s.messages):
            message = tg.message(chat_text(chat, n), sender=user)
            sent.add(message["message_id"], chat, n)
            await sender.deliver(tg.update(message))
            sent.accepted_at[message["message_id"]] = time.monotonic()

    sent.started = time.monotonic()
    await asyncio.gather(*(one_chat(c) for c in range(s.chats)))


def telegram_section(tg: TelegramStub, mode: str, port: int, public_url: str) -> dict[str, Any]:
    """``channels.telegram`` for a replica: webhook (its own port, the forwarder's public URL) or polling."""
    section: dict[str, Any] = {
        "enabled": True,
        "token": tg.token,
        "baseUrl": tg.base_url,
        "allowFrom": ["*"],
        "mode": mode,
    }
    if mode == "webhook":
        section["webhook"] = {
            "url": public_url + "/telegram",
            "listen": "127.0.0.1",
            "port": port,
            "path": "telegram",
            "secretToken": SECRET,
        }
    return section


async def run_webhook(
    s: TrialSettings,
    base: Path,
    *,
    mode: str = "webhook",
    fault: Fault | None = None,
    send: Sending | None = None,
    clock_offsets: dict[int, float] | None = None,
) -> dict[str, Any]:
    """One webhook trial; the run's JSON object plus ``seconds`` and ``webhook_retries``. ``fault``
    (default: replica 0 killed and restarted, when ``kill_at`` is set), ``send`` (default: each chat's
    messages one after another) and ``clock_offsets`` (replica index → ``gateway.clockOffset``) make the
    fault trials (bench/replicas/faults.py)."""
    fault = fault or _kill_and_restart
    send = send or send_chats
    with stub_server("process", "--delay", str(s.latency), "--notes") as model_url, TelegramStub() as tg:
        made = [make_replica(base, i, s.database, model_url, s.jobs_every) for i in range(s.replicas)]
        replicas = [r for r, _ in made]
        with RoundRobin([f"http://127.0.0.1:{r.channel_port}" for r in replicas]) as lb:
            for r, config in made:
                config["channels"]["telegram"] = telegram_section(tg, "webhook", r.channel_port, lb.url)
                if clock_offsets and r.index in clock_offsets:
                    config["gateway"]["clockOffset"] = f"{clock_offsets[r.index]:g}s"
                write_config(r, config)
            sender = WebhookSender(tg)
            sent = Sent()
            try:
                async with aiohttp.ClientSession() as http:
                    await start_all(replicas, http)
                    before = _cpu(s, replicas)
                    work = asyncio.create_task(send(tg, sender, s, sent))
                    takeover, flying = await fault(s, replicas, tg, sent, http)
                    await work
                    finished = await settle(lambda: telegram_replies(tg), set(sent.chat_of), s.idle)
                    cpu = None if takeover is not None or s.kill_at else spent(before, _cpu(s, replicas))
                    await asyncio.sleep(1.0)  # a late second answer would show now
            finally:
                await sender.close()
                stop_all(replicas)
    result = await report(mode, s, sent, lambda: telegram_replies(tg), replicas, finished)
    result["takeover_s"] = None if takeover is None else round(takeover, 2)
    result["in_flight_at_kill"] = flying
    result["webhook_retries"] = sender.failed_attempts
    result["cpu_s"] = cpu  # CPU seconds per part, runs without a kill (bench/replicas/cpu.py)
    return result


def _cpu(s: TrialSettings, replicas: list[Replica]) -> dict[str, float | None]:
    pids = [r.proc.pid for r in replicas if r.proc is not None]
    name = urlsplit(s.database).path.lstrip("/") if "://" in s.database else ""
    return snapshot(pids, name, "bench.stub_process")


async def _kill_and_restart(
    s: TrialSettings, replicas: list[Replica], tg: TelegramStub, sent: Sent, http: aiohttp.ClientSession
) -> tuple[float | None, int | None]:
    """SIGKILL replica 0 once ``kill_at`` of the updates were accepted, restart it; the takeover time
    (until the last update accepted and unanswered at the kill was answered) and its sends in flight."""
    if s.kill_at is None:
        return None, None
    victim = replicas[0]
    await kill_accepted(s, sent)
    victim.kill()
    killed = time.monotonic()
    answered = {m for _, m in telegram_replies(tg)}
    pending = {m for m in sent.accepted_at if m not in answered}
    flying = await in_flight_at(s, victim)
    await asyncio.sleep(max(s.restart_after - (time.monotonic() - killed), 0.0))
    victim.start()
    await victim.wait_ready(http)
    wait = s.idle + s.restart_after
    return await answered_after(lambda: telegram_replies(tg), killed, pending, wait), flying
