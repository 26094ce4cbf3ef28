"""``python -m localservers …``: a person can start each local server by hand and point tierclaw at it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

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
