"""What the reminder delivery tests share: a config for the real gateway on the local Telegram or Feishu
server (offline model unless a model URL is given), a reminder row due at a chosen moment, and waiting
on a reminder's state."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gateway.config import Config, load_config
from memory.clock import to_db_fine, utcnow
from memory.engine import MemoryEngine
from memory.store.reminders import NewReminder, ReminderRow


def config(tmp_path: Path, memory_url: str, channels: dict[str, Any], **extra: Any) -> Config:
    raw: dict[str, Any] = {
        "provider": {"type": "offline"},
        "agent": {"workspace": str(tmp_path / "ws"), "timezone": "Europe/London"},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": memory_url,
            "embedding": {"provider": "none"},
            "extraction": {"quietGap": "1h"},
        },
        "channels": channels,
        "timezone": "UTC",
        **extra,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


def telegram(tg: Any) -> dict[str, Any]:
    section = {
        "enabled": True,
        "token": tg.token,
        "allowFrom": ["*"],
        "baseUrl": tg.base_url,
        "timeoutSeconds": 30,
    }
    return {"telegram": section}


def feishu(stub: Any) -> dict[str, Any]:
    app_id = f"cli_{uuid.uuid4().hex[:12]}"  # lark caches tokens per app id
    section = {
        "enabled": True,
        "appId": app_id,
        "appSecret": "s3cret-x",
        "allowFrom": ["*"],
        "mode": "websocket",
    }
    return {"feishu": {**section, "domain": stub.domain, "timeoutSeconds": 30}}


def due_row(
    owner: str, channel: str, chat_id: str, text: str, due: datetime, repeat: str = "", zone: str = "UTC"
) -> NewReminder:
    """A reminder due at ``due`` (UTC), its local time in ``zone``."""
    from zoneinfo import ZoneInfo

    local = due.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")
    return NewReminder(owner, channel, chat_id, text, text, "en", zone, local, repeat, to_db_fine(due))


async def add(engine: MemoryEngine, row: NewReminder) -> int:
    made = await engine.store.reminders.add(row, to_db_fine(utcnow()), 10_000)
    assert made is not None
    return made


async def until_status(
    engine: MemoryEngine, owner: str, reminder_id: int, status: str, timeout: float = 30.0
) -> ReminderRow:
    deadline = time.monotonic() + timeout
    while True:
        row = await engine.store.reminders.get(owner, reminder_id)
        if row is not None and row.status == status and row.claimed_by is None:
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"reminder {reminder_id} is {row}, not {status}")
        await asyncio.sleep(0.05)


def ago(seconds: float) -> datetime:
    return utcnow() - timedelta(seconds=seconds)
