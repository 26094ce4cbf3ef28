"""`tierclaw memory attachments`: list (table and --json), --search, --save ID -o FILE (0600), --forget ID,
and the JSON export listing them — in-process through gateway.cli.main."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import pytest

from gateway.cli import main
from localservers.sample_media import pdf_bytes
from memory.attachments import Understanding
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.store.attachments import NewAttachment

OWNER = "telegram:42"


@pytest.fixture(autouse=True)
def _fixed_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")


def seed(db: Path) -> tuple[int, int, bytes]:
    pdf = pdf_bytes("Lease agreement")

    async def fill() -> tuple[int, int]:
        engine = await MemoryEngine.open(db)
        try:
            await engine.write(OWNER, Fact(content="I rent a flat in Lyon", category="identity"))
            log = engine.attachments
            voice, _ = await log.keep(OWNER, NewAttachment("in", "telegram", "42", "1", 0, "voice"))
            lease, _ = await log.keep(
                OWNER, NewAttachment("in", "telegram", "42", "2", 0, "document", file_name="lease.pdf")
            )
            for aid, found in (
                (voice, Understanding("understood", transcription="call the plumber on Friday")),
                (lease, Understanding("understood", description="a lease", mime="application/pdf", data=pdf)),
            ):
                row = await log.get(OWNER, aid)
                assert row is not None
                await log.understood(OWNER, row, found)
            return voice, lease
        finally:
            await engine.close()

    voice, lease = asyncio.run(fill())
    return voice, lease, pdf


def run(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["memory", "attachments", "--db", str(db), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_search_save_forget_and_export(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    voice, lease, pdf = seed(db)
    code, out, _ = run(capsys, db)
    assert code == 0 and "lease.pdf" in out and "call the plumber on Friday" in out
    code, out, _ = run(capsys, db, "--json")
    listed = {row["id"]: row for row in json.loads(out)}
    assert listed[lease]["file_kept"] and not listed[voice]["file_kept"]
    code, out, _ = run(capsys, db, "--search", "plumber", "--json")
    assert [row["id"] for row in json.loads(out)] == [voice]
    target = tmp_path / "saved.pdf"
    code, out, _ = run(capsys, db, "--save", str(lease), "-o", str(target))
    assert code == 0 and target.read_bytes() == pdf and stat.S_IMODE(target.stat().st_mode) == 0o600
    code, _, err = run(capsys, db, "--save", str(voice))
    assert code == 2 and "was not kept" in err
    assert main(["memory", "export", "--db", str(db), "-o", str(tmp_path / "x.json")]) == 0
    exported = json.loads((tmp_path / "x.json").read_text())
    assert {a["id"] for a in exported["attachments"]} == {voice, lease}
    code, out, _ = run(capsys, db, "--forget", str(lease))
    assert code == 0 and "forgot attachment" in out
    code, _, err = run(capsys, db, "--forget", str(lease))
    assert code == 2 and "no attachment" in err
    code, out, _ = run(capsys, db, "--json")
    assert [row["id"] for row in json.loads(out)] == [voice]
