"""``tierclaw doctor`` checks the database the gateway would open — PostgreSQL too: reachable,
authenticated, the schema version, can write — and says what to fix; ``status`` and the other read
commands work on a fresh, empty PostgreSQL database (issue 37, items 1 and 2). Against the throwaway
cluster of tests/conftest.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from gateway.cli.doctor import collect, render
from gateway.cli.doctor_checks import Check
from localservers import postgres_cluster as throwaway_pg
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

PASSWORD = "right-horse-battery-7"
WRONG = "wrong-horse-battery-9"


def with_login(url: str, user: str, password: str | None = None, database: str | None = None) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    login = f"{user}:{password}" if password else user
    path = f"/{database}" if database else parts.path
    return urlunsplit(parts._replace(netloc=f"{login}@{host}", path=path))


@pytest.fixture
def empty_database(postgres_cluster: throwaway_pg.Cluster) -> Iterator[str]:
    """A database nobody ran tierclaw on: what `createdb --owner tierclaw tierclaw` gives."""
    name = f"tierclaw_empty_{os.getpid()}"
    throwaway_pg.admin_execute(postgres_cluster, f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")
    try:
        yield postgres_cluster.url_for(name)
    finally:
        throwaway_pg.admin_execute(postgres_cluster, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def database_check(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Check, str]:
    """The doctor's database line for a config whose memory is ``url`` (given as TIERCLAW_DATABASE_URL)."""
    for name in [n for n in os.environ if n.startswith(("TIERCLAW_", "OPENAI_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TIERCLAW_DATABASE_URL", url)
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"memory": {"dbPath": str(tmp_path / "data" / "memory.db")}}), encoding="utf-8"
    )
    checks = await collect(str(config))
    [check] = [c for c in checks if c.name == "database"]
    return check, render(checks)


async def test_a_wrong_password_is_a_cross_that_says_what_to_fix(
    tmp_path: Path,
    postgres_cluster: throwaway_pg.Cluster,
    empty_database: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    throwaway_pg.admin_execute(
        postgres_cluster,
        "DROP ROLE IF EXISTS tierclaw_pw",
        f"CREATE ROLE tierclaw_pw LOGIN PASSWORD '{PASSWORD}'",
    )
    try:
        if not postgres_cluster.require_password("tierclaw_pw"):
            pytest.skip("a server given by TEST_POSTGRES_URL: its authentication cannot be changed here")
        wrong = with_login(empty_database, "tierclaw_pw", WRONG)
        check, text = await database_check(tmp_path, wrong, monkeypatch)
        assert not check.ok
        assert "password" in check.detail and "tierclaw_pw" in check.detail
        assert "TIERCLAW_DATABASE_URL" in check.fix or "memory.databaseUrl" in check.fix
        assert WRONG not in text and "everything checked is working" not in text
        right = with_login(empty_database, "tierclaw_pw", PASSWORD)
        throwaway_pg.admin_execute(
            throwaway_pg.Cluster(empty_database), "GRANT ALL ON SCHEMA public TO tierclaw_pw"
        )
        check, text = await database_check(tmp_path, right, monkeypatch)
        assert check.ok, check
        assert PASSWORD not in text
    finally:
        throwaway_pg.admin_execute(throwaway_pg.Cluster(empty_database), "DROP OWNED BY tierclaw_pw")
        throwaway_pg.admin_execute(postgres_cluster, "DROP ROLE IF EXISTS tierclaw_pw")


async def test_an_unreachable_server_and_a_missing_database(
    tmp_path: Path, postgres_cluster: throwaway_pg.Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    check, _ = await database_check(
        tmp_path, f"postgresql://tierclaw:{WRONG}@127.0.0.1:{port}/tierclaw", monkeypatch
    )
    assert not check.ok and f"127.0.0.1:{port}" in check.detail and "refused" in check.detail
    assert "server" in check.fix and WRONG not in check.detail + check.fix
    check, _ = await database_check(tmp_path, postgres_cluster.url_for("no_such_tierclaw_db"), monkeypatch)
    assert not check.ok and "does not exist" in check.detail and "createdb" in check.fix


async def test_a_fresh_database_and_one_in_use_are_ticks_with_their_schema(
    tmp_path: Path, empty_database: str, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.store.schema import SCHEMA_VERSION

    check, _ = await database_check(tmp_path, empty_database, monkeypatch)
    assert check.ok, check
    assert "empty" in check.detail and "first start creates" in check.detail and "can write" in check.detail
    check, _ = await database_check(tmp_path, postgres_url, monkeypatch)
    assert check.ok, check
    assert (
        f"schema {SCHEMA_VERSION}" in check.detail
        and "can write" in check.detail
        and "PostgreSQL" in check.detail
    )


async def test_a_user_who_may_not_write_is_a_cross(
    tmp_path: Path, postgres_cluster: throwaway_pg.Cluster, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    throwaway_pg.admin_execute(
        postgres_cluster,
        "DROP ROLE IF EXISTS tierclaw_reader",
        "CREATE ROLE tierclaw_reader LOGIN",
    )
    try:
        throwaway_pg.admin_execute(
            throwaway_pg.Cluster(postgres_url),
            "GRANT SELECT ON ALL TABLES IN SCHEMA public TO tierclaw_reader",
        )
        check, _ = await database_check(tmp_path, with_login(postgres_url, "tierclaw_reader"), monkeypatch)
        assert not check.ok and "cannot write" in check.detail and "tierclaw_reader" in check.fix
    finally:
        throwaway_pg.admin_execute(throwaway_pg.Cluster(postgres_url), "DROP OWNED BY tierclaw_reader")
        throwaway_pg.admin_execute(postgres_cluster, "DROP ROLE IF EXISTS tierclaw_reader")


def _cli(tmp_path: Path, url: str, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERCLAW_", "OPENAI_"))}
    env.update({"HOME": str(tmp_path), "TIERCLAW_DATABASE_URL": url, "TIERCLAW_EMBEDDING_PROVIDER": "none"})
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=PROCESS_CEILING,
        cwd=REPO,
    )


def test_status_and_the_read_commands_work_on_an_empty_database(tmp_path: Path, empty_database: str) -> None:
    done = _cli(tmp_path, empty_database, "status", "--json")
    assert done.returncode == 0, done.stderr
    memory = json.loads(done.stdout)["memory"]
    assert memory["tier2"] == 0 and memory["buffered_turns"] == 0
    for argv in (
        ("memory", "list"),
        ("memory", "owners", "--json"),
        ("memory", "stats"),
        ("memory", "search", "x"),
    ):
        done = _cli(tmp_path, empty_database, *argv)
        assert done.returncode == 0, (argv, done.stderr)
        assert "holds no tierclaw memory" not in done.stderr


def test_a_database_holding_something_else_is_still_refused(
    tmp_path: Path, postgres_cluster: throwaway_pg.Cluster, empty_database: str
) -> None:
    throwaway_pg.admin_execute(throwaway_pg.Cluster(empty_database), "CREATE TABLE invoices (id int)")
    done = _cli(tmp_path, empty_database, "memory", "list")
    assert done.returncode == 2
    assert "holds other tables but no tierclaw memory" in done.stderr and "memory.databaseUrl" in done.stderr


def test_doctor_exits_1_on_a_database_it_cannot_open(
    tmp_path: Path, postgres_cluster: throwaway_pg.Cluster
) -> None:
    done = _cli(tmp_path, postgres_cluster.url_for("no_such_tierclaw_db"), "doctor")
    assert done.returncode == 1
    assert "✘ database" in done.stdout and "everything checked is working" not in done.stdout
