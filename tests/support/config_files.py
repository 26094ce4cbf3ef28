"""What the configuration tests share: writing a config file, the message ``load_config`` refuses it with,
and two secrets to look for in what is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.config import (
    ConfigError,
    load_config,
)

LONG_SECRET = "sk-live-0123456789abcdefSECRET"  # long enough to be masked as "…CRET"
OTHER_SECRET = "tg-bot-9876543210zyxwvuHIDDEN"


def write(tmp_path: Path, data: Any, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def error_of(path: Path | None, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, env={} if env is None else env)
    return str(info.value)
