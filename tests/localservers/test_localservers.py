"""``python -m localservers …``: a person can start each local server by hand and point tierclaw at it."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.waiting import PROCESS_CEILING


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
    return proc.wait(timeout=PROCESS_CEILING)  # a ceiling: under load a server takes seconds to stop


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
        with urllib.request.urlopen(request, timeout=PROCESS_CEILING) as response:
            assert response.status == 200
            assert check(json.loads(response.read()))
    finally:
        assert _stop(proc) == 0


class Lines:
    """A process's output read by a thread, so a test waits for a line with a ceiling instead of forever."""

    def __init__(self, stream: Any) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def until(self, marker: str, timeout: float = PROCESS_CEILING) -> str:
        """The first line (from here on) that holds ``marker``."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if marker in line:
                return line
        raise AssertionError(f"{marker!r} never came: {''.join(self.seen)}")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERCLAW_", "OPENAI_"))}
    env["HOME"] = str(home)
    return env


def test_the_readme_s_two_commands_run_a_gateway_with_memory_apart_from_yours(tmp_path: Path) -> None:
    """README.md, "Trying the gateway without accounts", on a fresh HOME: the Feishu stand-in writes the
    config, the gateway runs on it with the offline model in its own data directory, a typed line and a
    POSTed one are answered — and what was told is remembered, in the trial's database only."""
    env = _env(tmp_path)
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
        feishu = start("-m", "localservers", "feishu", "--write-config", config)
        assert feishu.stdout is not None and feishu.stdin is not None
        url = feishu.stdout.readline().strip()  # its URL: the config is written by then
        gateway = start("-m", "gateway.cli", "gateway", "--config", config)
        assert gateway.stdout is not None
        ready = Lines(gateway.stdout).until("[gateway] ready:")
        assert "feishu cli_local (websocket)" in ready and "telegram" not in ready
        assert "model offline" in ready and "memory sqlite ~/tierclaw-local-data/memory.db" in ready
        feishu.stdin.write("My dog is called Biscuit\n")
        feishu.stdin.flush()
        heard = Lines(feishu.stdout)
        said = heard.until("bot>").strip()
        assert said == "bot> [offline model] I'll remember: My dog is called Biscuit"
        request = urllib.request.Request(
            url + "/local/say", data=b'{"text": "what is my dog called?"}', method="POST"
        )
        with urllib.request.urlopen(request, timeout=PROCESS_CEILING) as response:
            assert json.loads(response.read())["code"] == 0
        assert heard.until("bot>") and "My dog is called Biscuit" in heard.until("Biscuit")
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=PROCESS_CEILING)
    assert gateway.returncode == 0
    assert (tmp_path / "tierclaw-local-data" / "memory.db").exists()
    assert not (tmp_path / ".tierclaw" / "data" / "memory.db").exists()  # the person's own memory untouched


def test_reusing_the_file_for_the_other_platform_enables_that_one_only(tmp_path: Path) -> None:
    from localservers.__main__ import merge_config

    path = tmp_path / "tierclaw-local.json"
    merge_config(path, "feishu", {"channels": {"feishu": {"enabled": True, "domain": "http://127.0.0.1:1"}}})
    merge_config(
        path, "telegram", {"channels": {"telegram": {"enabled": True, "baseUrl": "http://127.0.0.1:2/bot"}}}
    )
    raw = json.loads(path.read_text())
    assert raw["channels"]["telegram"]["enabled"] is True and raw["channels"]["feishu"]["enabled"] is False
    assert raw["provider"] == {"type": "offline"}
    assert raw["memory"]["dbPath"] == str(tmp_path / "tierclaw-local-data" / "memory.db")
    assert raw["agent"]["workspace"] == str(tmp_path / "tierclaw-local-data" / "workspace")


def test_the_model_stand_in_answers_and_memory_stays_with_the_offline_rules(tmp_path: Path) -> None:
    from localservers.__main__ import merge_config

    path = tmp_path / "trial.json"
    merge_config(path, "feishu", {"channels": {"feishu": {"enabled": True}}})
    merge_config(
        path,
        "openai",
        {"provider": {"type": "openai", "apiKey": "local", "baseUrl": "http://127.0.0.1:3/v1"}},
    )
    raw = json.loads(path.read_text())
    assert raw["provider"]["type"] == "openai" and raw["memory"]["provider"] == {"type": "offline"}
    # a platform server started after it keeps the model the file names
    merge_config(path, "feishu", {"channels": {"feishu": {"enabled": True}}})
    assert json.loads(path.read_text())["provider"]["type"] == "openai"


def test_a_database_the_file_names_is_kept(tmp_path: Path) -> None:
    from localservers.__main__ import merge_config

    path = tmp_path / "trial.json"
    path.write_text(json.dumps({"memory": {"dbPath": "/elsewhere/m.db"}}))
    merge_config(path, "telegram", {"channels": {"telegram": {"enabled": True}}})
    assert json.loads(path.read_text())["memory"]["dbPath"] == "/elsewhere/m.db"


def test_help_is_plain_text() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "localservers", "--help"],
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
        check=True,
    )
    assert "``" not in done.stdout and ":mod:" not in done.stdout  # no reStructuredText markup (issue 37)
    assert "telegram" in done.stdout and "--write-config" in done.stdout
    assert "python -m localservers feishu --write-config" in done.stdout  # an example to copy
