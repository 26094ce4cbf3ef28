"""Several gateways, one database: a real trial of replicas that share the work (issue 29, item 5).

    python -m bench.replicas --database postgresql://USER@HOST/DB [--replicas 3] [--chats 50]
        [--messages 12] [--latency 0.2] [--kill-at 0.4] [--restart-after 3] [--no-throughput] [--json]
    python -m bench.replicas --database sqlite --replicas 1 …      # the smoke test of the machinery

What runs, all on 127.0.0.1 and through the production path: N ``tierclaw gateway`` processes (Telegram in
webhook mode, each replica its own webhook port and ``gateway.http.port``), the round-robin forwarder in
front of them (localservers/round_robin.py, the load balancer: the URL every replica registers with
setWebhook), the local Telegram server (localservers/telegram_server.py) whose webhook side
(localservers/telegram_webhook.py) posts each update to that URL and retries it until it is answered
2xx, and the model stub in a child process with ``--latency`` per reply (bench/stub_process.py; its
memory model extracts one fact per ``note:WORD``, so duplicate extraction shows as duplicate memories).

``--chats`` × ``--messages`` updates are sent, each chat's in order (the next once the last was answered
2xx), chats concurrently. When ``--kill-at`` of them were accepted, replica 0 is killed with SIGKILL and
started again ``--restart-after`` seconds later. The counts come from what the Telegram server received:
``lost`` (sent, never answered), ``answered_twice`` (answered more than once), ``order_violations`` (a
chat's reply to an earlier message sent after the reply to a later one), ``duplicate_memories`` (live
memories of one owner with the same text, read after the run), ``takeover_s`` (from the kill until
the last message accepted and still unanswered at the kill was answered; null without a kill).
``throughput_one`` / ``throughput`` are messages/s with 1 and 2 replicas, zero model latency, no kill
(``--no-throughput`` skips them; on SQLite only ``throughput_one``).

Not built yet (docs/scale-out.md, "What is built"): the polling trial (kill the poller; needs the
advisory lock), the Feishu callback trial, and ``job_runs_duplicated`` over a simulated day (needs the
per-period job claims) — those keys are null, and ``--database`` must name PostgreSQL for more than one
replica: SQLite is for one process, and a second gateway on one file is refused at start.
``--json`` prints one object: ``runs`` [{mode, replicas, messages, answered, lost, answered_twice,
order_violations, duplicate_memories, job_runs_duplicated, takeover_s}], ``throughput``,
``throughput_one``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.report import emit_json
from bench.stub_process import REPO, child_env, stub_server
from localservers.round_robin import RoundRobin
from localservers.telegram_server import TelegramStub, free_port
from localservers.telegram_webhook import WebhookSender

SECRET = "bench-replicas-secret"
READY_TIMEOUT = 120.0
FIRST_USER = 1000


# --------------------------------------------------------------------------- the database argument


def database_problem(database: str, replicas: int) -> str | None:
    """Why ``--database`` cannot run this trial, or None."""
    if database == "sqlite":
        if replicas != 1:
            return (
                "--database sqlite runs one replica only (SQLite is for one process; a second gateway on "
                "the same file is refused): use --replicas 1, or a postgresql:// URL for several"
            )
        return None
    if not database.startswith(("postgresql://", "postgres://")):
        return (
            "--database must be a postgresql://USER@HOST/DB URL (or sqlite with --replicas 1), "
            f"not {database!r}"
        )
    return None


# --------------------------------------------------------------------------- the replicas


@dataclass
class Replica:
    """One gateway process: its ports, config file and log."""

    index: int
    webhook_port: int
    ops_port: int
    config: Path
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def ready_url(self) -> str:
        return f"http://127.0.0.1:{self.ops_port}/readyz"

    def start(self) -> None:
        env = {k: v for k, v in child_env().items() if not k.startswith("TIERCLAW_")}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway.cli",
                "gateway",
                "--log-level",
                "INFO",
                "--config",
                str(self.config),
            ],
            cwd=REPO,
            env={**env, "HOME": str(self.config.parent)},
            stdout=self.log.open("a", encoding="utf-8"),
            stderr=subprocess.STDOUT,
        )

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int | None:
        """SIGTERM (the gateway drains), then wait; the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    async def wait_ready(self, http: aiohttp.ClientSession) -> None:
        """Until /readyz answers 200 (the gateway's channels started, its database answers)."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                tail = self.log.read_text(encoding="utf-8", errors="replace")[-2000:]
                raise RuntimeError(f"replica {self.index} exited ({self.proc.returncode}):\n{tail}")
            try:
                async with http.get(self.ready_url) as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {self.index} was not ready within {READY_TIMEOUT:.0f} s")
            await asyncio.sleep(0.1)


def replica_config(
    base: Path, index: int, database: str, model_url: str, telegram_url: str, public_url: str
) -> Replica:
    """Write replica ``index``'s config (its own directory) and return it, not started."""
    home = base / f"replica-{index}"
    home.mkdir(parents=True, exist_ok=True)
    replica = Replica(index, free_port(), free_port(), home / "config.json", base / f"replica-{index}.log")
    memory: dict[str, Any] = {
        "dbPath": str(base / "memory.db"),
        "embedding": {"provider": "none"},
        "extraction": {"quietGap": "2s"},
        "scratchpad": False,
    }
    if database != "sqlite":
        memory["databaseUrl"] = database
    config = {
        "provider": {"apiKey": "sk-bench", "baseUrl": model_url, "maxRetries": 0, "timeoutSeconds": 30},
        "agent": {"model": "stub", "workspace": str(base / "workspace"), "tools": False},
        "memory": memory,
        "channels": {
            "telegram": {
                "enabled": True,
                "token": TelegramStub().token,
                "baseUrl": telegram_url,
                "allowFrom": ["*"],
                "mode": "webhook",
                "webhook": {
                    "url": public_url + "/telegram",
                    "listen": "127.0.0.1",
                    "port": replica.webhook_port,
                    "path": "telegram",
                    "secretToken": SECRET,
                },
            }
        },
        "gateway": {"replicaId": f"r{index}", "http": {"port": replica.ops_port}},
        "timezone": "UTC",
    }
    replica.config.write_text(json.dumps(config), encoding="utf-8")
    return replica


