"""``tierclaw memory copy --from SRC --to DST``: a whole memory database into another, either backend.

SRC and DST are SQLite file paths or ``postgresql://`` URLs (README.md, "Running on PostgreSQL"). The copy
goes in batches with a progress bar, can be interrupted (Ctrl-C) and resumed with ``--resume``, and
checks every table's row count at the end. A destination that already holds data is refused unless
``--resume`` says this is the same copy going on. The work itself is ``memory/store/copying.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from gateway.cli.memory.common import fail, say

DEFAULT_BATCH = 1000


def add_copy_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``memory copy`` (it opens two databases, so it does not take ``--db``)."""
    text = "copy a whole memory database into another (SQLite file or postgresql:// URL, either way)"
    p = sub.add_parser("copy", help=text, description=text)
    p.add_argument("--from", dest="source", required=True, metavar="SRC", help="file path or URL to copy")
    p.add_argument("--to", dest="target", required=True, metavar="DST", help="file path or URL to fill")
    p.add_argument("--resume", action="store_true", help="go on with an interrupted copy into DST")
    p.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="N", help="rows per transaction")
    p.add_argument("--json", action="store_true", help="machine-readable output (JSON)")
    p.set_defaults(func=run_copy)


def _location(text: str) -> str:
    from memory.store.urls import is_database_url

    return text if is_database_url(text) else str(Path(text).expanduser())


def run_copy(args: argparse.Namespace) -> int:
    """Entry point: 0 when every table's count matches, 2 for a bad database or argument, 130 on Ctrl-C."""
    from memory.store.errors import MemoryDatabaseError

    if args.batch < 1:
        return fail("--batch must be at least 1")
    source, target = _location(args.source), _location(args.target)
    if source == target:
        return fail("--from and --to name the same database")
    try:
        return asyncio.run(_copy(source, target, args))
    except MemoryDatabaseError as exc:
        return fail(str(exc))
    except ValueError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        print("interrupted: run the same command with --resume to go on", file=sys.stderr)
        return 130


async def _copy(source: str, target: str, args: argparse.Namespace) -> int:
    from gateway.cli.memory.progress import ProgressBar
    from memory.store.copying import HasDatabase, copy_all, row_counts
    from memory.store.open import open_store
    from memory.store.urls import masked

    src = await open_store(source, create=False, warm_text=False)
    try:
        dst = await open_store(target, warm_text=False)
    except BaseException:
        await src.close()
        raise
    try:
        from_db: HasDatabase = src  # type: ignore[assignment]  # both stores expose their database
        to_db: HasDatabase = dst  # type: ignore[assignment]
        held = await row_counts(to_db.db)
        if any(held.values()) and not args.resume:
            return fail(
                f"{masked(target)} already holds data ({sum(held.values())} rows): copy into an empty "
                "database, or pass --resume to go on with an interrupted copy"
            )
        totals = await row_counts(from_db.db)
        grand = sum(totals.values())
        done: dict[str, int] = {}
        with ProgressBar("copying", "rows") as bar:

            def progress(table: str, rows: int, _total: int) -> None:
                done[table] = rows
                bar(sum(done.values()), grand)

            await copy_all(from_db, to_db, batch=args.batch, progress=progress)
        copied = await row_counts(to_db.db)
        wrong = [f"{t} {copied[t]} of {n}" for t, n in totals.items() if copied[t] != n]
        if wrong:
            return fail("row counts differ after the copy: " + ", ".join(wrong), 1)
        text = (
            f"copied {grand} rows ({totals['memories']} memories, {totals['daily_events']} events, "
            f"{totals['conversation_turns']} turns) from {masked(source)} to {masked(target)}; "
            "counts verified"
        )
        data = {"from": masked(source), "to": masked(target), "rows": grand, "memories": totals["memories"]}
        extra = {"events": totals["daily_events"], "turns": totals["conversation_turns"], "tables": totals}
        say(args, text, {**data, **extra, "verified": True})
        return 0
    finally:
        await src.close()
        await dst.close()
