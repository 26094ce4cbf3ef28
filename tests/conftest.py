"""Shared fixtures: a real MemoryEngine on a fresh SQLite file per test, and the local platform servers
(``localservers/``) started for a test and stopped after it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from localservers.feishu_server import FeishuStub
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub
from memory.engine import MemoryEngine


@pytest.fixture(autouse=True)
def _no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenAI SDK's variables fill in a missing provider key (gateway/config/env.py): a developer's own
    key must not reach the tests (nor their subprocesses)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[MemoryEngine]:
    """A MemoryEngine on tmp_path/"memory.db", closed after the test."""
    eng = await MemoryEngine.open(tmp_path / "memory.db")
    try:
        yield eng
    finally:
        await eng.close()


@pytest.fixture
def tg() -> Iterator[TelegramStub]:
    """The local Telegram Bot API server."""
    with TelegramStub() as stub:
        yield stub


@pytest.fixture
def feishu() -> Iterator[FeishuStub]:
    """The local Feishu open-api, websocket and callback server."""
    with FeishuStub() as stub:
        yield stub


@pytest.fixture
def model() -> Iterator[OpenAIStub]:
    """The local OpenAI-compatible model server (chat completions and embeddings)."""
    with OpenAIStub() as stub:
        yield stub
