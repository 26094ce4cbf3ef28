"""The commands a person types: ``tierclaw chat`` fed by a pipe, ``tierclaw status``, ``tierclaw gateway``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gateway.cli import main

SECRET = "sk-test-abcdefghijkl-9876"


def _run_chat(home: Path, text: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env.update({"HOME": str(home), **(extra_env or {})})
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "chat"],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )


def test_piped_chat_without_a_key_uses_the_offline_model_and_exits_0(tmp_path: Path) -> None:
    done = _run_chat(tmp_path, "hello there\n/remember I prefer tea over coffee\n/memory\n")
    assert done.returncode == 0, done.stderr
    assert "TIERCLAW_PROVIDER_API_KEY" in done.stderr  # says plainly how to configure a real model
    assert "[offline model]" in done.stdout
    assert "Remembered [1]: I prefer tea over coffee" in done.stdout
    assert "[1] I prefer tea over coffee" in done.stdout.split("Remembered", 1)[1]
    db = tmp_path / ".tierclaw" / "data" / "memory.db"
    assert db.exists()
    # the turn is left in the buffer for the next run (quiet gap not over), and a second run sees it
    second = _run_chat(tmp_path, "/memory\n")
    assert second.returncode == 0 and "I prefer tea over coffee" in second.stdout


def test_status_masks_secrets_and_counts_the_buffer(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"provider": {"apiKey": SECRET}, "memory": {"dbPath": str(tmp_path / "m.db")}}),
        encoding="utf-8",
    )
    assert main(["status", "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["memory"] is None  # status never creates the database
    assert not (tmp_path / "m.db").exists()
    assert report["main_provider"]["apiKey"] == "…9876"
    assert report["main_model"] == "openai:gpt-4o-mini"
    assert SECRET not in json.dumps(report)

    done = _run_chat(
        tmp_path,
        "My cat is called Miso\n",
        {"TIERCLAW_CONFIG": str(config), "TIERCLAW_PROVIDER_TYPE": "offline"},
    )
    assert done.returncode == 0, done.stderr
    assert main(["status", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "2 turns buffered" in out and "0 dead letters" in out
    assert SECRET not in out and str(config) in out


def test_gateway_without_a_channel_says_what_to_enable(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["gateway"]) == 2
    assert "channels.telegram.enabled" in capsys.readouterr().err


def test_status_shows_each_channel_mode_and_who_is_let_in(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "config.json"
    channels = {
        "telegram": {"enabled": True, "token": SECRET},
        "feishu": {"enabled": True, "appId": "cli_a", "appSecret": SECRET, "allowFrom": ["ou_a", "ou_b"]},
    }
    config.write_text(json.dumps({"channels": channels}), encoding="utf-8")
    assert main(["status", "--config", str(config), "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["channels"]["telegram"] == "enabled (polling, nobody allowed yet)"
    assert report["channels"]["feishu"] == "enabled (websocket, 2 allowed)"
    assert SECRET not in out