# --------------------------------------------------------------------------- one trial


@dataclass
class Sent:
    """What the bench sent and when each update was accepted (2xx), by Telegram message id."""

    chat_of: dict[int, int] = field(default_factory=dict)  # message id -> chat number
    order: dict[int, int] = field(default_factory=dict)  # message id -> its place in its chat
    accepted_at: dict[int, float] = field(default_factory=dict)
    started: float = 0.0


async def send_chats(tg: TelegramStub, sender: WebhookSender, chats: int, messages: int, sent: Sent) -> None:
    """Each chat's messages in order, one accepted before the next; chats concurrently."""

    async def one_chat(chat: int) -> None:
        user = tg.user(FIRST_USER + chat, first_name=f"P{chat}")
        for n in range(messages):
            text = f"message {n} of chat {chat}: note:c{chat}m{n}"
            message = tg.message(text, sender=user)
            sent.chat_of[message["message_id"]] = chat
            sent.order[message["message_id"]] = n
            await sender.deliver(tg.update(message))
            sent.accepted_at[message["message_id"]] = time.monotonic()

    sent.started = time.monotonic()
    await asyncio.gather(*(one_chat(c) for c in range(chats)))


def replies(tg: TelegramStub) -> list[tuple[float, int]]:
    """(time, replied-to message id) of every reply the bot sent, in arrival order."""
    out = []
    for call in tg.sent():
        target = call.json("reply_parameters") or {}
        if target.get("message_id"):
            out.append((call.at, int(target["message_id"])))
    return out


