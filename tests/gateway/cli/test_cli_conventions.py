"""The CLI conventions people know from git, pip and docker: options anywhere, owners, --json, show,
progress bars on a terminal, documented exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.cli.memory.common import CliError, choose_owner


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def two_owners(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    """A database holding alice (two memories) and bob (one)."""
    db = tmp_path / "m.db"
    for owner, text in (
        ("alice", "Alice keeps bees on the roof"),
        ("alice", "Alice drinks oolong tea every morning"),
        ("bob", "Bob plays the cello in an orchestra"),
    ):
        assert run(capsys, "memory", "add", text, "--owner", owner, "--db", str(db))[0] == 0
    return db


def test_global_options_before_or_after_the_subcommand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "m.db"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"dbPath": str(db)}}), encoding="utf-8")
    assert run(capsys, "memory", "add", "I like rye bread", "--config", str(config))[0] == 0
    for argv in (
        ("--config", str(config), "--log-level", "error", "memory", "list"),
        ("memory", "list", "--config", str(config), "--log-level", "ERROR"),
        ("memory", "--config", str(config), "list"),
        ("memory", "--db", str(db), "list"),
        ("memory", "list", "--db", str(db)),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 0 and "I like rye bread" in out, (argv, err)
    # A value given after the subcommand is not overwritten by the top-level default.
    code, _, err = run(capsys, "memory", "list", "--config", str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in err


def test_a_bad_global_option_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory", "list", "--log-level", "LOUD")
    assert code == 2 and "--log-level" in err


def test_owners_lists_counts_and_last_activity(capsys: pytest.CaptureFixture[str], two_owners: Path) -> None:
    code, out, _ = run(capsys, "memory", "owners", "--db", str(two_owners), "--json")
    assert code == 0
    owners = json.loads(out)
    assert [o["owner"] for o in owners] == ["alice", "bob"]
    assert [o["tier2"] for o in owners] == [2, 1]
    assert all(o["last_activity"][:4].isdigit() for o in owners)
    code, out, _ = run(capsys, "memory", "owners", "--db", str(two_owners))
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["owner", "profile", "memories"]
    assert lines[2].split()[:3] == ["alice", "0", "2"] and lines[3].split()[:3] == ["bob", "0", "1"]
    assert lines[2].endswith("UTC")


def test_owners_of_an_empty_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    assert run(capsys, "memory", "add", "x marks the spot", "--db", str(db))[0] == 0
    assert run(capsys, "memory", "forget", "1", "--purge", "--yes", "--db", str(db))[0] == 0
    code, out, _ = run(capsys, "memory", "owners", "--db", str(db))
    assert code == 0 and "no owners" in out
    assert json.loads(run(capsys, "memory", "owners", "--db", str(db), "--json")[1]) == []


def test_owner_defaults_to_the_only_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "one.db"
    assert (
        run(capsys, "memory", "add", "Carol sails on weekends", "--owner", "telegram:7", "--db", str(db))[0]
        == 0
    )
    code, out, _ = run(capsys, "memory", "list", "--db", str(db))
    assert code == 0 and "Carol sails" in out
    code, out, _ = run(capsys, "memory", "stats", "--db", str(db), "--json")
    assert json.loads(out)["owner"] == "telegram:7"


def test_several_owners_ask_for_owner(capsys: pytest.CaptureFixture[str], two_owners: Path) -> None:
    for command in (("list",), ("search", "tea"), ("stats",), ("export",)):
        code, out, err = run(capsys, "memory", *command, "--db", str(two_owners))
        assert code == 2 and out == "", command
        assert "2 owners (alice, bob)" in err and "--owner" in err
    code, out, _ = run(capsys, "memory", "stats", "--all-owners", "--db", str(two_owners), "--json")
    assert code == 0 and json.loads(out)["owner"] is None and json.loads(out)["tier2"] == 3


def test_choose_owner() -> None:
    assert choose_owner([]) == "console:local"
    assert choose_owner(["feishu:ou_1"]) == "feishu:ou_1"
    with pytest.raises(CliError) as many:
        choose_owner([f"o{i:02d}" for i in range(12)])
    assert "12 owners" in str(many.value) and "and 2 more" in str(many.value) and many.value.code == 2


def test_json_list_and_search(capsys: pytest.CaptureFixture[str], two_owners: Path) -> None:
    db = str(two_owners)
    code, out, _ = run(capsys, "memory", "list", "--owner", "alice", "--db", db, "--json")
    listed = json.loads(out)
    assert code == 0 and {m["content"] for m in listed} == {
        "Alice keeps bees on the roof",
        "Alice drinks oolong tea every morning",
    }
    assert all(m["owner"] == "alice" and isinstance(m["refs"], list) for m in listed)
    code, out, _ = run(capsys, "memory", "search", "oolong tea", "--owner", "alice", "--db", db, "--json")
    hits = json.loads(out)
    assert code == 0 and hits[0]["content"] == "Alice drinks oolong tea every morning"
    assert hits[0]["score"] > 0
    code, out, _ = run(capsys, "memory", "search", "cello", "--owner", "alice", "--db", db, "--json")
    assert code == 0 and json.loads(out) == []


def test_show_finds_the_owner_by_id(capsys: pytest.CaptureFixture[str], two_owners: Path) -> None:
    db = str(two_owners)
    code, out, _ = run(capsys, "memory", "show", "3", "--db", db)
    assert code == 0
    fields = dict(line.split(None, 1) for line in out.split("\n\n")[0].splitlines())
    assert fields["owner"] == "bob" and fields["state"] == "live" and fields["tier"].startswith("2")
    assert out.rstrip().endswith("Bob plays the cello in an orchestra")
    shown = json.loads(run(capsys, "memory", "show", "1", "--db", db, "--json")[1])
    assert shown["owner"] == "alice" and shown["content"] == "Alice keeps bees on the roof"
    # Another owner's id stays invisible when --owner is given; an unknown id is a clear error.
    code, _, err = run(capsys, "memory", "show", "3", "--owner", "alice", "--db", db)
    assert code == 2 and "no memory #3 for owner alice" in err
    code, _, err = run(capsys, "memory", "show", "99", "--db", db)
    assert code == 2 and "no memory #99" in err


def test_show_an_archived_superseded_memory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    common = ("--subject", "user", "--predicate", "lives_in", "--db", db)
    assert run(capsys, "memory", "add", "I live in Lyon", *common)[0] == 0
    assert run(capsys, "memory", "add", "I live in Porto", *common)[0] == 0
    code, out, _ = run(capsys, "memory", "show", "1", "--db", db)
    assert code == 0 and "archived (superseded by #2)" in out and "user / lives_in" in out


def test_forget_by_id_without_owner(capsys: pytest.CaptureFixture[str], two_owners: Path) -> None:
    code, out, _ = run(capsys, "memory", "forget", "3", "--db", str(two_owners))
    assert code == 0 and out.strip() == "archived #3"
    listed = json.loads(run(capsys, "memory", "list", "--owner", "bob", "--db", str(two_owners), "--json")[1])
    assert listed == []


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_import_shows_a_progress_bar_on_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src.db"
    for i in range(150):
        run(capsys, "memory", "add", f"Fact number {i} about topic {i * 7919 % 1000}", "--db", str(source))
    export = tmp_path / "export.json"
    assert run(capsys, "memory", "export", "--db", str(source), "-o", str(export))[0] == 0
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, out, _ = run(capsys, "memory", "import", str(export), "--db", str(tmp_path / "dest.db"))
    assert code == 0 and "memories 150 imported" in out
    assert "importing" in terminal.getvalue() and "150/150" in terminal.getvalue()


def test_piped_import_prints_only_the_summary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "src.db"
    run(capsys, "memory", "add", "Only one fact", "--db", str(source))
    export = tmp_path / "export.json"
    run(capsys, "memory", "export", "--db", str(source), "-o", str(export))
    code, out, err = run(capsys, "memory", "import", str(export), "--db", str(tmp_path / "dest.db"))
    assert code == 0 and "memories 1 imported" in out and err == ""
