"""``memory.databaseUrl`` / ``--db URL``: the memory on PostgreSQL from the command line, with the password
never shown, and an unusable database as one line and exit 2."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.config import ConfigError, load_config

SECRET = "pw-s3cret-9876"


def _with_password(url: str) -> str:
    scheme, _, rest = url.partition("://")
    user, _, host = rest.partition("@")
    return f"{scheme}://{user}:{SECRET}@{host}"


@pytest.fixture(autouse=True)
def _clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)


def test_memory_commands_take_a_url_and_never_print_its_password(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _with_password(postgres_url)
    assert main(["memory", "add", "Alice drinks green tea", "--db", url, "--owner", "alice"]) == 0
    assert main(["memory", "search", "green tea", "--db", url, "--owner", "alice"]) == 0
    assert main(["memory", "stats", "--db", url, "--owner", "alice"]) == 0
    out, err = capsys.readouterr()
    assert "Alice drinks green tea" in out and SECRET not in out + err


def test_status_shows_the_url_masked_and_counts_the_memory(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _with_password(postgres_url)
    assert main(["memory", "add", "Bob plays chess", "--db", url, "--owner", "bob"]) == 0
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"databaseUrl": url, "dbPath": str(tmp_path / "m.db")}}))
    capsys.readouterr()
    assert main(["status", "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["memory_db"].startswith("postgresql://postgres:***@")
    assert report["memory"] is not None and SECRET not in json.dumps(report)
    assert main(["status", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "PostgreSQL" in out and SECRET not in out
    assert not (tmp_path / "m.db").exists()  # the file is not the memory any more


def test_the_environment_variable_chooses_postgres(
    postgres_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIERCLAW_DATABASE_URL", postgres_url)
    assert main(["memory", "add", "Carol sings", "--owner", "carol"]) == 0
    assert main(["memory", "list", "--db", postgres_url, "--owner", "carol"]) == 0
    assert "Carol sings" in capsys.readouterr().out


def test_an_unreachable_database_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://tc:{SECRET}@127.0.0.1:{port}/memory"
    assert main(["memory", "stats", "--db", url]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "postgresql://tc:***@127.0.0.1" in err and SECRET not in err


def test_a_url_of_another_kind_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"databaseUrl": f"mysql://u:{SECRET}@h/db"}}))
    with pytest.raises(ConfigError) as caught:
        load_config(str(config))
    assert "databaseUrl" in str(caught.value) and SECRET not in str(caught.value)
