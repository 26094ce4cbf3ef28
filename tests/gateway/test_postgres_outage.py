"""The PostgreSQL server going away while a real gateway runs (issue 28 item 6): messages keep arriving
through the local Telegram server while the server is stopped for a few seconds; none is lost (what could
not be stored was not confirmed, so Telegram delivers it again) and none is answered twice. The pool
reconnects without a restart. (The issue's trial, 300 messages with 10 s down:
``outage_trial(path, cluster, chats=10, per_chat=30, down_seconds=10)``.)"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from localservers import postgres_cluster as throwaway_pg
from localservers.openai_server import OpenAIStub, StubReply
from localservers.telegram_server import TelegramStub
from tests.support.gateway_process import start_gateway, wait_until
from tests.support.waiting import PROCESS_CEILING

# The outage was felt while messages came: an update not stored (the poller met a dead connection), or a
# worker's statement that failed (a claim, a reply's step — while the intake waited for the pool to
# reconnect instead): whichever statement met the server going away says so in the gateway's log.
OUTAGE_SIGNS = ("not stored", "AdminShutdown", "PoolTimeout", "OperationalError")


@pytest.fixture
def own_cluster() -> Iterator[throwaway_pg.Cluster]:
    """A PostgreSQL server of this test's own (it is stopped mid-test: never the session's shared one)."""
    binaries = throwaway_pg.server_binaries()
    if binaries is None:
        if throwaway_pg.required():
            pytest.fail(throwaway_pg.INSTALL_HINT + ", and REQUIRE_POSTGRES_TESTS=1 is set")
        pytest.skip(throwaway_pg.INSTALL_HINT)
    cluster = throwaway_pg.start_cluster(binaries)
    try:
        throwaway_pg.admin_execute(cluster, "CREATE DATABASE tierclaw_outage")
        yield cluster
    finally:
        cluster.stop()


def _config(tmp_path: Path, url: str, tg: TelegramStub, llm: OpenAIStub) -> Path:
    config = {
        "provider": {
            "apiKey": "sk-test-0000",
            "baseUrl": llm.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 30,
        },
        "agent": {"model": "m", "workspace": str(tmp_path / "ws"), "maxConcurrentChats": 4},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": url,
            "embedding": {"provider": "none"},
        },
        "channels": {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["*"]}
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def outage_trial(
    tmp_path: Path,
    cluster: throwaway_pg.Cluster,
    chats: int,
    per_chat: int,
    down_seconds: float,
    model_delay: float = 0.05,
    down_until_felt: bool = False,
) -> tuple[int, int, int]:
    """Send ``chats × per_chat`` messages spread over the outage, the server stopped for ``down_seconds``
    after the first third, the model taking ``model_delay`` per reply; returns (lost, answered twice,
    answered with the short failure reply: they were being answered when the server went away).

    With ``down_until_felt`` the server stays down, and a message a second keeps arriving, until the
    gateway's log shows it met the outage (``OUTAGE_SIGNS``): on a slow machine the gateway may not touch
    the database within ``down_seconds``, and the test must not depend on it being quick."""
    log_path = tmp_path / "gateway.log"

    def felt() -> bool:
        if not down_until_felt or not log_path.exists():
            return True
        log = log_path.read_text(encoding="utf-8", errors="replace")
        return any(sign in log for sign in OUTAGE_SIGNS)

    def model(body: dict) -> StubReply | None:
        if body.get("response_format", {}).get("type") == "json_object":
            return StubReply(content='{"facts": [], "summary": ""}')
        return StubReply(content="ok", delay=model_delay)

    url = cluster.url_for("tierclaw_outage")
    with TelegramStub() as tg, OpenAIStub(responder=model) as llm:
        proc = start_gateway(_config(tmp_path, url, tg, llm), tmp_path, log_path)

        def replied() -> list[tuple[str, str, str]]:
            return [
                (
                    c.params.get("chat_id", ""),
                    str((c.json("reply_parameters") or {}).get("message_id", "")),
                    c.params.get("text", ""),
                )
                for c in tg.sent()
            ]

        try:
            await wait_until(lambda: bool(tg.requests("getUpdates")), proc, "the first poll")
            sent: list[tuple[str, str]] = []
            total = chats * per_chat
            pace = (down_seconds * 2) / total  # the messages arrive over twice the outage
            down_at, up_at = total // 3, None
            for n in range(total):
                if n == down_at:
                    await asyncio.to_thread(cluster.pause)
                    up_at = time.monotonic() + down_seconds
                if up_at is not None and time.monotonic() >= up_at and felt():
                    await asyncio.to_thread(cluster.resume)
                    up_at = None
                chat = 500 + n % chats
                sent.append((str(chat), str(tg.push(tg.message(f"message {n}", sender=tg.user(chat))))))
                await asyncio.sleep(pace)
            if up_at is not None:
                await asyncio.sleep(max(0.0, up_at - time.monotonic()))
                ceiling = time.monotonic() + 120
                while not felt():
                    if time.monotonic() > ceiling or proc.poll() is not None:
                        raise AssertionError("the gateway never met the stopped server")
                    chat, n = 500 + len(sent) % chats, len(sent)
                    sent.append((str(chat), str(tg.push(tg.message(f"message {n}", sender=tg.user(chat))))))
                    await asyncio.sleep(1.0)
                await asyncio.to_thread(cluster.resume)
            keys = set(sent)
            await wait_until(
                lambda: keys <= {(c, m) for c, m, _ in replied()}, proc, "every message answered", 300
            )
        finally:
            proc.terminate()
            proc.wait(PROCESS_CEILING)  # a ceiling: a stop drains, then exits
    answers = [(c, m) for c, m, _ in replied()]
    failures = sum(1 for _, _, text in replied() if text != "ok")
    return len(set(sent) - set(answers)), len(answers) - len(set(answers)), failures


async def test_postgresql_stopped_mid_run_loses_no_message_and_answers_each_once(
    tmp_path: Path, own_cluster: throwaway_pg.Cluster
) -> None:
    lost, twice, _ = await outage_trial(
        tmp_path, own_cluster, chats=3, per_chat=10, down_seconds=3, down_until_felt=True
    )
    assert (lost, twice) == (0, 0)
    log = (tmp_path / "gateway.log").read_text(encoding="utf-8")
    assert any(sign in log for sign in OUTAGE_SIGNS), log
    assert "Traceback" not in log and "psycopg.pool" not in log  # one line of ours, not one per reconnect
