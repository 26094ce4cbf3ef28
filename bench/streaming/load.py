"""The load of ``bench.streaming``: a real ``tierclaw gateway`` process serving Telegram (private chats and
groups) and Feishu (HTTP callback) from the local servers in this process, its model the stand-in in a
child process (``bench/stub_process.py``: first token after 0.3 s, 40 tokens a second, ~300-token
Markdown replies). ``Platforms`` holds the servers and the watchers; ``Gateway`` one gateway process;
``converse`` runs one surface's chats at once, each chat's messages one after another (the next when its
reply is whole), and returns every ``Reply``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.replicas.cpu import process_cpu
from bench.streaming.reply_text import reply_for
from bench.streaming.watch import FeishuWatch, Reply, TelegramWatch, incoming_of, telegram_visible
from bench.stub_process import REPO, child_env
from localservers.feishu_server import TOKEN_PATH, FeishuStub, message_event, post_callback
from localservers.http import free_port
from localservers.telegram_server import TelegramStub

FEISHU_APP = "cli_bench_streaming"
ENCRYPT_KEY = "bench-encrypt-key"
TOKEN = "bench-verification-token"
SURFACES = ("telegram_private", "telegram_group", "feishu")
REPLY_TIMEOUT_S = 120.0


@dataclass
class Model:
    """The stand-in model's pace, and where it answers."""

    url: str
    first_token_s: float
    tokens_per_second: float
    reply_tokens: int


class Platforms:
    """The local Telegram and Feishu servers, and what each chat saw of its replies."""

    def __init__(self) -> None:
        self.tg = TelegramStub().start()
        self.feishu = FeishuStub().start()
        self.telegram = TelegramWatch(self.tg)
        self.lark = FeishuWatch(self.feishu)
        self._watching = [asyncio.create_task(w.run()) for w in (self.telegram, self.lark)]

    def calls(self) -> int:
        """Calls made to the platforms so far, long polls and token fetches left out: what each reply's
        sends, frames, typing signs and card operations cost in HTTP requests."""
        telegram = sum(call.method != "getUpdates" for call in self.tg.requests())
        feishu = sum(r.path != TOKEN_PATH for r in list(self.feishu.requests))
        return telegram + feishu

    def rate_limited(self) -> dict[str, int]:
        """429s answered so far: Telegram's (sends, edits, drafts) and Feishu's (CardKit)."""
        return {"telegram": self.tg.writes.rate_limited, "feishu": self.feishu.cardkit.rate_limited}

    async def close(self) -> None:
        for task in self._watching:
            task.cancel()
        self.tg.stop()
        self.feishu.stop()


class Gateway:
    """``tierclaw gateway`` in a child process over ``workdir`` (its database, log and config)."""

    def __init__(self, platforms: Platforms, model: Model, workdir: Path, *, stream: bool = True) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / "gateway.log"
        self.callback_port = free_port()
        self.config = workdir / "config.json"
        self.config.write_text(json.dumps(self._config(platforms, model, stream)), encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None

    def _config(self, platforms: Platforms, model: Model, stream: bool) -> dict[str, Any]:
        return {
            "provider": {"apiKey": "sk-bench-0000", "baseUrl": model.url, "maxRetries": 1,
                         "timeoutSeconds": 60},
            # Streamed replies wait on the model, not the CPU: every chat of the trial is answered at once.
            "agent": {"model": "bench-model", "workspace": str(self.workdir / "ws"), "stream": stream,
                      "maxConcurrentChats": 200},
            "memory": {"dbPath": str(self.workdir / "memory.db"), "embedding": {"provider": "none"},
                       "extraction": {"quietGap": "1h"}},
            "channels": {
                "telegram": {"enabled": True, "token": platforms.tg.token, "baseUrl": platforms.tg.base_url,
                             "allowFrom": ["*"], "groupPolicy": "open"},
                "feishu": {"enabled": True, "appId": FEISHU_APP, "appSecret": "bench", "allowFrom": ["*"],
                           "mode": "callback", "domain": platforms.feishu.domain, "verificationToken": TOKEN,
                           "encryptKey": ENCRYPT_KEY,
                           "callback": {"listen": "127.0.0.1", "port": self.callback_port}},
            },
            "timezone": "UTC",
        }  # fmt: skip

    async def start(self, platforms: Platforms) -> None:
        """Start it; return once it polls Telegram and listens for Feishu's events."""
        polls = len(platforms.tg.requests("getUpdates"))
        with self.log.open("a", encoding="utf-8") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(self.config)],
                cwd=REPO,
                env={**child_env(), "HOME": str(self.workdir)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while len(platforms.tg.requests("getUpdates")) <= polls or "ready:" not in self.log_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not start; its log:\n{self.log_text()[-2000:]}")
            await asyncio.sleep(0.05)

    def cpu(self) -> float:
        """CPU seconds the process used so far (0 when it is gone)."""
        return (process_cpu(self.proc.pid) if self.proc is not None else None) or 0.0

    def errors(self, since: int = 0) -> int:
        """ERROR lines and tracebacks in its log after character ``since``."""
        text = self.log_text()[since:]
        return sum(" ERROR " in line or line.startswith("Traceback") for line in text.splitlines())

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def telegram_message(platforms: Platforms, surface: str, chat: int, text: str, tokens: int) -> Reply:
    """Send ``text`` to the gateway from chat ``chat`` (a private chat, or a group as user ``chat``)."""
    tg = platforms.tg
    sender = tg.user(chat)
    group = tg.group(-chat) if surface == "telegram_group" else None
    expected = telegram_visible(reply_for(text, tokens))
    at = time.monotonic()
    incoming = tg.push(tg.message(text, sender=sender, chat=group))
    reply = Reply(surface, str(-chat if group else chat), str(incoming), expected, at)
    platforms.telegram.expect(reply)
    return reply


async def feishu_message(platforms: Platforms, gateway: Gateway, chat: int, text: str, tokens: int) -> Reply:
    """Post ``text`` as a message event from person ``chat`` in their own chat with the bot."""
    event = message_event(
        text, sender=f"ou_bench_{chat}", chat_id=f"oc_bench_{chat}", token=TOKEN, app_id=FEISHU_APP
    )
    reply = Reply(
        "feishu", f"oc_bench_{chat}", incoming_of(event), reply_for(text, tokens).strip(), time.monotonic()
    )
    platforms.lark.expect(reply)
    url = f"http://127.0.0.1:{gateway.callback_port}/feishu/events"
    status, _ = await post_callback(url, event, encrypt_key=ENCRYPT_KEY)
    if status != 200:
        raise RuntimeError(f"the gateway refused a Feishu event ({status})")
    return reply


async def converse(
    platforms: Platforms, gateway: Gateway, surface: str, chats: range, rounds: int, tokens: int
) -> list[Reply]:
    """``len(chats)`` chats at once, ``rounds`` messages each; every ``Reply`` (whole or not)."""

    async def chat(n: int) -> list[Reply]:
        replies = []
        for r in range(rounds):
            text = (
                f"Round {r}: what is the plan for trip {n}?" if n % 5 else f"第{r}轮：{n}号行程的计划是什么？"
            )
            if surface == "feishu":
                reply = await feishu_message(platforms, gateway, n, text, tokens)
            else:
                reply = telegram_message(platforms, surface, n, text, tokens)
            replies.append(reply)
            try:
                await asyncio.wait_for(reply.done.wait(), REPLY_TIMEOUT_S)
            except TimeoutError:
                break  # counted as an error of the surface
        return replies

    done = await asyncio.gather(*(chat(n) for n in chats))
    return [reply for replies in done for reply in replies]