def count(sent: Sent, answers: list[tuple[float, int]]) -> dict[str, int]:
    """answered / lost / answered_twice / order_violations from what the Telegram server received."""
    times = Counter(message for _, message in answers)
    ours = set(sent.chat_of)
    last_in_chat: dict[int, int] = {}
    violations = 0
    seen: set[int] = set()
    for _, message in answers:
        if message not in ours or message in seen:
            continue
        seen.add(message)
        chat, place = sent.chat_of[message], sent.order[message]
        if place < last_in_chat.get(chat, -1):
            violations += 1
        last_in_chat[chat] = max(place, last_in_chat.get(chat, -1))
    return {
        "answered": len(ours & set(times)),
        "lost": len(ours - set(times)),
        "answered_twice": sum(1 for m in ours if times[m] > 1),
        "order_violations": violations,
    }


async def duplicate_memories(database: str, base: Path) -> int:
    """Live memories beyond the first with the same text, per owner (after every replica stopped)."""
    from memory.engine import MemoryEngine

    engine = await MemoryEngine.open(base / "memory.db" if database == "sqlite" else database, create=False)
    try:
        extra = 0
        for owner in await engine.owners():
            texts = Counter(m.content for m in await engine.list(owner, limit=100_000))
            extra += sum(n - 1 for n in texts.values())
        return extra
    finally:
        await engine.close()


@dataclass
class TrialSettings:
    database: str
    replicas: int
    chats: int
    messages: int
    latency: float
    kill_at: float | None  # share of updates accepted before replica 0 is killed; None: no kill
    restart_after: float
    timeout: float  # for the replicas to become ready, and the updates to be accepted
    idle: float  # no new answer for this long: the trial ends, what is unanswered is lost


async def run_trial(s: TrialSettings, base: Path) -> dict[str, Any]:
    """One webhook trial (see the module docstring); the run's JSON object plus ``seconds``."""
    total = s.chats * s.messages
    with (
        stub_server("process", "--delay", str(s.latency), "--notes") as model_url,
        TelegramStub() as tg,
    ):
        replicas = [
            replica_config(base, i, s.database, model_url, tg.base_url, "") for i in range(s.replicas)
        ]
        backends = [f"http://127.0.0.1:{r.webhook_port}" for r in replicas]
        with RoundRobin(backends) as lb:
            for r in replicas:  # the public URL is the forwarder's: rewrite now that it listens
                config = json.loads(r.config.read_text(encoding="utf-8"))
                config["channels"]["telegram"]["webhook"]["url"] = lb.url + "/telegram"
                r.config.write_text(json.dumps(config), encoding="utf-8")
            sender = WebhookSender(tg)
            sent = Sent()
            try:
                async with aiohttp.ClientSession() as http:
                    for r in replicas:
                        r.start()
                    for r in replicas:
                        await r.wait_ready(http)
                    work = asyncio.create_task(send_chats(tg, sender, s.chats, s.messages, sent))
                    takeover = await _kill_and_restart(s, replicas[0], tg, sent, total, http)
                    await work
                    finished = await _settle(tg, set(sent.chat_of), s.idle)
                    await asyncio.sleep(1.0)  # a late second answer would show now
            finally:
                await sender.close()
                for r in replicas:
                    r.stop()
            answers = replies(tg)
    result: dict[str, Any] = {"mode": "webhook", "replicas": s.replicas, "messages": total}
    result.update(count(sent, answers))
    result["duplicate_memories"] = await duplicate_memories(s.database, base)
    result["job_runs_duplicated"] = None  # needs the per-period job claims (docs/scale-out.md)
    result["takeover_s"] = None if takeover is None else round(takeover, 2)
    result["seconds"] = round(finished - sent.started, 3)
    result["webhook_retries"] = sender.failed_attempts
    return result


