"""``python -m bench.replicas``: the command line, the order of the trials, and the report
(bench/replicas/__init__.py has the whole description)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from bench.report import emit_json

TRIALS = ("webhook", "polling", "feishu", "stall", "skew", "race")
DESCRIPTION = (
    "Several gateways, one database: real trials of replicas that share the work (issue 29, item 5)."
)
STALENESS_MODULE = "bench.cache_staleness"  # measure_staleness(database_url) -> dict, when it exists


def database_problem(database: str, replicas: int) -> str | None:
    """Why ``--database`` cannot run this trial, or None."""
    if database == "sqlite":
        if replicas != 1:
            return (
                "--database sqlite runs one replica only (SQLite is for one process; a second gateway on "
                "the same file is refused): use --replicas 1, or a postgresql:// URL (or auto) for several"
            )
        return None
    if database != "auto" and not database.startswith(("postgresql://", "postgres://")):
        return (
            "--database must be a postgresql://USER@HOST/DB URL, auto (a throwaway cluster), or sqlite "
            f"with --replicas 1, not {database!r}"
        )
    return None


def trial_list(value: str) -> list[str]:
    """``--trials``: a comma-separated subset of webhook, polling, feishu, stall, skew, race, in the order
    given; ``none`` runs only the throughput runs."""
    if value.strip() == "none":
        return []
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in TRIALS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"expected some of {', '.join(TRIALS)} separated by commas, not {value!r}"
        )
    return list(dict.fromkeys(names))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=DESCRIPTION)
    parser.add_argument(
        "--database", required=True, help="postgresql://USER@HOST/DB, auto (a throwaway cluster), or sqlite"
    )
    parser.add_argument(
        "--trials",
        type=trial_list,
        default=list(TRIALS),
        help="e.g. webhook,polling,feishu,stall,skew,race; none: throughput only",
    )
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--messages", type=int, default=12, help="messages per chat")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model reply")
    parser.add_argument("--kill-at", type=float, default=0.4, help="share accepted before the kill")
    parser.add_argument("--no-kill", action="store_true", help="no replica is killed")
    parser.add_argument("--restart-after", type=float, default=3.0, help="seconds the killed one stays down")
    parser.add_argument(
        "--stall-for", type=float, default=35.0, help="stall trial: seconds replica 0 stays SIGSTOPped"
    )
    parser.add_argument(
        "--skew", type=float, default=25.0, help="skew trial: seconds replica 1's clock is ahead"
    )
    parser.add_argument(
        "--jobs-every", type=float, default=2.0, help="each scheduled job's period (s); 0: off"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the sending to finish")
    parser.add_argument("--idle", type=float, default=30.0, help="no answer for this long ends a trial")
    parser.add_argument("--no-throughput", action="store_true", help="skip the throughput runs")
    parser.add_argument("--workdir", help="keep the replicas' configs and logs here")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.chats < 1 or args.messages < 1 or not 0 < args.kill_at < 1:
        parser.error("--replicas, --chats and --messages must be at least 1, --kill-at between 0 and 1")
    if args.jobs_every < 0:
        parser.error("--jobs-every must be 0 (off) or a number of seconds")
    return args


@contextlib.contextmanager
def scratch(database: str, base: Path) -> Iterator[str]:
    """A fresh database for one trial: a new PostgreSQL database on the server (dropped after), or a
    SQLite file in the trial's directory."""
    if database == "sqlite":
        yield str(base / "memory.db")
        return
    from bench.database_option import scratch_memory

    with scratch_memory(database) as url:
        yield url


async def cache_staleness(database: str) -> dict[str, Any] | None:
    """The cache-staleness measure (issue 29: ≤ 1 s after another replica's write) when
    ``bench/cache_staleness.py`` exists (``measure_staleness(database_url)``), on a scratch database;
    None without it or on SQLite (one process: no other replica's write)."""
    if database == "sqlite" or importlib.util.find_spec(STALENESS_MODULE) is None:
        return None
    measure: Callable[[str], Awaitable[dict[str, Any]]] = importlib.import_module(
        STALENESS_MODULE
    ).measure_staleness
    with scratch(database, Path()) as url:
        return await measure(url)


