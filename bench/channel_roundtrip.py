"""Channel round trip: messages/s and latency from the platform server in to the platform server out.

    python -m bench.channel_roundtrip [--json] [--chats 10] [--messages 20] [--serial 40]

What runs: the real ``tierclaw gateway`` command in a child process, configured exactly as a user would
(``channels.telegram.baseUrl`` / ``channels.feishu.domain`` pointed at local servers), with the local
OpenAI-compatible model at zero latency (in its own process, as in ``bench.gateway_throughput``). This
process plays the platform: ``localservers/telegram_server.py`` (Bot API, long polling) and
``localservers/feishu_server.py`` (open platform; events posted encrypted and signed to the HTTP callback).

Per mode, after a few warm-up messages:
- **loaded**: ``--chats`` × ``--messages`` messages are put in at once (chats interleaved);
  ``msgs_per_s`` = messages / (last reply out − first message in); ``p95_ms_loaded`` is the latency
  of those messages, queueing included;
- **serial**: ``--serial`` messages one at a time; ``p95_ms`` / ``p50_ms`` are the latency of a message
  that meets an idle gateway — what one person feels.

Latency = time from the stub making the message available (Telegram: the update queued for getUpdates;
Feishu: the event POST starting) to the stub receiving the reply (sendMessage / the Reply API call). For
Telegram it includes the "typing" action sent before each reply. The JSON on the last line holds
``telegram_polling_msgs_per_s``, ``telegram_polling_p95_ms``, ``callback_msgs_per_s`` and
``callback_p95_ms`` (the issue's keys) plus the ``…_p50_ms``, ``…_p95_ms_loaded`` and
``…_messages`` details.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.report import emit_json, percentile, table
from bench.stub_process import REPO, child_env, stub_server
from localservers.feishu_server import FeishuStub, message_event, signed_body
from localservers.telegram_server import TelegramStub

DEFAULT_CHATS = 10
DEFAULT_MESSAGES = 20
DEFAULT_SERIAL = 40
WARMUP = 3
READY_TIMEOUT_S = 300.0  # a ceiling: under load (a suite beside another) importing took 43 s
REPLY_TIMEOUT_S = 300.0
FEISHU_APP_ID = "cli_bench"
FEISHU_ENCRYPT_KEY = "bench-encrypt-key"
FEISHU_VERIFICATION_TOKEN = "bench-verification-token"
TEXTS = (
    "hello there, how are you today?",
    "What did I tell you about the Orion project?",
    "Can you write me a short poem about tea?",
    "上次我们聊的方案是什么？",
    "thanks",
)


@dataclass(slots=True)
class ModeResult:
    """What one mode measured."""

    messages: int
    msgs_per_s: float
    p95_ms_loaded: float
    p50_ms: float
    p95_ms: float


# --------------------------------------------------------------------------- the gateway process


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def gateway_process(config: dict[str, Any], workdir: Path) -> Iterator[subprocess.Popen]:
    """``tierclaw gateway --config <file>`` in a child process; stopped with SIGTERM at the end."""
    path = workdir / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    log = (workdir / "gateway.log").open("w", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(path)],
        cwd=REPO,
        env={**child_env(), "HOME": str(workdir)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def base_config(model_url: str, workdir: Path) -> dict[str, Any]:
    return {
        "provider": {"apiKey": "sk-bench-0000", "baseUrl": model_url, "maxRetries": 0, "timeoutSeconds": 10},
        "agent": {"model": "bench-model", "workspace": str(workdir / "ws"), "maxConcurrentChats": 8},
        "memory": {"dbPath": str(workdir / "memory.db")},
        "timezone": "UTC",
    }


async def _wait(predicate: Callable[[], bool], timeout: float, what: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise RuntimeError(f"the gateway exited with {proc.returncode} while waiting for {what}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.002)


async def measure(
    put_in: Callable[[int, int], Awaitable[str]],
    replied_at: Callable[[], dict[str, float]],
    proc: subprocess.Popen,
    chats: int,
    messages: int,
    serial: int,
) -> ModeResult:
    """Drive one mode: ``put_in(chat, n)`` puts a message in and returns its id; ``replied_at()`` maps
    message ids to the monotonic time their reply reached the platform server."""
    sent_at: dict[str, float] = {}

    async def one(chat: int, n: int) -> str:
        sent_at[key := await put_in(chat, n)] = time.monotonic()
        return key

    async def wait_replies(keys: list[str]) -> dict[str, float]:
        await _wait(lambda: all(k in replied_at() for k in keys), REPLY_TIMEOUT_S, "replies", proc)
        return replied_at()

    for n in range(WARMUP):
        await wait_replies([await one(0, n)])

    keys = []
    first_in = time.monotonic()
    for n in range(messages):
        for chat in range(chats):
            keys.append(await one(chat, WARMUP + n))
    out = await wait_replies(keys)
    loaded = [(out[k] - sent_at[k]) * 1000.0 for k in keys]
    elapsed = max(out[k] for k in keys) - first_in

    alone = []
    for n in range(serial):
        key = await one(chats + 1, n)
        out = await wait_replies([key])
        alone.append((out[key] - sent_at[key]) * 1000.0)
    return ModeResult(
        messages=len(keys),
        msgs_per_s=len(keys) / elapsed if elapsed > 0 else 0.0,
        p95_ms_loaded=percentile(loaded, 95),
        p50_ms=percentile(alone, 50),
        p95_ms=percentile(alone, 95),
    )


# --------------------------------------------------------------------------- the two modes


async def telegram_polling(model_url: str, chats: int, messages: int, serial: int) -> ModeResult:
    with tempfile.TemporaryDirectory() as tmp, TelegramStub() as tg:
        config = base_config(model_url, Path(tmp))
        config["channels"] = {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["*"]}
        }
        with gateway_process(config, Path(tmp)) as proc:
            await _wait(lambda: bool(tg.requests("getUpdates")), READY_TIMEOUT_S, "getUpdates", proc)

            async def put_in(chat: int, n: int) -> str:
                user = tg.user(1000 + chat)
                return str(tg.push(tg.message(TEXTS[n % len(TEXTS)], sender=user)))

            def replied_at() -> dict[str, float]:
                out: dict[str, float] = {}
                for call in tg.sent():
                    target = call.json("reply_parameters") or {}
                    out.setdefault(str(target.get("message_id", "")), call.at)
                return out

            return await measure(put_in, replied_at, proc, chats, messages, serial)


async def feishu_callback(model_url: str, chats: int, messages: int, serial: int) -> ModeResult:
    port = _free_port()
    with (
        tempfile.TemporaryDirectory() as tmp,
        FeishuStub() as feishu,
    ):
        config = base_config(model_url, Path(tmp))
        config["channels"] = {
            "feishu": {
                "enabled": True,
                "appId": FEISHU_APP_ID,
                "appSecret": "bench-app-secret",
                "verificationToken": FEISHU_VERIFICATION_TOKEN,
                "encryptKey": FEISHU_ENCRYPT_KEY,
                "mode": "callback",
                "domain": feishu.domain,
                "allowFrom": ["*"],
                "callback": {"port": port},
            }
        }
        url = f"http://127.0.0.1:{port}/feishu/events"
        with gateway_process(config, Path(tmp)) as proc:
            async with aiohttp.ClientSession() as session:

                async def listening() -> bool:
                    with contextlib.suppress(aiohttp.ClientError):
                        async with session.get(url) as resp:
                            return resp.status < 500 or resp.status == 405
                    return False

                deadline = time.monotonic() + READY_TIMEOUT_S
                while not await listening():
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the Feishu callback did not come up (see gateway.log)")
                    await asyncio.sleep(0.05)

                pending: set[asyncio.Task] = set()

                async def post(event: dict[str, Any]) -> None:
                    body, headers = signed_body(event, FEISHU_ENCRYPT_KEY)
                    async with session.post(url, data=body, headers=headers) as resp:
                        await resp.read()
                        if resp.status != 200:
                            raise RuntimeError(f"callback answered {resp.status}")

                async def put_in(chat: int, n: int) -> str:
                    event = message_event(
                        TEXTS[n % len(TEXTS)],
                        sender=f"ou_bench_{chat}",
                        chat_id=f"oc_bench_{chat}",
                        token=FEISHU_VERIFICATION_TOKEN,
                        app_id=FEISHU_APP_ID,
                    )
                    task = asyncio.create_task(post(event))  # the POST is in flight: the message is in
                    pending.add(task)
                    task.add_done_callback(pending.discard)
                    return str(event["event"]["message"]["message_id"])

                def replied_at() -> dict[str, float]:
                    return {s.target: s.at for s in list(feishu.sent) if s.kind == "reply"}

                result = await measure(put_in, replied_at, proc, chats, messages, serial)
                await asyncio.gather(*pending)
                return result


# --------------------------------------------------------------------------- main


async def run(chats: int, messages: int, serial: int, model: str) -> dict[str, Any]:
    result: dict[str, Any] = {"chats": chats, "messages_per_chat": messages, "serial_messages": serial}
    with stub_server(model) as model_url:
        for name, mode in (("telegram_polling", telegram_polling), ("feishu_callback", feishu_callback)):
            measured = await mode(model_url, chats, messages, serial)
            result[f"{name}_msgs_per_s"] = round(measured.msgs_per_s, 1)
            result[f"{name}_p95_ms"] = round(measured.p95_ms, 2)
            result[f"{name}_p50_ms"] = round(measured.p50_ms, 2)
            result[f"{name}_p95_ms_loaded"] = round(measured.p95_ms_loaded, 2)
            result[f"{name}_messages"] = measured.messages
    return result


def main(argv: list[str] | None = None) -> int:
    """Run both modes; print a table (and the JSON last line with ``--json``)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.channel_roundtrip", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--chats", type=int, default=DEFAULT_CHATS, help="chats in the loaded phase")
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES, help="messages per chat (loaded)")
    parser.add_argument("--serial", type=int, default=DEFAULT_SERIAL, help="messages one at a time")
    parser.add_argument(
        "--model-stub", choices=("process", "thread"), default="process", help="where the model stub runs"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    if min(args.chats, args.messages, args.serial) < 1:
        parser.error("--chats, --messages and --serial must be at least 1")
    result = asyncio.run(run(args.chats, args.messages, args.serial, args.model_stub))
    rows = [
        [
            mode,
            result[f"{mode}_messages"],
            result[f"{mode}_msgs_per_s"],
            result[f"{mode}_p95_ms_loaded"],
            result[f"{mode}_p50_ms"],
            result[f"{mode}_p95_ms"],
        ]
        for mode in ("telegram_polling", "feishu_callback")
    ]
    print(table(["mode", "messages", "msgs/s", "p95 ms loaded", "p50 ms alone", "p95 ms alone"], rows))
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
