"""The delivery trial of ``python -m bench.reminders``: real gateway processes
(``bench/replicas/gateways.py``) with Telegram on the local Bot API server, on one database, and N
reminders due over a window; one gateway is SIGKILLed mid-way and started again. What the Telegram server
received is compared with what was due: ``delivered`` (sent at least once), ``twice`` (sent more than
once), ``lost`` (never sent), ``late_s`` (p50/p95 of the first send after the due time, every reminder,
the killed gateway's included). A few more reminders go to chats that blocked the bot:
``failed_reported`` counts those marked failed with their reason (never sent), ``failed_log_lines`` the
gateways' one line each.

Due times are UTC wall clock; the Telegram server stamps each request with ``time.monotonic()``; the two are
tied once when the reminders are seeded (both clocks are this machine's, as is PostgreSQL's).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp

from bench.replicas.gateways import Replica, make_replica, start_all, stop_all, write_config
from bench.replicas.webhook import telegram_section
from bench.report import percentile
from localservers.telegram_server import TelegramStub
from memory.clock import to_db_fine, utcnow
from memory.store.open import open_store
from memory.store.reminders import NewReminder

PREFIX = "⏰ Reminder: "
FIRST_CHAT = 5000
BLOCKED_CHATS = 5


@dataclass
class DeliveryTrial:
    database: str  # a postgresql:// URL or a SQLite file
    gateways: int = 3
    reminders: int = 1000
    over: float = 60.0  # seconds the due times are spread over
    chats: int = 100
    lead: float = 3.0  # seconds from seeding to the first due time
    kill_at: float | None = 25.0  # seconds after the first due time; None: no kill
    restart_after: float = 5.0
    refused: int = 10  # reminders to chats that blocked the bot
    settle: float = 45.0  # after the last due time, how long to wait for the last sends


async def seed(trial: DeliveryTrial) -> tuple[dict[str, float], float]:
    """Store the reminders (their text names them); {text: due time on the monotonic clock} and the
    monotonic time of the first due."""
    store = await open_store(trial.database, warm_text=False)
    try:
        wall, mono = utcnow(), time.monotonic()
        first = wall + timedelta(seconds=trial.lead)
        due: dict[str, float] = {}
        for n in range(trial.reminders + trial.refused):
            at = first + timedelta(seconds=trial.over * (n % trial.reminders) / trial.reminders)
            refused = n >= trial.reminders
            chat = FIRST_CHAT - 1 - n % BLOCKED_CHATS if refused else FIRST_CHAT + n % trial.chats
            text = f"{'refused' if refused else 'note'}{n}"
            local = at.strftime("%Y-%m-%d %H:%M")
            row = NewReminder(
                f"telegram:{chat}", "telegram", str(chat), text, text, "en", "UTC", local, "", to_db_fine(at)
            )
            if await store.reminders.add(row, to_db_fine(wall), 1_000_000) is None:
                raise RuntimeError("seeding a reminder failed")
            due[text] = mono + (at - wall).total_seconds()
        return due, mono + trial.lead
    finally:
        await store.close()


async def failed_marked(database: str) -> int:
    """Reminders to blocked chats marked failed with a reason."""
    store = await open_store(database, warm_text=False)
    try:
        owners = [f"telegram:{FIRST_CHAT - 1 - b}" for b in range(BLOCKED_CHATS)]
        rows = [r for o in owners for r in await store.reminders.of_owner(o, ("failed",))]
        return sum(1 for r in rows if r.last_error and "blocked" in r.last_error)
    finally:
        await store.close()


def sends(tg: TelegramStub) -> dict[str, list[float]]:
    """{reminder text: monotonic times the Telegram server accepted it}."""
    out: dict[str, list[float]] = defaultdict(list)
    for call in tg.sent():
        text = call.params.get("text", "")
        if text.startswith(PREFIX):
            out[text[len(PREFIX) :].split(" (late", 1)[0]].append(call.at)
    return out


async def run_delivery(trial: DeliveryTrial, base: Path) -> dict[str, Any]:
    """One trial; its JSON object."""
    load_before = os.getloadavg()
    with TelegramStub() as tg:
        for b in range(BLOCKED_CHATS):
            tg.chat_refusals.block(FIRST_CHAT - 1 - b)
        made = [
            make_replica(base, i, trial.database, "http://127.0.0.1:9/v1", None)
            for i in range(trial.gateways)
        ]
        replicas = [r for r, _ in made]
        for r, config in made:
            config["channels"]["telegram"] = telegram_section(tg, "polling", 0, "")
            write_config(r, config)
        async with aiohttp.ClientSession() as http:
            try:
                await start_all(replicas, http)
                due, first = await seed(trial)
                killed = await _kill_and_restart(trial, replicas[0], first, http)
                ours = {t for t in due if t.startswith("note")}
                deadline = first + trial.over + trial.settle
                while time.monotonic() < deadline and not ours <= set(sends(tg)):
                    await asyncio.sleep(0.2)
                await asyncio.sleep(2.0)  # a second send of any reminder would show now
            finally:
                stop_all(replicas)
    return _report(trial, tg, due, killed, replicas, load_before) | {
        "failed_reported": await failed_marked(trial.database)
    }


async def _kill_and_restart(
    trial: DeliveryTrial, victim: Replica, first: float, http: aiohttp.ClientSession
) -> float | None:
    """SIGKILL ``victim`` ``kill_at`` seconds into the window, start it again ``restart_after`` later;
    when it was killed (monotonic), or None."""
    if trial.kill_at is None:
        return None
    await asyncio.sleep(max(0.0, first + trial.kill_at - time.monotonic()))
    victim.kill()
    killed = time.monotonic()
    await asyncio.sleep(trial.restart_after)
    victim.start()
    await victim.wait_ready(http)
    return killed


def _report(
    trial: DeliveryTrial,
    tg: TelegramStub,
    due: dict[str, float],
    killed: float | None,
    replicas: list[Replica],
    load_before: tuple[float, float, float],
) -> dict[str, Any]:
    sent = sends(tg)
    ours = [t for t in due if t.startswith("note")]
    late = [max(0.0, min(sent[t]) - due[t]) for t in ours if sent.get(t)]
    logs = "".join(r.log_text() for r in replicas)
    return {
        "store": "postgresql" if "://" in trial.database else "sqlite",
        "gateways": trial.gateways,
        "reminders": trial.reminders,
        "over_s": trial.over,
        "delivered": sum(1 for t in ours if sent.get(t)),
        "twice": sum(1 for t in ours if len(sent.get(t, [])) > 1),
        "lost": sum(1 for t in ours if not sent.get(t)),
        "late_s": {
            "p50": round(percentile(late, 50), 3),
            "p95": round(percentile(late, 95), 3),
            "max": round(max(late, default=0.0), 3),
        },
        "refused_sent": sum(1 for t in due if t.startswith("refused") and sent.get(t)),
        "failed_log_lines": logs.count("could not be delivered"),
        "killed_at_s": None if killed is None else round(trial.kill_at or 0.0, 1),
        "down_s": trial.restart_after if killed is not None else 0.0,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
