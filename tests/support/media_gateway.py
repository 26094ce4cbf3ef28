"""The media tests' gateway: a config pointing the real gateway at the local Telegram (or Feishu) server
and the local OpenAI server (model, transcriber, vision), started and closed around a test."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from channels.telegram.channel import TelegramChannel
from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.config import Config, load_config
from localservers.feishu_server import FeishuStub
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub
from memory.store.attachments import AttachmentRow


def _base(tmp_path: Path, model: OpenAIStub, memory_url: str, offline: bool, tools: bool) -> dict[str, Any]:
    provider: dict[str, Any] = {"baseUrl": model.base_url, "maxRetries": 0, "timeoutSeconds": 60}
    provider["apiKey"] = "" if offline else "sk-test-0000"
    return {
        "provider": provider,
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws"), "tools": tools},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": memory_url,
            "model": "memory-model",
            "extraction": {"quietGap": "1h"},
            "embedding": {"provider": "none"},
        },
        "media": {"attempts": 2, "transcription": {"timeoutSeconds": 30}},
        "timezone": "UTC",
    }


def write_config(tmp_path: Path, raw: dict[str, Any]) -> Config:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


def telegram_config(
    tmp_path: Path,
    model: OpenAIStub,
    tg: TelegramStub,
    memory_url: str = "",
    *,
    offline: bool = False,
    tools: bool = True,
    media: dict[str, Any] | None = None,
) -> Config:
    raw = _base(tmp_path, model, memory_url, offline, tools)
    raw["media"].update(media or {})
    raw["channels"] = {
        "telegram": {
            "enabled": True,
            "token": tg.token,
            "allowFrom": ["42"],
            "baseUrl": tg.base_url,
            "timeoutSeconds": 30,
        }
    }
    return write_config(tmp_path, raw)


@asynccontextmanager
async def telegram_gateway(config: Config) -> AsyncIterator[Runtime]:
    runtime = await Runtime.open(config, enabled_channels(config))
    for channel in runtime.channels:
        assert isinstance(channel, TelegramChannel)
        channel.retry_base_seconds = 0.05
    if runtime.assistant.media is not None:
        runtime.assistant.media.service.settings.backoff = 0.05
    try:
        await runtime.start(schedule=False)
        yield runtime
    finally:
        await runtime.close()


async def attachments(runtime: Runtime, owner: str = "telegram:42") -> list[AttachmentRow]:
    """The owner's received attachments, oldest first."""
    rows = await runtime.engine.attachments.list(owner, direction="in")
    return sorted(rows, key=lambda r: r.id)


def feishu_config(
    tmp_path: Path,
    model: OpenAIStub,
    feishu: FeishuStub,
    memory_url: str = "",
    *,
    offline: bool = False,
    tools: bool = True,
) -> Config:
    """Feishu over the websocket, from ou_alice (lark caches tenant tokens per app id: a new one each)."""
    raw = _base(tmp_path, model, memory_url, offline, tools)
    raw["channels"] = {
        "feishu": {
            "enabled": True,
            "appId": f"cli_{uuid.uuid4().hex[:12]}",
            "appSecret": "app-secret-media",
            "allowFrom": ["ou_alice"],
            "domain": feishu.domain,
            "timeoutSeconds": 30,
        }
    }
    return write_config(tmp_path, raw)


@asynccontextmanager
async def feishu_gateway(config: Config) -> AsyncIterator[Runtime]:
    runtime = await Runtime.open(config, enabled_channels(config))
    if runtime.assistant.media is not None:
        runtime.assistant.media.service.settings.backoff = 0.05
    try:
        await runtime.start(schedule=False)
        yield runtime
    finally:
        await runtime.close()