async def run(args: argparse.Namespace, database: str) -> dict[str, Any]:
    from bench.replicas.faults import run_race, run_skew, run_stall
    from bench.replicas.feishu import run_feishu
    from bench.replicas.polling import run_polling
    from bench.replicas.trial import TrialSettings
    from bench.replicas.webhook import run_webhook

    trials = {
        "webhook": run_webhook,
        "polling": run_polling,
        "feishu": run_feishu,
        "stall": run_stall,
        "skew": run_skew,
        "race": run_race,
    }
    kill = None if args.no_kill else args.kill_at
    every = args.jobs_every or None
    common = (args.chats, args.messages, args.latency, kill, args.restart_after, args.timeout, args.idle)
    report: dict[str, Any] = {"store": "sqlite" if database == "sqlite" else "postgresql", "runs": []}
    with contextlib.ExitStack() as stack:
        tmp = Path(args.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-replicas-")))
        for mode in args.trials:
            (tmp / mode).mkdir(parents=True, exist_ok=True)
            with scratch(database, tmp / mode) as url:
                settings = TrialSettings(
                    url, args.replicas, *common, jobs_every=every, stall_for=args.stall_for, skew=args.skew
                )
                report["runs"].append(await trials[mode](settings, tmp / mode))
        report["throughput_one"] = report["throughput"] = None
        if not args.no_throughput:
            for key, n in (("throughput_one", 1), ("throughput", 2)):
                if n > 1 and database == "sqlite":
                    continue
                (tmp / key).mkdir(parents=True, exist_ok=True)
                with scratch(database, tmp / key) as url:
                    plain = (args.chats, args.messages, 0.0, None, 0.0, args.timeout, args.idle)
                    run = await run_webhook(TrialSettings(url, n, *plain), tmp / key)
                report[key] = round(run["messages"] / run["seconds"], 1)
                report[f"{key}_cpu_s"] = run["cpu_s"]  # where the time went (bench/replicas/cpu.py)
        report["cache_staleness"] = await cache_staleness(database)
    return report


def _print(report: dict[str, Any]) -> None:
    for r in report["runs"]:
        print(
            f"{r['mode']}: {r['replicas']} replica(s), {r['messages']} messages: answered {r['answered']}, "
            f"lost {r['lost']}, answered twice {r['answered_twice']}, order violations "
            f"{r['order_violations']}, duplicate memories {r['duplicate_memories']}, job runs duplicated "
            f"{r['job_runs_duplicated']} of {r['job_periods']} periods, takeover {r['takeover_s']} s, "
            f"in flight at the kill {r['in_flight_at_kill']} ({r['seconds']} s)"
        )
    print(f"throughput: 1 replica {report['throughput_one']} msg/s, 2 replicas {report['throughput']} msg/s")
    if report.get("cache_staleness") is not None:
        print(f"cache staleness: {report['cache_staleness']}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = database_problem(args.database, args.replicas)
    if problem:
        print(f"bench.replicas: {problem}", file=sys.stderr)
        return 2
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    import asyncio

    with contextlib.ExitStack() as stack:
        database = args.database
        if database == "auto":
            from bench.replicas.cluster import NoServer, throwaway_server

            try:
                database = stack.enter_context(throwaway_server())
            except NoServer as exc:
                print(f"bench.replicas: --database auto: {exc}", file=sys.stderr)
                return 2
        report = asyncio.run(run(args, database))
    emit_json(report) if args.json else _print(report)
    return 1 if any(run_failed(r) for r in report["runs"]) else 0


def run_failed(run: dict[str, Any]) -> bool:
    """A run that lost a message, reordered one, duplicated a memory or a job run, or answered one twice
    beyond the sends in flight when its replica was killed (on Telegram no send key can drop those)."""
    telegram_kill = run["mode"] in ("webhook", "polling")
    twice_allowed = (run.get("in_flight_at_kill") or 0) if telegram_kill else 0
    return bool(
        run["lost"]
        or run["order_violations"]
        or run["duplicate_memories"]
        or run["job_runs_duplicated"]
        or run["answered_twice"] > twice_allowed
    )
