"""``tierclaw memory copy``: SQLite -> PostgreSQL -> SQLite gives the same export of every owner, refuses
a destination holding data unless --resume, and a resumed copy ends with the same counts."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.memory_export import export_memory
from memory.engine import MemoryEngine
from memory.records import Episode, Fact
from memory.store import copying
from memory.store.open import open_store

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


async def _fill(path: Path) -> None:
    engine = await MemoryEngine.open(path)
    try:
        for owner in ("alice", "张三"):
            await engine.write(owner, Fact("Lives in Lyon", subject=owner, predicate="lives_in"), NOW)
            await engine.write(owner, Fact("Lives in Paris", subject=owner, predicate="lives_in"), NOW)
            await engine.write(owner, Fact("喜欢喝龙井茶 🍵", source_ref="telegram:9"), NOW)
            await engine.write(
                owner, Fact("喜欢喝龙井茶 🍵", source_ref="telegram:10"), NOW
            )  # merged: 2 refs
            event = await engine.events.add(owner, "Planned a trip", episode=Episode(goal="trip"))
            await engine.events.link_facts(owner, event, [1, 2])
            await engine.conversation.record(
                owner, channel="telegram", chat_id="1", role="user", content="hi"
            )
            await engine.scratchpad.put(owner, "# Focus\n- trip")
        await engine.store.inbox.add("telegram", "1", "u1", "{}", 1)
        await engine.store.jobs.record("decay", "2026-03-01 12:00:00", "ok")
        await engine.store.seen.add("feishu", [("event", "ev_1"), ("message", "om_1")], "2026-03-01 12:00:00")
        await engine.store.vectors.cache("m", [("h", 1, b"\x00\x00\x80?")], [], "2026-03-01 12:00:00")
    finally:
        await engine.close()


async def _exports(target: str) -> dict[str, object]:
    engine = await MemoryEngine.open(target, create=False)
    try:
        out = {}
        for owner in await engine.owners():
            doc = json.loads((await export_memory(engine, owner, "json")).text)
            doc.pop("exported_at")
            out[owner] = doc
        return out
    finally:
        await engine.close()


def test_copy_there_and_back_keeps_every_owners_export(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    original, back = tmp_path / "m.db", tmp_path / "back.db"
    asyncio.run(_fill(original))
    assert main(["memory", "copy", "--from", str(original), "--to", postgres_url]) == 0
    assert "counts verified" in capsys.readouterr().out
    assert main(["memory", "copy", "--from", postgres_url, "--to", str(back)]) == 0
    first = asyncio.run(_exports(str(original)))
    assert set(first) == {"alice", "张三"}
    assert asyncio.run(_exports(postgres_url)) == first
    assert asyncio.run(_exports(str(back))) == first
    assert asyncio.run(_add_after_copy(postgres_url)) is not None
    assert asyncio.run(_seen_marks(str(back))) == 2  # Feishu's dedup marks went there and back


async def _seen_marks(target: str) -> int:
    engine = await MemoryEngine.open(target, create=False)
    try:
        return await engine.store.seen.count("feishu")
    finally:
        await engine.close()


async def _add_after_copy(url: str) -> int | None:
    """New rows after a copy get new ids (the sequences moved past the copied ones)."""
    store = await open_store(url)
    try:
        return await store.inbox.add("telegram", "1", "u2", "{}", 2)
    finally:
        await store.close()


def _stop_after_first_batch(table: str, done: int, total: int) -> None:
    raise KeyboardInterrupt  # as Ctrl-C between two batches


async def _interrupted_copy(original: Path, postgres_url: str) -> None:
    source = await open_store(str(original))
    target = await open_store(postgres_url)
    try:
        with pytest.raises(KeyboardInterrupt):
            # An interrupted copy: one batch of the first table went over.
            await copying.copy_all(source, target, batch=2, progress=_stop_after_first_batch)  # type: ignore[arg-type]
    finally:
        await source.close()
        await target.close()


def test_a_destination_with_data_is_refused_unless_resumed(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    original = tmp_path / "m.db"
    asyncio.run(_fill(original))
    asyncio.run(_interrupted_copy(original, postgres_url))
    assert main(["memory", "copy", "--from", str(original), "--to", postgres_url]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["memory", "copy", "--from", str(original), "--to", postgres_url, "--resume"]) == 0
    assert asyncio.run(_exports(postgres_url)) == asyncio.run(_exports(str(original)))


def test_a_missing_source_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "copy", "--from", str(tmp_path / "none.db"), "--to", str(tmp_path / "x.db")]) == 2
    assert "none.db" in capsys.readouterr().err
