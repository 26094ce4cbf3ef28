"""The exchange is written once, after the model (memory/exchange.py; issue 38, item 5): until then the
unanswered inbox row is the message's only record. A gateway process killed (SIGKILL) while the model is
answering leaves nothing of the exchange written; restarted, it answers the message once and keeps the
exchange once — on both stores."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest

from gateway.inbox import DurableInbox
from localservers.openai_server import OpenAIStub, StubReply
from localservers.telegram_server import TelegramStub
from memory.engine import MemoryEngine
from tests.support.gateway_process import start_gateway, wait_until
from tests.support.waiting import PROCESS_CEILING

CHAT = 500


def _config(tmp_path: Path, tg: TelegramStub, llm: OpenAIStub, database_url: str) -> Path:
    config = {
        "provider": {
            "apiKey": "sk-test-0000",
            "baseUrl": llm.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 120,
        },
        "agent": {"model": "m", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": database_url,
            "embedding": {"provider": "none"},
            "extraction": {"quietGap": "1h"},  # the buffered turns stay in the buffer for the checks
        },
        "channels": {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["*"]}
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def _kept(target: str | Path) -> tuple[int, list[tuple[str, str]], int, int]:
    """(unanswered messages, the chat's session, kept turns, buffered turns) in the store."""
    engine = await MemoryEngine.open(target)
    try:
        store = engine.store
        unanswered = len(await DurableInbox(store).unanswered())
        session = list(reversed(await store.sessions.recent(f"telegram:{CHAT}", 1, 10)))
        return unanswered, session, await store.turns.count(None), await store.buffer.count()
    finally:
        await engine.close()


@pytest.mark.both_stores
async def test_killed_while_the_model_answers_nothing_is_half_written_and_the_restart_answers_once(
    tmp_path: Path, memory_url: str
) -> None:
    asked = threading.Event()
    slow = {"on": True}

    def model(body: dict) -> StubReply | None:
        if body.get("response_format", {}).get("type") == "json_object":
            return StubReply(content='{"facts": [], "summary": ""}')
        asked.set()
        return StubReply(content="Lisbon sounds lovely.", delay=120.0 if slow["on"] else 0.0)

    target: str | Path = memory_url or tmp_path / "memory.db"
    with TelegramStub() as tg, OpenAIStub(responder=model) as llm:
        path = _config(tmp_path, tg, llm, memory_url)
        log = tmp_path / "gateway.log"
        proc = start_gateway(path, tmp_path, log)
        try:
            await wait_until(lambda: bool(tg.requests("getUpdates")), proc, "the first poll")
            tg.push(tg.message("I moved to Lisbon in May", sender=tg.user(CHAT)))
            await wait_until(asked.is_set, proc, "the model being asked")
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert await _kept(target) == (1, [], 0, 0)  # the inbox row alone: nothing of the exchange

        slow["on"] = False
        proc = start_gateway(path, tmp_path, log)
        try:
            await wait_until(lambda: len(tg.sent()) >= 1, proc, "the reply")
        finally:
            proc.terminate()
            proc.wait(PROCESS_CEILING)  # a ceiling: a stop drains, then exits
        assert [call.params.get("text") for call in tg.sent()] == ["Lisbon sounds lovely."]
    unanswered, session, turns, buffered = await _kept(target)
    assert (unanswered, turns, buffered) == (0, 2, 2)
    assert session == [("user", "I moved to Lisbon in May"), ("assistant", "Lisbon sounds lovely.")]