async def _kill_and_restart(
    s: TrialSettings, victim: Replica, tg: TelegramStub, sent: Sent, total: int, http: aiohttp.ClientSession
) -> float | None:
    """SIGKILL ``victim`` once ``kill_at`` of the updates were accepted, restart it; the takeover time."""
    if s.kill_at is None:
        return None
    await _until(lambda: len(sent.accepted_at) >= int(total * s.kill_at), s.timeout)
    victim.kill()
    killed = time.monotonic()
    answered = {m for _, m in replies(tg)}
    pending = {m for m in sent.accepted_at if m not in answered}
    await asyncio.sleep(s.restart_after)
    victim.start()
    await victim.wait_ready(http)
    if not pending:
        return None
    with contextlib.suppress(TimeoutError):  # a message never answered is counted as lost, later
        await _until(lambda: pending <= {m for _, m in replies(tg)}, s.idle + s.restart_after)
    first = {}
    for at, message in replies(tg):
        if message in pending and at >= killed:
            first.setdefault(message, at)
    return max(first.values()) - killed if first else 0.0


async def _settle(tg: TelegramStub, ours: set[int], idle: float) -> float:
    """Until every message is answered, or no new answer came for ``idle`` seconds (then some are lost);
    when the last answer came."""
    count, last = -1, time.monotonic()
    while True:
        answered = {m for _, m in replies(tg)} & ours
        if len(answered) != count:
            count, last = len(answered), time.monotonic()
        if count >= len(ours) or time.monotonic() - last > idle:
            return last
        await asyncio.sleep(0.05)


async def _until(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done within {timeout:.0f} s")
        await asyncio.sleep(0.05)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="postgresql://USER@HOST/DB, or sqlite (1 replica)")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--messages", type=int, default=12, help="messages per chat")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model reply")
    parser.add_argument("--kill-at", type=float, default=0.4, help="share accepted before the kill")
    parser.add_argument("--no-kill", action="store_true", help="no replica is killed")
    parser.add_argument("--restart-after", type=float, default=3.0, help="seconds the killed one stays down")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the sending to finish")
    parser.add_argument("--idle", type=float, default=30.0, help="no answer for this long ends a trial")
    parser.add_argument("--no-throughput", action="store_true", help="skip the throughput runs")
    parser.add_argument("--workdir", help="keep the databases and the replicas' logs here")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.chats < 1 or args.messages < 1 or not 0 < args.kill_at < 1:
        parser.error("--replicas, --chats and --messages must be at least 1, --kill-at between 0 and 1")
    return args


async def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = TrialSettings(
        args.database,
        args.replicas,
        args.chats,
        args.messages,
        args.latency,
        None if args.no_kill else args.kill_at,
        args.restart_after,
        args.timeout,
        args.idle,
    )
    report: dict[str, Any] = {"store": "sqlite" if args.database == "sqlite" else "postgresql", "runs": []}
    with contextlib.ExitStack() as stack:
        tmp = args.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-replicas-"))
        report["runs"].append(await run_trial(settings, Path(tmp) / "webhook"))
        report["throughput_one"] = report["throughput"] = None
        if not args.no_throughput:
            plain = dict(vars(settings), latency=0.0, kill_at=None)
            one = await run_trial(TrialSettings(**{**plain, "replicas": 1}), Path(tmp) / "one")
            report["throughput_one"] = round(one["messages"] / one["seconds"], 1)
            if args.database != "sqlite":
                two = await run_trial(TrialSettings(**{**plain, "replicas": 2}), Path(tmp) / "two")
                report["throughput"] = round(two["messages"] / two["seconds"], 1)
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = database_problem(args.database, args.replicas)
    if problem:
        print(f"bench.replicas: {problem}", file=sys.stderr)
        return 2
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    report = asyncio.run(run(args))
    if args.json:
        emit_json(report)
    else:
        for r in report["runs"]:
            print(
                f"{r['mode']}: {r['replicas']} replica(s), {r['messages']} messages: "
                f"answered {r['answered']}, "
                f"lost {r['lost']}, answered twice {r['answered_twice']}, order violations "
                f"{r['order_violations']}, duplicate memories {r['duplicate_memories']}, takeover "
                f"{r['takeover_s']} s ({r['seconds']} s)"
            )
        print(
            f"throughput: 1 replica {report['throughput_one']} msg/s, 2 replicas {report['throughput']} msg/s"
        )
    failed = any(r["lost"] or r["answered_twice"] or r["order_violations"] for r in report["runs"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
