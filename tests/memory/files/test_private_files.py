"""Private by default: the data directory 0700, the database and its -wal/-shm 0600, exports and the
config file 0600, whatever the umask."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.cli import main
from memory.engine import MemoryEngine
from memory.records import Fact
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The common default: without care, files would be 0644 and directories 0755."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


async def test_database_directory_file_wal_and_shm_are_private(tmp_path: Path) -> None:
    existing = tmp_path / "home"
    existing.mkdir(mode=0o755)
    db = existing / ".tierclaw" / "data" / "memory.db"
    engine = await MemoryEngine.open(db)
    try:
        await engine.write("telegram:1", Fact(content="My PIN hint is the cat's birthday"))
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            assert path.exists() and mode(path) == 0o600, path
    finally:
        await engine.close()
    for directory in (db.parent, db.parent.parent):  # every one created here
        assert mode(directory) == 0o700, directory
    assert mode(existing) == 0o755  # a directory that already existed is left as it was


async def test_an_existing_world_readable_database_is_made_private_on_open(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    engine = await MemoryEngine.open(db)
    await engine.close()
    os.chmod(db, 0o644)  # as an earlier version left it
    engine = await MemoryEngine.open(db)
    await engine.close()
    assert mode(db) == 0o600


def test_exports_are_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "memory.db"

    async def fill() -> None:
        engine = await MemoryEngine.open(db)
        await engine.write("console:local", Fact(content="I live in Lyon"))
        await engine.close()

    asyncio.run(fill())
    for fmt in ("json", "md"):
        out = tmp_path / f"export.{fmt}"
        assert main(["memory", "export", "--db", str(db), "--format", fmt, "-o", str(out)]) == 0
        assert mode(out) == 0o600 and "I live in Lyon" in out.read_text(encoding="utf-8")
    capsys.readouterr()


def test_onboard_writes_the_config_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "cfg" / "nested" / "config.json"
    assert main(["onboard", "--config", str(config), "--workspace", str(tmp_path / "ws")]) == 0
    assert mode(config) == 0o600
    assert mode(config.parent) == 0o700 and mode(config.parent.parent) == 0o700
    assert mode(tmp_path / "ws" / "AGENTS.md") == 0o644  # a template, nothing secret
    capsys.readouterr()


# ---------------------------------------------------------------- a database that cannot be used


def _run_cli(tmp_path: Path, db: str, *argv: str) -> subprocess.CompletedProcess:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"dbPath": db}}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *argv, "--config", str(config)],
        input="hello\n",
        capture_output=True,
        text=True,
        env={**env, "HOME": str(tmp_path)},
        timeout=PROCESS_CEILING,
        cwd=REPO,
    )


@pytest.mark.parametrize("argv", [("chat",), ("memory", "add", "I live in Lyon"), ("status",)])
@pytest.mark.parametrize("where", ["under a file", "corrupt"])
def test_a_database_that_cannot_be_used_is_one_line_and_exit_2(
    tmp_path: Path, argv: tuple, where: str
) -> None:
    if where == "under a file":
        (tmp_path / "afile").write_text("x", encoding="utf-8")
        db = str(tmp_path / "afile" / "memory.db")
    else:
        db = str(tmp_path / "memory.db")
        Path(db).write_text("this is not a database", encoding="utf-8")
    done = _run_cli(tmp_path, db, *argv)
    if argv == ("status",) and where == "under a file":  # status reads only: no database yet is fine
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip() and "offline model" not in line]
    assert any(db in line for line in lines), done.stderr
