"""``python -m localservers …``: a person can start each local server by hand and point tierclaw at it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest


def _run_server(kind: str) -> tuple[subprocess.Popen[str], str, str]:
    """Start the server; returns (process, base URL, the rest of what it printed before Ctrl-C hint)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "localservers", kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    rest = []
    for line in proc.stdout:
        rest.append(line)
        if line.startswith("Ctrl-C"):
            break
    return proc, url, "".join(rest)


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.terminate()
    return proc.wait(timeout=10)


@pytest.mark.parametrize(
    ("kind", "path", "check"),
    [
        ("openai", "/models", lambda body: body["data"][0]["id"] == "stub-model"),
        ("telegram", "{token}/getMe", lambda body: body["ok"] and body["result"]["is_bot"]),
        (
            "feishu",
            "/open-apis/auth/v3/tenant_access_token/internal",
            lambda body: body["tenant_access_token"],
        ),
    ],
)
def test_each_server_starts_by_hand_prints_its_config_and_answers(kind: str, path: str, check) -> None:
    proc, url, printed = _run_server(kind)
    try:
        assert url.startswith("http://127.0.0.1:")
        config = json.loads(printed.split("tierclaw config to use it:", 1)[1].rsplit("Ctrl-C", 1)[0])
        if kind == "telegram":
            token = config["channels"]["telegram"]["token"]
            assert config["channels"]["telegram"]["baseUrl"] == url
            request = urllib.request.Request(url + token + "/getMe", data=b"{}", method="POST")
            request.add_header("Content-Type", "application/json")
        elif kind == "feishu":
            feishu = config["channels"]["feishu"]
            assert feishu["domain"] == url
            credentials = {"app_id": feishu["appId"], "app_secret": feishu["appSecret"]}
            request = urllib.request.Request(url + path, data=json.dumps(credentials).encode(), method="POST")
            request.add_header("Content-Type", "application/json")
        else:
            assert config["provider"]["baseUrl"] == url
            request = urllib.request.Request(url + path)
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
            assert check(json.loads(response.read()))
    finally:
        assert _stop(proc) == 0


def _read_until(stream: Any, marker: str, seen: list[str]) -> str:
    """Lines of ``stream`` until one holds ``marker`` (that line); the process's output so far in ``seen``."""
    for line in stream:
        seen.append(line)
        if marker in line:
            return line
    raise AssertionError(f"{marker!r} never came: {''.join(seen)}")


def test_the_readme_s_three_commands_run_a_gateway_to_talk_to_by_hand(tmp_path: Path) -> None:
    """README.md, "Trying the gateway without accounts", on a fresh HOME: the model and Feishu stand-ins
    write one config, the gateway runs on it, a typed line and a POSTed one are answered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERCLAW_", "OPENAI_"))}
    env["HOME"] = str(tmp_path)
    config = str(tmp_path / "tierclaw-local.json")
    procs: list[subprocess.Popen[str]] = []

    def start(*argv: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=env, cwd=tmp_path,
        )  # fmt: skip
        procs.append(proc)
        return proc

    try:
        model = start("-m", "localservers", "openai", "--write-config", config)
        feishu = start("-m", "localservers", "feishu", "--write-config", config)
        assert model.stdout is not None and feishu.stdout is not None
        model.stdout.readline()  # its URL: the config is written by then
        url = feishu.stdout.readline().strip()
        gateway = start("-m", "gateway.cli", "gateway", "--config", config)
        assert gateway.stdout is not None and feishu.stdin is not None
        seen: list[str] = []
        ready = _read_until(gateway.stdout, "[gateway] ready:", seen)
        assert "feishu cli_local (websocket)" in ready and "memory sqlite ~/.tierclaw/data/memory.db" in ready
        feishu.stdin.write("hello there\n")
        feishu.stdin.flush()
        heard: list[str] = []
        assert _read_until(feishu.stdout, "bot>", heard).strip() == "bot> stub reply: hello there"
        request = urllib.request.Request(url + "/local/say", data=b'{"text": "by post"}', method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["code"] == 0
        assert _read_until(feishu.stdout, "bot>", heard).strip() == "bot> stub reply: by post"
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=60)
    assert gateway.returncode == 0
