"""``tierclaw dashboard``: the memory web page on its own, and the same page inside ``tierclaw gateway``.

Standalone it opens the configured memory (``--db`` to pick another file), builds the same parts as the
gateway (embedder for hybrid search, the memory model for "extract now") without any channel, prints the
ready URL with the access token on stdout and serves until Ctrl-C. ``gateway/dashboard/access.py``
says what protects it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when the command runs, not for --help
    from gateway.config import Config


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``dashboard``."""
    p = subparsers.add_parser(
        "dashboard",
        help="the memory web page: see, fix and remove what is remembered (http://127.0.0.1:8765/)",
        description="Serve the memory web page on 127.0.0.1 and print its URL with the access token. "
        "Binding to another address needs --allow-remote (the page shows every person's memories).",
    )
    p.add_argument("--host", help="address to listen on (default: dashboard.host, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: dashboard.port, 8765; 0 picks a free one)")
    p.add_argument(
        "--db",
        metavar="PATH",
        help="memory database: a file or a postgresql:// URL (default: the config's memory)",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow an address other than loopback (plain HTTP: prefer an SSH tunnel)",
    )
    p.set_defaults(func=run_dashboard)


def run_dashboard(args: argparse.Namespace) -> int:
    """Entry point of ``tierclaw dashboard``: 0 after Ctrl-C, 2 for a bad config, database or address."""
    from gateway.cli.run import run_configured

    return run_configured(args, lambda config: _dashboard(config, args))


async def _dashboard(config: Config, args: argparse.Namespace) -> int:
    from gateway.app import Runtime
    from gateway.cli.run import stop_signal
    from gateway.dashboard.access import DashboardAccessError
    from gateway.dashboard.server import start_for
    from memory.store.urls import is_database_url

    if args.db and is_database_url(args.db):
        config.memory.database_url = args.db
    elif args.db:
        config.memory.db_path = str(Path(args.db).expanduser())
        config.memory.database_url = ""
    if args.port is not None and not 0 <= args.port <= 65535:
        print(f"tierclaw: --port must be within 0..65535, got {args.port}", file=sys.stderr)
        return 2
    if config.memory_on_file() and not config.db_path().is_file():
        print(
            f"tierclaw: no memory database at {config.db_path()} yet: talk to the assistant first "
            "(tierclaw chat), or pass --db PATH",
            file=sys.stderr,
        )
        return 2
    runtime = await Runtime.open(config, [])
    if runtime.backfill is not None:
        runtime.backfill.start()  # as in the gateway: memories without a vector get one, for hybrid search
    try:
        try:
            page = await start_for(
                runtime,
                host=args.host or config.dashboard.host,
                port=config.dashboard.port if args.port is None else args.port,
                allow_remote=args.allow_remote or config.dashboard.allow_remote,
                with_replies=False,
            )
        except DashboardAccessError as exc:
            print(f"tierclaw: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"tierclaw: cannot listen for the memory page: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"tierclaw memory page: {page.url}", flush=True)
        print("Open it in a browser on this machine. Ctrl-C stops the page.", file=sys.stderr, flush=True)
        try:
            await stop_signal().wait()
        finally:
            await page.stop()
    finally:
        await runtime.close()
    return 0
