"""Migration of file memory into SQLite: Tier 1 from MEMORY.md, Tier 3 from daily files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memory.engine import MemoryEngine
from memory.files.migrate import MigrationReport, migrate_files

OWNER = "alice"

MEMORY_MD = """# About me

- Name: Alice
* Lives in Berlin
1. Prefers 简体中文 replies

## Work
Works on tierclaw
---
"""


def _workspace(tmp_path: Path) -> Path:
    d = tmp_path / "ws" / "memory"
    d.mkdir(parents=True)
    (d / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (d / "2024-05-01.md").write_text("Discussed the migration plan.\n", encoding="utf-8")
    (d / "2024-05-02.md").write_text("今天修好了 FTS 查询。\n", encoding="utf-8")
    (d / "2024-05-03.md").write_text("\n\n", encoding="utf-8")  # empty: skipped
    (d / "notes.md").write_text("not a daily file\n", encoding="utf-8")
    return tmp_path / "ws"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_memory_md_lines_become_tier1_with_refs(engine: MemoryEngine, tmp_path: Path) -> None:
    report = await migrate_files(engine, _workspace(tmp_path), OWNER)

    assert report.memories_imported == 4 and report.memories_present == 0
    profile = await engine.list(OWNER, tier=1)
    by_content = {m.content: m for m in profile}
    assert set(by_content) == {
        "Name: Alice",
        "Lives in Berlin",
        "Prefers 简体中文 replies",
        "Works on tierclaw",
    }
    for m in profile:
        assert (m.tier, m.project, m.topic, m.category) == (1, "_global", "_profile", "identity")
        assert m.importance == 1.0 and m.source == "migration"
    assert by_content["Name: Alice"].refs == ["MEMORY.md:3"]
    assert by_content["Lives in Berlin"].refs == ["MEMORY.md:4"]
    assert by_content["Works on tierclaw"].source_ref == "MEMORY.md:8"
    assert await engine.list(OWNER, tier=2) == []
    assert "Name: Alice" in await engine.profile_text(OWNER)


async def test_daily_files_become_tier3_events(engine: MemoryEngine, tmp_path: Path) -> None:
    report = await migrate_files(engine, _workspace(tmp_path), OWNER)

    assert report.events_imported == 2 and report.events_present == 0
    events = sorted(await engine.events.find(OWNER), key=lambda e: e.event_date)
    assert [(e.event_date, e.summary, e.channel, e.source_ref) for e in events] == [
        ("2024-05-01", "Discussed the migration plan.", "migration", "2024-05-01.md"),
        ("2024-05-02", "今天修好了 FTS 查询。", "migration", "2024-05-02.md"),
    ]
    skipped = dict(report.skipped)
    assert "2024-05-03.md" in skipped and "notes.md" in skipped


async def test_second_run_imports_nothing_and_sources_are_untouched(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    ws = _workspace(tmp_path)
    before = _snapshot(ws)
    first = await migrate_files(engine, ws, OWNER)
    stats_after_first = await engine.stats(OWNER)

    second = await migrate_files(engine, ws, OWNER)

    assert await engine.stats(OWNER) == stats_after_first
    assert stats_after_first["tier1"] == 4 and stats_after_first["tier3_events"] == 2
    assert (second.memories_imported, second.memories_present) == (0, first.memories_imported)
    assert (second.events_imported, second.events_present) == (0, first.events_imported)
    assert _snapshot(ws) == before


async def test_owners_are_separate(engine: MemoryEngine, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    await migrate_files(engine, ws, OWNER)
    report = await migrate_files(engine, ws, "bob")
    assert report.memories_imported == 4 and report.events_imported == 2
    assert (await engine.stats("bob"))["tier1"] == 4


async def test_missing_directory_is_reported_not_raised(engine: MemoryEngine, tmp_path: Path) -> None:
    report = await migrate_files(engine, tmp_path / "nowhere", OWNER)
    assert isinstance(report, MigrationReport)
    assert report.memories_imported == report.events_imported == 0
    assert report.skipped
    assert (await engine.stats(OWNER))["tier1"] == 0


async def test_one_log_line_without_content(
    engine: MemoryEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws = _workspace(tmp_path)
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        await migrate_files(engine, ws, OWNER)
    lines = [r.getMessage() for r in caplog.records if "migrat" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("[memory]")
    above_debug = " ".join(r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG)
    assert "Alice" not in above_debug and "migration plan" not in above_debug
