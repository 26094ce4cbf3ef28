"""The Feishu callback trial: N replicas with Feishu in HTTP-callback mode behind the round-robin
forwarder, the local Feishu server's callback side posting each chat's message events in order
(signed, encrypted, each retried until 2xx as Feishu does: localservers/feishu_callback.py) and
receiving the replies (the Reply API). Replica 0 is SIGKILLed once ``kill_at`` of the events were
accepted and started again ``restart_after`` seconds later (bench/replicas/__init__.py).

An answer is a reply the stub really posted to the message (``FeishuStub.sent``, kind "reply"); a reply
sent again with the same ``uuid`` is posted once by Feishu, so ``reply_requests_twice`` also counts
messages whose Reply API was called more than once (what a person would not see)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

from bench.replicas.counting import Sent
from bench.replicas.gateways import Replica, make_replica, start_all, stop_all, write_config
from bench.replicas.trial import (
    TrialSettings,
    answered_after,
    in_flight_at,
    kill_accepted,
    report,
    settle,
)
from bench.replicas.webhook import chat_text
from bench.stub_process import stub_server
from localservers.feishu_callback import CallbackSender
from localservers.feishu_server import FeishuStub, message_event
from localservers.round_robin import RoundRobin

ENCRYPT_KEY = "bench-replicas-encrypt-key"
TOKEN = "bench-replicas-verification-token"
PATH = "/feishu/events"


def feishu_replies(feishu: FeishuStub) -> list[tuple[float, Any]]:
    """(time, replied-to message id) of every reply the stub posted, in order."""
    return [(s.at, s.target) for s in list(feishu.sent) if s.kind == "reply"]


def reply_requests_twice(feishu: FeishuStub, ours: set[str]) -> int:
    """Messages of ours whose Reply API was called more than once (``uuid`` repeats included)."""
    calls = Counter(r.path.split("/")[-2] for r in feishu.send_requests() if r.path.endswith("/reply"))
    return sum(1 for m in ours if calls[m] > 1)


def feishu_section(feishu: FeishuStub, port: int, app_id: str) -> dict[str, Any]:
    return {
        "enabled": True,
        "appId": app_id,
        "appSecret": "bench-secret",
        "verificationToken": TOKEN,
        "encryptKey": ENCRYPT_KEY,
        "allowFrom": ["*"],
        "mode": "callback",
        "domain": feishu.domain,
        "timeoutSeconds": 10,
        "callback": {"listen": "127.0.0.1", "port": port, "path": PATH},
    }


async def send_chats(sender: CallbackSender, app_id: str, s: TrialSettings, sent: Sent) -> None:
    """Each chat's events in order, one accepted (2xx) before the next; chats concurrently."""

    async def one_chat(chat: int) -> None:
        for n in range(s.messages):
            message_id = f"om_c{chat}m{n}_{uuid.uuid4().hex[:8]}"
            event = message_event(
                chat_text(chat, n),
                sender=f"ou_p{chat}",
                chat_id=f"oc_p{chat}",
                message_id=message_id,
                token=TOKEN,
                app_id=app_id,
            )
            sent.add(message_id, chat, n)
            await sender.deliver(event)
            sent.accepted_at[message_id] = time.monotonic()

    sent.started = time.monotonic()
    await asyncio.gather(*(one_chat(c) for c in range(s.chats)))


async def run_feishu(s: TrialSettings, base: Path) -> dict[str, Any]:
    """One Feishu callback trial; the run's JSON object plus ``seconds`` and ``callback_retries``."""
    app_id = f"cli_bench{uuid.uuid4().hex[:8]}"
    with stub_server("process", "--delay", str(s.latency), "--notes") as model_url, FeishuStub() as feishu:
        made = [make_replica(base, i, s.database, model_url, s.jobs_every) for i in range(s.replicas)]
        replicas = [r for r, _ in made]
        for r, config in made:
            config["channels"]["feishu"] = feishu_section(feishu, r.channel_port, app_id)
            write_config(r, config)
        with RoundRobin([f"http://127.0.0.1:{r.channel_port}" for r in replicas]) as lb:
            sender = CallbackSender(lb.url + PATH, encrypt_key=ENCRYPT_KEY)
            sent = Sent()
            try:
                async with aiohttp.ClientSession() as http:
                    await start_all(replicas, http)
                    work = asyncio.create_task(send_chats(sender, app_id, s, sent))
                    takeover, flying = await _kill_and_restart(s, replicas[0], feishu, sent, http)
                    await work
                    finished = await settle(lambda: feishu_replies(feishu), set(sent.chat_of), s.idle)
                    await asyncio.sleep(1.0)  # a late second answer would show now
            finally:
                await sender.close()
                stop_all(replicas)
        result = await report("feishu", s, sent, lambda: feishu_replies(feishu), replicas, finished)
        result["reply_requests_twice"] = reply_requests_twice(feishu, {str(m) for m in sent.chat_of})
        _keep_posts(feishu, replicas[0].log.parent / "feishu_posts.json")
    result["takeover_s"] = None if takeover is None else round(takeover, 2)
    result["in_flight_at_kill"] = flying  # Feishu drops the repeat of each: its key is the message's
    result["callback_retries"] = sender.failed_attempts
    return result


def _keep_posts(feishu: FeishuStub, path: Path) -> None:
    """Every message the stub posted — kind, target, type, ``uuid``, time, card — beside the replicas'
    logs (``--workdir``): a message answered twice shows which sends made its two posts."""
    posts = [
        {
            "kind": s.kind,
            "target": s.target,
            "msg_type": s.msg_type,
            "uuid": s.uuid,
            "at": s.at,
            "card": s.card.card_id if s.card is not None else None,
        }
        for s in list(feishu.sent)
    ]
    path.write_text(json.dumps(posts), encoding="utf-8")


async def _kill_and_restart(
    s: TrialSettings, victim: Replica, feishu: FeishuStub, sent: Sent, http: aiohttp.ClientSession
) -> tuple[float | None, int | None]:
    """SIGKILL ``victim`` once ``kill_at`` of the events were accepted, restart it; the takeover time and
    its sends in flight at the kill."""
    if s.kill_at is None:
        return None, None
    await kill_accepted(s, sent)
    victim.kill()
    killed = time.monotonic()
    answered = {m for _, m in feishu_replies(feishu)}
    pending = {m for m in sent.accepted_at if m not in answered}
    flying = await in_flight_at(s, victim)
    await asyncio.sleep(max(s.restart_after - (time.monotonic() - killed), 0.0))
    victim.start()
    await victim.wait_ready(http)
    wait = s.idle + s.restart_after
    return await answered_after(lambda: feishu_replies(feishu), killed, pending, wait), flying
