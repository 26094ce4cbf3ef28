"""`tierclaw memory …` run in-process through gateway.cli.main, plus one real subprocess run."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.cli.memory.table import display_width, render_table, truncate
from memory.engine import MemoryEngine
from memory.records import Fact
from tests.support.waiting import PROCESS_CEILING

TIERCLAW = Path(sys.executable).with_name("tierclaw")
MISSING_DB_HINT = "memory database not found"


@pytest.fixture(autouse=True)
def _fixed_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables follow the terminal width; pin it so the tests do not depend on who runs them."""
    monkeypatch.setenv("COLUMNS", "100")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def mem(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, str, str]:
    return run(capsys, "memory", argv[0], "--db", str(db), *argv[1:])


def _id(text: str) -> int:
    m = re.search(r"#(\d+)", text)
    assert m, text
    return int(m.group(1))


def _stats(capsys: pytest.CaptureFixture[str], db: Path, *extra: str) -> dict[str, str]:
    code, out, _ = mem(capsys, db, "stats", *extra)
    assert code == 0
    return dict(line.split(None, 1) for line in out.splitlines() if line.strip())


def test_no_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys)
    assert code == 0 and "memory" in out and "usage" in out.lower()


def test_full_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    code, out, _ = mem(
        capsys,
        db,
        "add",
        "User prefers dark mode in every editor",
        "--tier",
        "1",
        "--category",
        "config",
        "--importance",
        "0.9",
    )
    assert code == 0 and out.startswith("added #")
    dark = _id(out)
    code, out, _ = mem(
        capsys,
        db,
        "add",
        "tierclaw 的数据库使用 SQLite 和 FTS5 全文索引",
        "--project",
        "tierclaw",
        "--category",
        "decision",
    )
    assert code == 0 and out.startswith("added #")
    sqlite_id = _id(out)
    code, out, _ = mem(
        capsys, db, "add", "User prefers dark mode in every editor", "--tier", "1", "--category", "config"
    )
    assert (code, out.strip()) == (0, f"merged into #{dark}")
    code, out, _ = mem(
        capsys,
        db,
        "add",
        "Deploy target is fly.io",
        "--subject",
        "deploy",
        "--predicate",
        "target",
        "--category",
        "config",
    )
    old_deploy = _id(out)
    code, out, _ = mem(
        capsys,
        db,
        "add",
        "Deploy target is hetzner",
        "--subject",
        "deploy",
        "--predicate",
        "target",
        "--category",
        "config",
    )
    assert code == 0 and re.fullmatch(rf"added #\d+, superseding #{old_deploy}", out.strip())

    code, out, _ = mem(capsys, db, "list")
    assert code == 0
    header = out.splitlines()[0].split()
    assert header == ["id", "tier", "project", "category", "importance", "created", "content"]
    assert "dark mode" in out and "SQLite" in out and "hetzner" in out and "fly.io" not in out
    code, out, _ = mem(capsys, db, "list", "--tier", "2", "--project", "tierclaw")
    assert "SQLite" in out and "dark mode" not in out
    code, out, _ = mem(capsys, db, "list", "--archived")
    assert "fly.io" in out and "[archived]" in out

    code, out, _ = mem(capsys, db, "search", "SQLite 数据库")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "tier", "project", "category", "score", "content"]
    assert lines[2].split()[0] == str(sqlite_id)

    code, out, _ = mem(
        capsys,
        db,
        "edit",
        str(sqlite_id),
        "--content",
        "tierclaw stores memory in SQLite WAL",
        "--importance",
        "0.8",
    )
    assert code == 0 and f"edited #{sqlite_id}" in out
    code, out, _ = mem(capsys, db, "search", "WAL")
    assert "SQLite WAL" in out

    code, out, _ = mem(capsys, db, "forget", str(dark))
    assert (code, out.strip()) == (0, f"archived #{dark}")
    code, out, _ = mem(capsys, db, "list")
    assert "dark mode" not in out

    export = tmp_path / "export.json"
    code, out, _ = mem(capsys, db, "export", "-o", str(export))
    assert code == 0
    doc = json.loads(export.read_text(encoding="utf-8"))
    assert (
        doc["format"] == "tierclaw-memory-export" and doc["version"] == 1 and doc["owner"] == "console:local"
    )
    assert len(doc["memories"]) == 4  # archived ones included
    archived = [m for m in doc["memories"] if m["is_archived"]]
    assert {m["content"] for m in archived} == {
        "User prefers dark mode in every editor",
        "Deploy target is fly.io",
    }
    assert all("refs" in m and "created_at" in m for m in doc["memories"])

    code, md, _ = mem(capsys, db, "export", "--format", "md")
    assert code == 0 and "## Tier 1" in md and "## Tier 2" in md and "### tierclaw" in md
    assert md.index("## Tier 1") < md.index("## Tier 2")

    other = tmp_path / "b.db"
    code, out, _ = mem(capsys, other, "import", str(export))
    assert code == 0 and "2 imported" in out and "2 archived skipped" in out
    after_first = _stats(capsys, other)
    code, out, _ = mem(capsys, other, "import", str(export))
    assert code == 0 and "0 imported, 2 already present" in out
    assert _stats(capsys, other) == after_first
    assert (after_first["tier1"], after_first["tier2"], after_first["archived"]) == ("0", "2", "0")

    stats = _stats(capsys, db)
    assert (stats["tier1"], stats["tier2"], stats["archived"]) == ("0", "2", "2")


