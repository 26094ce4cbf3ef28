"""``python -m bench.reminders``: the command line and the report (bench/reminders/__init__.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.report import emit_json

TRIAL_KEYS = ("delivered", "twice", "lost", "late_s", "failed_reported")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.reminders", description="Reminders that arrive (issue 36)."
    )
    parser.add_argument(
        "--database", default="auto", help="auto (a throwaway PostgreSQL cluster), postgresql://…, or none"
    )
    parser.add_argument("--gateways", type=int, default=3)
    parser.add_argument("--reminders", type=int, default=1000)
    parser.add_argument("--over", type=float, default=60.0, help="seconds the due times are spread over")
    parser.add_argument(
        "--kill-at", type=float, default=25.0, help="seconds into the window; negative: no kill"
    )
    parser.add_argument(
        "--restart-after", type=float, default=5.0, help="seconds the killed gateway stays down"
    )
    parser.add_argument("--no-sqlite", action="store_true", help="skip the single-gateway SQLite trial")
    parser.add_argument("--parse-only", action="store_true", help="only the parsing accuracy")
    parser.add_argument("--data", help="the phrasings (default bench/data/reminder_phrasings.json)")
    parser.add_argument("--workdir", help="keep the gateways' configs and logs here")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.gateways < 1 or args.reminders < 1 or args.over <= 0:
        parser.error("--gateways and --reminders must be at least 1, --over positive")
    return args


async def trials(args: argparse.Namespace, database: str | None, base: Path) -> dict[str, Any]:
    from bench.reminders.delivery import DeliveryTrial, run_delivery

    kill = None if args.kill_at < 0 else args.kill_at
    out: dict[str, Any] = {}
    if database is not None:
        from bench.database_option import scratch_memory

        (base / "postgresql").mkdir(parents=True, exist_ok=True)
        with scratch_memory(database) as url:
            trial = DeliveryTrial(
                url, args.gateways, args.reminders, args.over, kill_at=kill, restart_after=args.restart_after
            )
            out["postgresql"] = await run_delivery(trial, base / "postgresql")
    if not args.no_sqlite:
        (base / "sqlite").mkdir(parents=True, exist_ok=True)
        trial = DeliveryTrial(
            str(base / "sqlite" / "memory.db"),
            1,
            args.reminders,
            args.over,
            kill_at=kill,
            restart_after=args.restart_after,
        )
        out["sqlite"] = await run_delivery(trial, base / "sqlite")
    return out


def report(parsing: dict[str, Any], runs: dict[str, Any]) -> dict[str, Any]:
    """The JSON line: the PostgreSQL trial's keys at the top (the SQLite one's when it is the only one)."""
    main_run = runs.get("postgresql") or runs.get("sqlite") or {}
    result: dict[str, Any] = {"parsed": parsing["parsed"]}
    result.update({k: main_run.get(k) for k in TRIAL_KEYS})
    result.update({k: parsing[k] for k in ("parsed_time", "phrasings", "parsed_by_kind")})
    result["misses"] = parsing["misses"]
    result["trials"] = runs
    if "sqlite" in runs:
        result["sqlite"] = {k: runs["sqlite"].get(k) for k in TRIAL_KEYS}
    return result


def _print(result: dict[str, Any]) -> None:
    print(f"parsed: {result['parsed']} (time only {result['parsed_time']}; {result['phrasings']} phrasings)")
    for m in result["misses"]:
        got = f"{m['got_at']} {m['got_repeat']} {m['got_text']!r}"
        expected = f"{m['at']} {m['repeat']} {m['text']!r}"
        print(f"  miss [{m['lang']} {m['kind']}] {m['said']!r}: {got}, expected {expected}")
    for name, r in result["trials"].items():
        late = r["late_s"]
        print(
            f"{name}: {r['gateways']} gateway(s), {r['reminders']} reminders over {r['over_s']} s: "
            f"delivered {r['delivered']}, twice {r['twice']}, lost {r['lost']}, "
            f"late p50 {late['p50']} s p95 {late['p95']} s max {late['max']} s; "
            f"failed reported {r['failed_reported']} (log lines {r['failed_log_lines']}); "
            f"load {r['load_before']} → {r['load_after']}"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    from bench.reminders.phrasings import measure

    if args.data and not Path(args.data).exists():
        print(f"bench.reminders: phrasings not found: {args.data}", file=sys.stderr)
        return 1
    parsing = measure(Path(args.data)) if args.data else measure()
    runs: dict[str, Any] = {}
    if not args.parse_only:
        with contextlib.ExitStack() as stack:
            database: str | None = None if args.database == "none" else args.database
            if database == "auto":
                from bench.replicas.cluster import NoServer, throwaway_server

                try:
                    database = stack.enter_context(throwaway_server())
                except NoServer as exc:
                    print(f"bench.reminders: --database auto: {exc}", file=sys.stderr)
                    return 2
            base = Path(
                args.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-reminders-"))
            )
            runs = asyncio.run(trials(args, database, base))
    result = report(parsing, runs)
    emit_json(result) if args.json else _print(result)
    return 0
