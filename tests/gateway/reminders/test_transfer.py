"""Reminders travel with a person's export (``tierclaw memory export``/``import``, JSON and Markdown) and with
``tierclaw memory copy`` (README "Reminders")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gateway.cli import main
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.store.copying import TABLES
from memory.store.reminders import ReminderRow
from tests.gateway.reminders.support import add, ago, due_row

OWNER = "telegram:42"


async def seed(db: Path) -> None:
    engine = await MemoryEngine.open(db)
    try:
        await engine.write(OWNER, Fact(content="I live in Leeds"))
        await add(
            engine, due_row(OWNER, "telegram", "42", "call the dentist", ago(-3600), zone="Europe/London")
        )
        await add(engine, due_row(OWNER, "telegram", "42", "take vitamins", ago(-60), repeat="daily"))
        await engine.store.reminders.set_zone(OWNER, "Europe/London", "2026-01-01 00:00:00")
    finally:
        await engine.close()


async def reminders_in(db: Path) -> tuple[list[ReminderRow], str | None]:
    engine = await MemoryEngine.open(db)
    try:
        return await engine.store.reminders.of_owner(OWNER), await engine.store.reminders.zone(OWNER)
    finally:
        await engine.close()


def test_export_and_import_carry_reminders_and_the_zone_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target, out = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "alice.json"
    asyncio.run(seed(source))
    assert main(["memory", "export", "--db", str(source), "--owner", OWNER, "-o", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["timezone"] == "Europe/London"
    assert {r["text"] for r in doc["reminders"]} == {"call the dentist", "take vitamins"}
    assert main(["memory", "import", str(out), "--db", str(target)]) == 0
    assert "reminders 2 imported" in capsys.readouterr().out
    assert main(["memory", "import", str(out), "--db", str(target)]) == 0
    assert "reminders 0 imported, 2 already present" in capsys.readouterr().out
    rows, zone = asyncio.run(reminders_in(target))
    assert sorted(r.text for r in rows) == ["call the dentist", "take vitamins"]
    assert {r.repeat for r in rows} == {"", "daily"} and zone == "Europe/London"
    md = tmp_path / "a.md"
    assert (
        main(["memory", "export", "--db", str(source), "--owner", OWNER, "--format", "md", "-o", str(md)])
        == 0
    )
    assert "## Reminders" in md.read_text(encoding="utf-8")


def test_copy_carries_the_reminder_tables() -> None:
    assert {"reminders", "person_zones"} <= {t.name for t in TABLES}
