"""Every command that prints data takes ``--json`` (one JSON document on stdout), and output piped into a
reader that stops early (``| head``) ends quietly (issue 37, item 7)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.cli.main import build_parser
from gateway.cli.options import subcommand_parsers
from memory.engine import MemoryEngine
from memory.records import Fact
from tests.support.waiting import PROCESS_CEILING

# Commands that print no data: they hold a conversation or run a service, or only list other commands.
NOT_DATA = {"chat", "gateway", "memory"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    """Run with ``--json``: exit 0 and exactly one JSON document on stdout."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, (argv, err)
    return json.loads(out)


def _named_parsers() -> dict[str, argparse.ArgumentParser]:
    named = {}
    for parser in subcommand_parsers(build_parser()):
        words = parser.prog.split()[1:]  # "tierclaw memory add" -> ["memory", "add"]
        named[" ".join(words)] = parser
    return named


def test_every_command_that_prints_data_accepts_json() -> None:
    parsers = _named_parsers()
    assert {"memory add", "memory copy", "status", "onboard", "dashboard"} <= set(parsers)
    missing = [
        name
        for name, p in parsers.items()
        if name not in NOT_DATA and "--json" not in p._option_string_actions
    ]
    assert missing == []


def test_changing_commands_say_what_they_did_in_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "m.db")
    added = as_json(capsys, "memory", "add", "I keep bees on the roof", "--db", db)
    assert added == {"action": "added", "id": 1, "replaced_id": None, "owner": "console:local"}
    merged = as_json(capsys, "memory", "add", "I keep bees on the roof", "--db", db)
    assert merged["action"] == "merged" and merged["id"] == 1
    edited = as_json(capsys, "memory", "edit", "1", "--content", "I keep two hives on the roof", "--db", db)
    assert edited["id"] == 1 and edited["content"] == "I keep two hives on the roof"
    assert as_json(capsys, "memory", "forget", "1", "--db", db) == {"id": 1, "action": "archived"}
    assert as_json(capsys, "memory", "restore", "1", "--db", db) == {"id": 1, "action": "restored"}
    flushed = as_json(capsys, "memory", "flush", "--db", db)
    assert flushed["messages"] == 0 and flushed["memories"] == 0
    assert as_json(capsys, "memory", "retry", "--db", db)["requeued"] == 0
    assert as_json(capsys, "memory", "compress", "--daily", "--db", db)["job"] == "daily_compress"
    reindexed = as_json(capsys, "memory", "reindex", "--db", db, "--config", str(_local_embeddings(tmp_path)))
    assert reindexed["embedded"] == 1 and reindexed["target"] == "memories"
    out_file = tmp_path / "export.json"
    exported = as_json(capsys, "memory", "export", "-o", str(out_file), "--db", db)
    assert exported["file"] == str(out_file) and exported["memories"] == 1
    imported = as_json(capsys, "memory", "import", str(out_file), "--db", str(tmp_path / "other.db"))
    assert imported["memories"]["imported"] == 1
    copied = as_json(capsys, "memory", "copy", "--from", db, "--to", str(tmp_path / "copy.db"))
    assert copied["memories"] == 1 and copied["verified"] is True
    assert as_json(capsys, "memory", "forget", "1", "--purge", "--yes", "--db", db) == {
        "id": 1,
        "action": "purged",
    }


def _local_embeddings(tmp_path: Path) -> Path:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"embedding": {"provider": "local"}}}), encoding="utf-8")
    return config


def test_export_to_stdout_with_json_is_the_json_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "m.db")
    assert run(capsys, "memory", "add", "I keep bees", "--db", db)[0] == 0
    doc = as_json(capsys, "memory", "export", "--db", db)
    assert doc["format"] and [m["content"] for m in doc["memories"]] == ["I keep bees"]
    code, _, err = run(capsys, "memory", "export", "--format", "md", "--json", "--db", db)
    assert code == 2 and "--json" in err


def test_migrate_and_onboard_in_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "MEMORY.md").write_text("- I keep bees\n", encoding="utf-8")
    migrated = as_json(
        capsys, "memory", "migrate", "--workspace", str(workspace), "--db", str(tmp_path / "m.db")
    )
    assert migrated["owner"] == "console:local" and "imported" in migrated
    config = tmp_path / "cfg" / "config.json"
    onboarded = as_json(capsys, "onboard", "--config", str(config), "--workspace", str(tmp_path / "ws2"))
    assert onboarded["config"] == str(config.absolute()) and len(onboarded["workspace_files"]) == 2


def test_a_usage_error_after_a_subcommand_shows_that_subcommands_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "memory", "add", "x", "--no-such-option")
    assert code == 2
    assert "usage: tierclaw memory add" in err


async def _many_memories(db: Path, n: int) -> None:
    async with await MemoryEngine.open(db) as engine:
        rng = random.Random(7)
        words = [f"{a}{b}" for a in "bcdfghjklmnprstvz" for b in ("ana", "elo", "ito", "umo", "ary")]
        facts = [Fact(" ".join(rng.choice(words) for _ in range(30)).capitalize()) for _ in range(n)]
        await engine.write_many("console:local", facts)


@pytest.mark.parametrize("argv", [["memory", "list", "--limit", "1000"], ["memory", "export"]])
def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path, argv: list[str]) -> None:
    db = tmp_path / "m.db"
    asyncio.run(_many_memories(db, 800))  # ~160 KB of output: more than a pipe holds
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", *argv, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # what `head -1` does: read a line, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=PROCESS_CEILING)
    assert err == ""  # no "error: [Errno 32] Broken pipe", no traceback
    # 128 + SIGPIPE, as other tools end when their reader went away; a single write the kernel cut short
    # when the reader left ends as done (export: one write of the whole document)
    assert code in (0, 141)
