"""``tierclaw memory attachments``: the voice notes, photos and files kept for an owner — listed newest
first, searched the way the assistant finds them (``--search``), one saved to a file (``--save ID -o
FILE``: 0600), or forgotten for good with its bytes (``--forget ID``)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from gateway.cli.memory.common import CliError, say
from gateway.cli.memory.listing import print_json
from gateway.cli.memory.table import render_table
from memory.engine import MemoryEngine
from memory.files.private import write_private
from memory.store.attachments import AttachmentRow


async def run_attachments(engine: MemoryEngine, args: argparse.Namespace) -> int:
    log = engine.attachments
    if args.forget:
        if not await log.forget(args.owner, args.forget):
            raise CliError(f"{args.owner} has no attachment {args.forget}")
        said = f"forgot attachment {args.forget} of {args.owner} (its file deleted)"
        say(args, said, {"id": args.forget, "owner": args.owner, "action": "forgotten"})
        return 0
    if args.save:
        return await _save(engine, args)
    if args.search:
        rows = [hit.row for hit in await log.search(args.owner, args.search, k=args.limit)]
    else:
        rows = await log.list(args.owner, kind=args.kind, limit=args.limit)
    kept = await log.has_bytes(args.owner, [r.id for r in rows])
    if args.json:
        print_json([{**_fields(r), "file_kept": r.id in kept} for r in rows])
        return 0
    if not rows:
        print("no attachments")
        return 0
    table = [
        (
            r.id,
            r.created_at[:16],
            r.direction,
            r.kind,
            r.file_name or "-",
            _size(r.size),
            r.status,
            "yes" if r.id in kept else "no",
            _what(r),
        )
        for r in rows
    ]
    print(
        render_table(("id", "when", "dir", "kind", "name", "size", "status", "file", "what it holds"), table)
    )
    return 0


async def _save(engine: MemoryEngine, args: argparse.Namespace) -> int:
    row = await engine.attachments.get(args.owner, args.save)
    if row is None:
        raise CliError(f"{args.owner} has no attachment {args.save}")
    data = await engine.attachments.file_bytes(args.owner, args.save)
    if data is None:
        raise CliError(f"attachment {args.save}'s file was not kept (only what was heard, seen or read)")
    target = Path(args.output or Path(row.file_name).name or f"attachment-{row.id}")
    write_private(target.absolute(), data)
    say(args, f"wrote {len(data)} bytes to {target}", {"id": row.id, "file": str(target), "bytes": len(data)})
    return 0


def _fields(row: AttachmentRow) -> dict[str, object]:
    return dataclasses.asdict(row)


def _what(row: AttachmentRow) -> str:
    text = row.transcription or row.description or row.caption or row.extracted_text
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59] + "…"


def _size(size: int) -> str:
    return (
        f"{size / 1048576:.1f} MB"
        if size >= 1048576
        else f"{size // 1024} KB"
        if size >= 1024
        else f"{size} B"
    )
