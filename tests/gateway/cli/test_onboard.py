"""``tierclaw onboard`` through the real CLI entry point, on tmp_path."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.cli.onboard import AGENTS_MD, SOUL_MD
from gateway.config import CONFIG_ENV, load_config


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """umask 0, so a 0600 config proves onboard sets the mode itself."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def paths(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "etc" / "tierclaw" / "config.json", tmp_path / "ws"


def onboard(tmp_path: Path, *extra: str) -> tuple[int, Path, Path]:
    config, workspace = paths(tmp_path)
    code = main(["onboard", "--config", str(config), "--workspace", str(workspace), *extra])
    return code, config, workspace


def snapshot(*paths: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def test_writes_config_and_workspace(
    tmp_path: Path, loose_umask: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, config_path, workspace = onboard(tmp_path)
    assert code == 0
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
    assert stat.S_IMODE((workspace / "AGENTS.md").stat().st_mode) == 0o644  # templates are not secret
    assert (workspace / "AGENTS.md").read_text(encoding="utf-8") == AGENTS_MD
    assert (workspace / "SOUL.md").read_text(encoding="utf-8") == SOUL_MD
    assert "memory" in AGENTS_MD and "data" in AGENTS_MD and "language" in AGENTS_MD

    config = load_config(config_path, env={})
    assert config.workspace_path() == workspace
    assert config.source == config_path
    assert not config.has_api_key()

    out = capsys.readouterr().out
    assert str(config_path) in out and str(workspace / "AGENTS.md") in out
    assert "provider.apiKey" in out and "TIERCLAW_PROVIDER_API_KEY" in out and "tierclaw chat" in out
    assert CONFIG_ENV in out  # a non-default config path needs TIERCLAW_CONFIG to be found
    assert [p.name for p in config_path.parent.iterdir()] == ["config.json"]  # no temp file left


def test_relative_workspace_is_stored_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["onboard", "--config", "c.json", "--workspace", "rel-ws"]) == 0
    raw = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert raw["agent"]["workspace"] == str(tmp_path / "rel-ws")
    assert (tmp_path / "rel-ws" / "SOUL.md").is_file()


def test_refuses_a_second_run_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert onboard(tmp_path)[0] == 0
    config_path, workspace = paths(tmp_path)
    config_path.write_text('{"agent": {"model": "mine"}}', encoding="utf-8")
    before = snapshot(config_path, workspace / "AGENTS.md", workspace / "SOUL.md")
    capsys.readouterr()

    code, _, _ = onboard(tmp_path)
    assert code == 1
    err = capsys.readouterr().err
    assert str(config_path) in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert snapshot(config_path, workspace / "AGENTS.md", workspace / "SOUL.md") == before


def test_one_existing_file_blocks_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "SOUL.md").write_text("my own soul", encoding="utf-8")
    code, config_path, _ = onboard(tmp_path)
    assert code == 1
    assert str(workspace / "SOUL.md") in capsys.readouterr().err
    assert not config_path.exists() and not config_path.parent.exists()
    assert not (workspace / "AGENTS.md").exists()
    assert (workspace / "SOUL.md").read_text(encoding="utf-8") == "my own soul"


def test_force_overwrites(tmp_path: Path, loose_umask: None) -> None:
    assert onboard(tmp_path)[0] == 0
    config_path, workspace = paths(tmp_path)
    config_path.write_text('{"agent": {"model": "mine"}}', encoding="utf-8")
    config_path.chmod(0o644)
    (workspace / "SOUL.md").write_text("old", encoding="utf-8")

    code, _, _ = onboard(tmp_path, "--force")
    assert code == 0
    assert load_config(config_path, env={}).agent.model == "gpt-4o-mini"
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
    assert (workspace / "SOUL.md").read_text(encoding="utf-8") == SOUL_MD


def test_config_path_defaults_to_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "from-env.json"
    monkeypatch.setenv(CONFIG_ENV, str(target))
    assert main(["onboard", "--workspace", str(tmp_path / "ws")]) == 0
    assert load_config(target, env={}).workspace_path() == tmp_path / "ws"


def test_workspace_that_is_a_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").write_text("not a dir", encoding="utf-8")
    code, config_path, _ = onboard(tmp_path)
    assert code == 2
    assert "not a directory" in capsys.readouterr().err
    assert not config_path.exists()


def test_never_prints_a_key_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TIERCLAW_PROVIDER_API_KEY", "sk-should-never-be-printed-1234")
    assert onboard(tmp_path)[0] == 0
    captured = capsys.readouterr()
    assert "already set" in captured.out
    assert "sk-should" not in captured.out + captured.err