def test_import_keeps_every_ref_events_and_owner_override(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = tmp_path / "export.json"
    src.write_text(
        json.dumps(
            {
                "format": "tierclaw-memory-export",
                "version": 1,
                "owner": "telegram:1",
                "exported_at": "2024-05-01T00:00:00Z",
                "memories": [
                    {
                        "content": "User lives in Berlin",
                        "tier": 1,
                        "category": "identity",
                        "importance": 1.0,
                        "created_at": "2024-01-02 03:04:05",
                        "refs": ["tg:1:10", "tg:1:20"],
                        "is_archived": False,
                    },
                ],
                "events": [
                    {"event_date": "2024-04-30", "summary": "讨论了迁移", "channel": "telegram"},
                    {"event_date": "2024-04-30", "summary": "讨论了迁移", "channel": "telegram"},
                ],
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    db = tmp_path / "m.db"
    code, out, _ = mem(capsys, db, "import", str(src))
    assert code == 0 and "owner telegram:1" in out
    code, out, _ = mem(capsys, db, "export", "--owner", "telegram:1")
    doc = json.loads(out)
    [m] = doc["memories"]
    assert m["refs"] == ["tg:1:10", "tg:1:20"] and m["created_at"] == "2024-01-02 03:04:05"
    assert [(e["event_date"], e["summary"]) for e in doc["events"]] == [("2024-04-30", "讨论了迁移")]

    code, out, _ = mem(capsys, db, "import", str(src), "--owner", "alice")
    assert code == 0 and "owner alice" in out
    assert _stats(capsys, db, "--owner", "alice")["tier1"] == "1"
    assert _stats(capsys, db, "--all-owners")["owners"] == "2"


def test_owner_isolation(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    assert mem(capsys, db, "add", "Alice secret project codename Falcon", "--owner", "alice")[0] == 0
    code, out, _ = mem(capsys, db, "list", "--owner", "console:local")
    assert code == 0 and "Falcon" not in out
    code, out, _ = mem(capsys, db, "search", "Falcon codename", "--owner", "bob")
    assert "Falcon" not in out
    code, out, _ = mem(capsys, db, "list", "--owner", "alice")
    assert "Falcon" in out
    code, out, err = mem(capsys, db, "forget", "1", "--owner", "bob")
    assert code == 2 and "no memory #1" in err
    code, out, _ = mem(capsys, db, "export", "--owner", "bob")
    assert json.loads(out)["memories"] == []


def test_env_default_db(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv("TIERCLAW_MEMORY_DB", str(db))
    assert run(capsys, "memory", "add", "from the environment")[0] == 0
    assert db.exists()


@pytest.mark.parametrize(
    "command", ["stats", "list", "export", "forget 1", "edit 1 --content x", "search foo"]
)
def test_missing_db_is_a_message_not_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    db = tmp_path / "sub" / "missing.db"
    name, *rest = command.split()
    code, out, err = mem(capsys, db, name, *rest)
    assert code == 2
    assert err.strip() == (
        f"error: memory database not found: {db} (run tierclaw memory add, or point --db at an existing file)"
    )
    assert "Traceback" not in err + out
    assert not db.exists() and not db.parent.exists()


def test_corrupt_db(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "corrupt.db"
    db.write_bytes(b"not a database" * 100)
    for argv in (["stats"], ["add", "hello there"], ["list"]):
        code, _, err = mem(capsys, db, *argv)
        assert code == 2 and "not a usable memory database" in err and "Traceback" not in err
    assert db.read_bytes() == b"not a database" * 100


def test_bad_values_and_unknown_ids(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "v.db"
    code, _, err = mem(capsys, db, "add", "something", "--category", "nonsense")
    assert code == 2 and "category must be one of" in err and "Traceback" not in err
    code, _, err = mem(capsys, db, "add", "   ")
    assert code == 2 and "non-empty" in err
    code, _, err = mem(capsys, db, "add", "something", "--importance", "3")
    assert code == 2 and "importance" in err
    code, _, err = mem(capsys, db, "add", "something", "--subject", "x")
    assert code == 2 and "--predicate" in err
    assert not db.exists()  # bad values are refused before the database is created
    assert mem(capsys, db, "add", "a real memory about tea")[0] == 0
    for argv in (["edit", "42", "--content", "x"], ["forget", "42"], ["forget", "42", "--purge", "--yes"]):
        code, out, err = mem(capsys, db, *argv)
        assert code == 2 and "no memory #42" in err and "Traceback" not in err + out
    code, _, err = mem(capsys, db, "edit", "1", "--category", "nonsense")
    assert code == 2 and "category must be one of" in err
    code, _, err = mem(capsys, db, "edit", "1")
    assert code == 2 and "nothing to change" in err


def test_import_rejects_wrong_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else", "version": 1, "memories": []}', encoding="utf-8")
    code, _, err = mem(capsys, db, "import", str(bad))
    assert code == 2 and "not a tierclaw memory export" in err
    bad.write_text("not json at all", encoding="utf-8")
    code, _, err = mem(capsys, db, "import", str(bad))
    assert code == 2 and "not a tierclaw memory export" in err and "Traceback" not in err
    code, _, err = mem(capsys, db, "import", str(tmp_path / "nope.json"))
    assert code == 2 and "not found" in err
    assert not db.exists()


def test_forget_purge(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "p.db"
    first = _id(mem(capsys, db, "add", "temporary note about a bug")[1])
    second = _id(mem(capsys, db, "add", "another note on the deploy")[1])

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # EOF: the answer is no
    code, out, _ = mem(capsys, db, "forget", str(first), "--purge")
    assert code == 1 and "purged" not in out
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert mem(capsys, db, "forget", str(first), "--purge")[0] == 1
    assert _stats(capsys, db)["tier2"] == "2"

    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    code, out, _ = mem(capsys, db, "forget", str(first), "--purge")
    assert (code, out.strip()) == (0, f"purged #{first}")
    code, out, _ = mem(capsys, db, "forget", str(second), "--purge", "--yes")
    assert (code, out.strip()) == (0, f"purged #{second}")
    stats = _stats(capsys, db)
    assert (stats["tier2"], stats["archived"]) == ("0", "0")
    code, out, _ = mem(capsys, db, "list", "--archived")
    assert out.strip() == "no memories"


def test_forget_then_restore(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    note = _id(mem(capsys, db, "add", "The staging password rotates monthly")[1])
    assert mem(capsys, db, "forget", str(note))[:2] == (0, f"archived #{note}\n")
    assert "staging" not in mem(capsys, db, "search", "staging password")[1]
    code, out, _ = mem(capsys, db, "restore", str(note))
    assert (code, out.strip()) == (0, f"restored #{note}")
    assert "staging" in mem(capsys, db, "search", "staging password")[1]
    code, _, err = mem(capsys, db, "restore", str(note))
    assert code == 2 and "is not archived" in err
    code, _, err = mem(capsys, db, "restore", "999")
    assert code == 2 and "no memory #999" in err


def test_migrate_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "MEMORY.md").write_text("# Me\n- Name: 小明\n", encoding="utf-8")
    (ws / "memory" / "2024-05-01.md").write_text("shipped\n", encoding="utf-8")
    db = tmp_path / "m.db"
    code, out, _ = mem(capsys, db, "migrate", "--workspace", str(ws))
    assert code == 0 and "1 imported" in out and "events:   1 imported" in out
    code, out, _ = mem(capsys, db, "migrate", "--workspace", str(ws))
    assert code == 0 and "0 imported, 1 already present" in out
    code, _, err = mem(capsys, tmp_path / "n.db", "migrate", "--workspace", str(tmp_path / "nope"))
    assert code == 2 and "no file memory" in err and not (tmp_path / "n.db").exists()


def test_table_widths_are_cjk_aware() -> None:
    assert display_width("abc") == 3 and display_width("小明") == 4 and display_width("ｔ") == 2
    cut = truncate("数据库使用全文索引", 9)
    assert cut.endswith("…") and display_width(cut) <= 9
    table = render_table(("id", "content"), [(1, "中" * 200), (22, "short")], max_width=40)
    lines = table.splitlines()
    assert all(display_width(line) <= 40 for line in lines)
    assert lines[2].endswith("…") and lines[3].endswith("short")
    # columns line up: the content column starts at the same display offset on every row
    assert {display_width(line.split("中")[0]) for line in lines[2:3]} == {display_width("id  ")}


def test_subprocess_missing_db(tmp_path: Path) -> None:
    db = tmp_path / "missing.db"
    proc = subprocess.run(
        [str(TIERCLAW), "memory", "stats", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
    )
    assert proc.returncode == 2
    assert MISSING_DB_HINT in proc.stderr and "Traceback" not in proc.stderr
    assert not db.exists()


def test_bare_tierclaw_says_how_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    """With no subcommand the user sees the commands and how to start and configure, exit 0."""
    from gateway.cli import main

    assert main([]) == 0
    out = capsys.readouterr().out
    assert "tierclaw chat" in out and "tierclaw onboard" in out
    assert "TIERCLAW_PROVIDER_API_KEY" in out


def test_list_fits_the_terminal_width(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "w.db"
    long_zh = "用户在柏林工作，" * 20
    assert mem(capsys, db, "add", long_zh, "--project", "tierclaw")[0] == 0
    assert mem(capsys, db, "add", "short note")[0] == 0
    monkeypatch.setenv("COLUMNS", "70")
    code, out, _ = mem(capsys, db, "list")
    assert code == 0
    lines = out.splitlines()
    assert all(display_width(line) <= 70 for line in lines)
    zh_line = next(line for line in lines if "用户" in line)
    assert zh_line.endswith("…") and "short note" in out
    # the content column starts at the same display column on every row
    starts = {display_width(line[: line.index(c)]) for line, c in ((zh_line, "用"), (lines[0], "content"))}
    assert len(starts) == 1


def test_search_ranks_by_meaning_like_the_assistant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Default (local) embeddings: `memory add` stores a vector, `memory search` finds by meaning."""
    monkeypatch.setenv("HOME", str(tmp_path))  # no user config file: embedded defaults
    db = tmp_path / "m.db"
    assert mem(capsys, db, "add", "Adopted a golden retriever puppy last spring")[0] == 0
    assert mem(capsys, db, "add", "Works as a nurse at the city hospital")[0] == 0
    code, out, _ = mem(capsys, db, "search", "what pet do I have?")
    assert code == 0 and "golden retriever" in out
    monkeypatch.setenv("TIERCLAW_EMBEDDING_PROVIDER", "none")  # keyword search alone has no shared word
    code, out, _ = mem(capsys, db, "search", "what pet do I have?")
    assert "golden retriever" not in out


def _buffer_turns(db: Path, turns: list[tuple[str, str]]) -> None:
    """Leave (owner, text) user turns in the extraction buffer, as a chat that ended would."""
    import asyncio

    from memory.engine import MemoryEngine
    from memory.pipeline.buffer import ExtractionBuffer

    async def go() -> None:
        engine = await MemoryEngine.open(db)
        try:
            buffer = ExtractionBuffer(engine.store.buffer)
            for owner, text in turns:
                channel, _, sender = owner.partition(":")
                await buffer.append(
                    owner, channel=channel, chat_id=sender, sender_id=sender, role="user", content=text
                )
        finally:
            await engine.close()

    asyncio.run(go())


def test_flush_extracts_every_buffered_turn_now(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no config: the offline memory model
    db = tmp_path / "m.db"
    _buffer_turns(
        db,
        [
            ("telegram:1", "I live in Lyon and work as a nurse"),
            ("telegram:2", "My dog is called Biscuit"),
            ("telegram:2", "hello"),
        ],
    )
    code, out, err = mem(capsys, db, "flush", "--owner", "telegram:2")
    assert code == 0, err
    assert "flushed 2 messages into 1 memory" in out
    assert "telegram:2: 2 messages -> 1 memory" in err
    assert _stats(capsys, db, "--all-owners")["buffered_turns"] == "1"
    code, out, err = mem(capsys, db, "flush", "--all")
    assert code == 0, err
    assert "flushed 1 message into 2 memories" in out and "telegram:1:" in err
    assert _stats(capsys, db, "--all-owners")["buffered_turns"] == "0"
    code, out, _ = mem(capsys, db, "flush")
    assert code == 0 and "nothing to flush" in out


def test_flush_refuses_owner_and_all_together(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    db = tmp_path / "m.db"
    _buffer_turns(db, [("telegram:1", "I play the cello")])
    code, _, err = mem(capsys, db, "flush", "--owner", "telegram:1", "--all")
    assert code == 2 and "either --owner OWNER or --all" in err
    assert _stats(capsys, db, "--all-owners")["buffered_turns"] == "1"


def test_export_and_import_carry_the_scratchpad_and_what_was_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, copy = tmp_path / "a.db", tmp_path / "b.db"

    async def fill() -> None:
        async with await MemoryEngine.open(db) as engine:
            await engine.write("user:ann", Fact("Ann lives in Porto"))
            await engine.scratchpad.put("user:ann", "- focus: the Porto move")
            for role, text in (("user", "Which van did we book?"), ("assistant", "The 7 m³ one, Friday.")):
                await engine.conversation.record(
                    "user:ann", channel="telegram", chat_id="9", role=role, content=text
                )

    asyncio.run(fill())
    export = tmp_path / "ann.json"
    code, out, _ = mem(capsys, db, "export", "-o", str(export))
    assert code == 0 and "1 memory, 0 events and 2 turns" in out
    doc = json.loads(export.read_text(encoding="utf-8"))
    assert doc["scratchpad"]["content"] == "- focus: the Porto move"
    assert [t["role"] for t in doc["turns"]] == ["user", "assistant"]
    code, md, _ = mem(capsys, db, "export", "--format", "md")
    assert "## Scratchpad" in md and "(telegram) user: Which van did we book?" in md

    code, out, _ = mem(capsys, copy, "import", str(export))
    assert code == 0 and "scratchpad imported; turns 2 imported" in out
    code, out, _ = mem(capsys, copy, "import", str(export))  # again: nothing doubles
    assert "scratchpad kept" in out and "2 turns skipped" in out

    async def check() -> None:
        async with await MemoryEngine.open(copy) as engine:
            assert (await engine.scratchpad.get("user:ann")).content == "- focus: the Porto move"
            # the turn that says "van" as typed comes first, its answer around it (issue 37, item 6)
            (hit,) = await engine.conversation.search("user:ann", "van")
            assert [t.content for t in hit.context] == ["Which van did we book?", "The 7 m³ one, Friday."]
            assert hit.turn.content == "Which van did we book?"
            assert await engine.conversation.count("user:ann") == 2

    asyncio.run(check())
    doc["turns"].append(
        {"channel": "x", "chat_id": "1", "role": "system", "content": "?", "created_at": "2026-01-01"}
    )
    export.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = mem(capsys, tmp_path / "c.db", "import", str(export))
    assert code == 2 and "turn record 3" in err


def test_add_without_a_category_uses_the_classifier(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "c.db"
    texts = ("My dog is called Biscuit", "我对青霉素过敏", "I love spicy Thai food")
    texts += ("We shipped the beta last week",)
    for text in texts:
        code, out, _ = mem(capsys, db, "add", text, "--owner", "alice")
        assert code == 0 and out.startswith("added #"), out
    code, out, _ = mem(capsys, db, "list", "--owner", "alice", "--json")
    assert code == 0
    rows = json.loads(out)
    categories = {r["content"]: r["category"] for r in (rows["memories"] if isinstance(rows, dict) else rows)}
    # The category guide (memory/text/category.py), as extraction files it (the head with the configured
    # embedder: memory/head/filing.py): a pet is one of the people and animals around the person (event),
    # an allergy is health (config), what happened is an event.
    assert categories == {
        "My dog is called Biscuit": "event",
        "我对青霉素过敏": "config",
        "I love spicy Thai food": "config",
        "We shipped the beta last week": "event",
    }
