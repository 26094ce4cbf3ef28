"""``tierclaw doctor``: each check ✔ against the local servers and ✘ for each failure a person can cause,
with the fix named and nothing secret printed; exit 1 when anything failed (issue 27, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.cli.doctor import collect, render
from gateway.cli.doctor_checks import Check
from localservers.feishu_cardkit import SCOPE_MISSING
from localservers.feishu_server import FeishuStub
from localservers.openai_server import OpenAIStub, StubReply
from localservers.telegram_server import TelegramStub, unauthorized
from memory.engine import MemoryEngine
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

KEY = "sk-doctor-secret-0000"
FEISHU_SECRET = "feishu-secret-Qx81"


def write_config(tmp_path: Path, raw: dict[str, Any]) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def base_config(tmp_path: Path, model: OpenAIStub, **extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "provider": {"apiKey": KEY, "baseUrl": model.base_url, "timeoutSeconds": 60},
        "agent": {"model": "main-model"},
        "memory": {
            "dbPath": str(tmp_path / "data" / "memory.db"),
            "embedding": {"provider": "openai", "model": "emb", "baseUrl": model.base_url, "apiKey": KEY},
        },
    }
    for key, value in extra.items():
        raw[key] = {**raw.get(key, {}), **value}
    return raw


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


async def run_doctor(
    tmp_path: Path, raw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> dict[str, Check]:
    for name in [n for n in os.environ if n.startswith(("TIERCLAW_", "OPENAI_"))]:
        monkeypatch.delenv(name)
    checks = await collect(str(write_config(tmp_path, raw)))
    text = render(checks)
    assert KEY not in text and FEISHU_SECRET not in text and TelegramStub().token not in text
    return by_name(checks)


async def test_everything_working_is_all_ticks_with_where_each_value_came_from(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, feishu: FeishuStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await MemoryEngine.open(tmp_path / "data" / "memory.db")
    await engine.close()
    raw = base_config(
        tmp_path,
        model,
        channels={
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["42"]},
            "feishu": {
                "enabled": True,
                "appId": "cli_doc",
                "appSecret": FEISHU_SECRET,
                "domain": feishu.domain,
            },
        },
    )
    monkeypatch.setenv("TIERCLAW_MODEL", "env-model")
    checks = await collect(str(write_config(tmp_path, raw)))
    named = by_name(checks)
    assert [c.name for c in checks] == [
        "config", "database", "model", "memory model", "embedder", "telegram", "telegram webhook", "feishu",
        "feishu streaming cards",
    ]  # fmt: skip
    assert all(c.ok for c in checks), render(checks)
    notes = "\n".join(named["config"].notes)
    assert 'agent.model = "env-model" (env TIERCLAW_MODEL)' in notes
    assert "provider.apiKey = set (file)" in notes
    assert 'memory.embedding.provider = "openai" (file)' in notes
    assert 'provider.type = "openai" (default)' in notes
    assert "schema" in named["database"].detail and "GiB free" in named["database"].detail
    assert model.chat_requests()[-1]["model"] == "env-model" and model.chat_requests()[-1]["max_tokens"] == 1
    assert "@stub_bot" in named["telegram"].detail
    assert "tenant token issued" in named["feishu"].detail
    assert "replies stream as cards" in named["feishu streaming cards"].detail
    text = render(checks)
    assert KEY not in text and FEISHU_SECRET not in text and tg.token not in text
    assert text.endswith("everything checked is working")


async def test_an_invalid_config_is_the_only_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"provider": {"timeoutSeconds": -1}}', encoding="utf-8")
    checks = await collect(str(path))
    assert len(checks) == 1 and not checks[0].ok
    assert "timeoutSeconds" in checks[0].detail and checks[0].fix


async def test_database_readable_by_others_or_not_a_database(
    tmp_path: Path, model: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "data" / "memory.db"
    engine = await MemoryEngine.open(db)
    await engine.close()
    db.chmod(0o644)
    check = (await run_doctor(tmp_path, base_config(tmp_path, model), monkeypatch))["database"]
    assert not check.ok and "file 0644" in check.detail and check.fix.startswith("chmod 600")
    db.chmod(0o600)
    db.write_bytes(b"this is not SQLite, and it is long enough to have a header of sorts" * 20)
    check = (await run_doctor(tmp_path, base_config(tmp_path, model), monkeypatch))["database"]
    assert not check.ok and "cannot be opened" in check.detail


@pytest.mark.parametrize(
    ("reply", "detail", "fix"),
    [
        (StubReply(status=401), "API key was refused", "provider.apiKey"),
        (StubReply(status=404), "model 'main-model' not found", "agent.model"),
        (StubReply(delay=3600), "no answer from", "provider.timeoutSeconds"),
    ],
)
async def test_the_model_refusing_the_key_missing_the_model_or_silent(
    tmp_path: Path,
    model: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
    reply: StubReply,
    detail: str,
    fix: str,
) -> None:
    model.script(reply)
    raw = base_config(tmp_path, model)
    raw["provider"]["timeoutSeconds"] = 1
    check = (await run_doctor(tmp_path, raw, monkeypatch))["model"]
    assert not check.ok and detail in check.detail and fix in check.fix


async def test_an_unreachable_memory_model_and_embedder(
    tmp_path: Path, model: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    nowhere = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    raw = base_config(tmp_path, model)
    raw["memory"]["provider"] = {"apiKey": KEY, "baseUrl": nowhere}
    raw["memory"]["model"] = "small"
    raw["memory"]["embedding"]["baseUrl"] = nowhere
    named = await run_doctor(tmp_path, raw, monkeypatch)
    assert named["model"].ok
    memory = named["memory model"]
    assert not memory.ok and "cannot reach http://127.0.0.1:9/v1: connection refused" in memory.detail
    assert not named["embedder"].ok and "memory.embedding" in named["embedder"].fix


async def test_a_memory_model_of_its_own_and_no_embedder_are_ticks(
    tmp_path: Path, model: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = base_config(tmp_path, model)
    raw["memory"]["model"] = "small"
    raw["memory"]["embedding"] = {"provider": "none"}
    named = await run_doctor(tmp_path, raw, monkeypatch)
    assert named["memory model"].ok and "small" in named["memory model"].detail
    assert named["embedder"].ok and "keyword search only" in named["embedder"].detail
    assert [r["model"] for r in model.chat_requests()] == ["main-model", "small"]


async def test_telegram_token_refused_and_a_webhook_that_is_not_https(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    telegram = {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["42"]}
    tg.fail("getMe", unauthorized())
    named = await run_doctor(
        tmp_path, base_config(tmp_path, model, channels={"telegram": telegram}), monkeypatch
    )
    assert not named["telegram"].ok and "refused the token (401)" in named["telegram"].detail
    assert "channels.telegram.token" in named["telegram"].fix
    # The config takes http on this machine (a reverse proxy in front), but Telegram posts to https only.
    webhook = {**telegram, "mode": "webhook", "webhook": {"url": "http://127.0.0.1:8443/telegram"}}
    named = await run_doctor(
        tmp_path, base_config(tmp_path, model, channels={"telegram": webhook}), monkeypatch
    )
    assert named["telegram"].ok
    assert not named["telegram webhook"].ok and "https" in named["telegram webhook"].detail
    webhook["webhook"] = {"url": "https://example.org/hook"}
    tg.webhook_trouble = {"last_error_message": "Connection refused"}
    named = await run_doctor(
        tmp_path, base_config(tmp_path, model, channels={"telegram": webhook}), monkeypatch
    )
    assert not named["telegram webhook"].ok and "Connection refused" in named["telegram webhook"].detail
    tg.webhook_trouble = {}
    named = await run_doctor(
        tmp_path, base_config(tmp_path, model, channels={"telegram": webhook}), monkeypatch
    )
    assert named["telegram webhook"].ok


async def test_telegram_unreachable_names_the_server_not_the_token(
    tmp_path: Path, model: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = TelegramStub().token
    telegram = {"enabled": True, "token": token, "baseUrl": "http://127.0.0.1:9/bot", "allowFrom": ["42"]}
    check = (
        await run_doctor(tmp_path, base_config(tmp_path, model, channels={"telegram": telegram}), monkeypatch)
    )["telegram"]
    assert not check.ok and "connection refused" in check.detail and token not in check.detail


async def test_feishu_app_refused(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    feishu.token_code = 10014
    app = {"enabled": True, "appId": "cli_doc", "appSecret": FEISHU_SECRET, "domain": feishu.domain}
    check = (await run_doctor(tmp_path, base_config(tmp_path, model, channels={"feishu": app}), monkeypatch))[
        "feishu"
    ]
    assert not check.ok and "code 10014" in check.detail and "appSecret" in check.fix


def _doctor(tmp_path: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERCLAW_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "doctor", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(tmp_path)},
        cwd=REPO,
        timeout=PROCESS_CEILING,
    )


def test_the_command_exits_1_on_any_cross_and_0_when_all_pass(tmp_path: Path, model: OpenAIStub) -> None:
    raw = base_config(tmp_path, model)
    raw["memory"]["embedding"] = {"provider": "none"}
    done = _doctor(tmp_path, write_config(tmp_path, raw))
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"] is True, done.stdout + done.stderr
    model.script(StubReply(status=401))
    done = _doctor(tmp_path, write_config(tmp_path, raw))
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["ok"] is False
    assert [c["name"] for c in report["checks"] if not c["ok"]] == ["model"]
    assert KEY not in done.stdout + done.stderr


async def test_credentials_in_a_url_are_not_printed(
    tmp_path: Path, model: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = base_config(tmp_path, model)
    raw["provider"]["baseUrl"] = "http://proxyuser:proxy-pass-91@127.0.0.1:9/v1"
    named = await run_doctor(tmp_path, raw, monkeypatch)
    text = render(list(named.values()))
    assert "proxy-pass-91" not in text and "//<credentials>@127.0.0.1:9/v1" in text
    assert not named["model"].ok


async def test_feishu_without_the_card_scope_says_replies_come_whole_and_what_to_grant(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    feishu.cardkit.refuse_code = SCOPE_MISSING
    app = {"enabled": True, "appId": "cli_doc_cards", "appSecret": FEISHU_SECRET, "domain": feishu.domain}
    checks = await run_doctor(tmp_path, base_config(tmp_path, model, channels={"feishu": app}), monkeypatch)
    cards = checks["feishu streaming cards"]
    assert checks["feishu"].ok and not cards.ok
    assert "code 99991672" in cards.detail and "sent whole at the end" in cards.detail
    assert "cardkit:card:write" in cards.fix
    assert not feishu.cardkit.cards  # nothing was made
