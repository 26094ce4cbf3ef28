"""One set of counts (memory/counts.py) shown the same by `tierclaw status`, `tierclaw memory owners`,
`tierclaw memory stats` and the memory page; plurals through one helper."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import aiohttp
import pytest

from gateway.cli import main
from gateway.dashboard.context import DashboardContext
from gateway.dashboard.server import start_dashboard
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.records import Fact

TOKEN = "test-token-0123456789"
QUIET = "telegram:9"  # only buffered messages: no memory, no summary yet


async def _fill(db: Path) -> dict[str, dict[str, int]]:
    """Alice with one memory; QUIET with three buffered messages, two of them dead letters."""
    async with await MemoryEngine.open(db) as engine:
        buffer = ExtractionBuffer(engine.store.buffer)
        for n in range(3):
            await buffer.append(
                QUIET, channel="telegram", chat_id="9", sender_id="9", role="user", content=f"hi {n}"
            )
        ids = [row[0] for row in await engine.store.buffer.oldest(QUIET, due_only=False)][:2]
        await engine.store.buffer.mark_failed(ids, 5, 60.0, True, "model said 500")
        await engine.write("alice", Fact("Alice keeps bees"))
        return {"all": await engine.stats(), QUIET: await engine.stats(QUIET)}


async def _page_row(db: Path) -> list[str]:
    """The memory page's cells for QUIET on the people page."""
    async with await MemoryEngine.open(db) as engine:
        page = await start_dashboard(
            DashboardContext(engine=engine, buffer=ExtractionBuffer(engine.store.buffer)),
            token=TOKEN,
            host="127.0.0.1",
            port=0,
        )
        try:
            jar = aiohttp.CookieJar(unsafe=True)
            async with aiohttp.ClientSession(cookie_jar=jar) as client, client.get(page.url) as resp:
                html = await resp.text()
        finally:
            await page.stop()
    row = re.search(r"telegram:9</a></th>(.*?)</tr>", html, re.S)
    assert row is not None
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_every_view_shows_the_same_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    counts = asyncio.run(_fill(db))
    assert tuple(counts["all"][k] for k in ("buffered_turns", "dead_letters", "owners")) == (1, 2, 2)
    assert tuple(counts[QUIET][k] for k in ("buffered_turns", "dead_letters", "owners")) == (1, 2, 1)

    stats = _json(capsys, "memory", "stats", "--db", str(db), "--all-owners", "--json")
    assert (stats["buffered_turns"], stats["dead_letters"], stats["owners"]) == (1, 2, 2)
    owners = {row["owner"]: row for row in _json(capsys, "memory", "owners", "--db", str(db), "--json")}
    assert (owners[QUIET]["buffered_turns"], owners[QUIET]["dead_letters"]) == (1, 2)

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"dbPath": str(db)}}), encoding="utf-8")
    memory = _json(capsys, "status", "--config", str(config), "--json")["memory"]
    assert (memory["buffered_turns"], memory["dead_letters"], memory["owners"]) == (1, 2, 2)
    assert main(["status", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "1 turn buffered · 2 dead letters" in text and "owners 2" in text

    cells = asyncio.run(_page_row(db))
    assert cells[5] == "1" and ">2</a>" in cells[6]  # buffered, dead letters


async def test_owners_count_people_with_only_buffered_messages(engine: MemoryEngine) -> None:
    buffer = ExtractionBuffer(engine.store.buffer)
    for n in range(80):
        await buffer.append(
            "user:new", channel="cli", chat_id="1", sender_id="1", role="user", content=f"m{n}"
        )
    counts = await engine.stats()
    assert (counts["owners"], counts["buffered_turns"], counts["dead_letters"]) == (1, 80, 0)
