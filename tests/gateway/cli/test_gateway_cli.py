"""``tierclaw gateway`` as a user runs it: a channel that cannot start is one line on stderr, no traceback,
no secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.cli import main
from localservers.telegram_server import TelegramStub, free_port, unauthorized


def _config(tmp_path: Path, telegram: dict) -> Path:
    path = tmp_path / "config.json"
    raw = {
        "memory": {"dbPath": str(tmp_path / "memory.db")},
        "agent": {"workspace": str(tmp_path / "ws")},
        "channels": {"telegram": {"enabled": True, "allowFrom": ["42"], **telegram}},
    }
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_a_rejected_token_is_one_line_without_the_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with TelegramStub() as tg:
        tg.fail("getMe", unauthorized())
        path = _config(tmp_path, {"token": tg.token, "baseUrl": tg.base_url})
        assert main(["gateway", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert "rejected the token" in err and "channels.telegram.token" in err
    assert "Traceback" not in err
    assert tg.token not in err and tg.token.split(":")[1] not in err


def test_an_unreachable_bot_api_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    dead = f"http://127.0.0.1:{free_port()}/bot"  # nothing listens there
    path = _config(tmp_path, {"token": "123:secret-token-value", "baseUrl": dead, "timeoutSeconds": 2})
    assert main(["gateway", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert "could not reach the Bot API" in err and "Traceback" not in err
    assert "secret-token-value" not in err
