"""``tierclaw dashboard``: the memory web page on its own, and the same page inside ``tierclaw gateway``.

When a running gateway (or another ``tierclaw dashboard``) already serves the page over this memory, the
command prints that page's ready link — the URL with the access token — and exits: it finds the page by
the note the serving process left beside the token, or at the address it would listen on, and checks
that the page takes this token (``gateway/dashboard/finding.py``). Otherwise it opens the configured
memory (``--db`` to pick another file), builds the same parts as the gateway (embedder for hybrid search,
the memory model for "extract now") without any channel, prints the ready URL with the access token on
stdout and serves until Ctrl-C. ``gateway/dashboard/access.py`` says what protects it.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when the command runs, not for --help
    from gateway.config import Config
    from gateway.dashboard.finding import FoundPage


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
    p.add_argument("--json", action="store_true", help='print {"url": …, "servedBy": …} as JSON')
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
    host = args.host or config.dashboard.host
    port = config.dashboard.port if args.port is None else args.port
    found = await _running_page(config, host, port, chosen=args.host is not None or args.port is not None)
    if found is not None:
        page_link, token = found
        who = f"tierclaw (pid {page_link.pid})" if page_link.pid else "a running tierclaw"
        _print_link(args, page_link.link(token), who)
        print(f"{who} already serves the memory page here; open the link above.", file=sys.stderr)
        return 0
    runtime = await Runtime.open(config, [])
    if runtime.backfill is not None:
        runtime.backfill.start()  # as in the gateway: memories without a vector get one, for hybrid search
    try:
        try:
            page = await start_for(
                runtime,
                host=host,
                port=port,
                allow_remote=args.allow_remote or config.dashboard.allow_remote,
                with_replies=False,
            )
        except DashboardAccessError as exc:
            print(f"tierclaw: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"tierclaw: {_listen_failure(exc, host, port)}", file=sys.stderr)
            return 2
        _print_link(args, page.url, "this command")
        print("Open it in a browser on this machine. Ctrl-C stops the page.", file=sys.stderr, flush=True)
        try:
            await stop_signal().wait()
        finally:
            await page.stop()
    finally:
        await runtime.close()
    return 0


def _print_link(args: argparse.Namespace, url: str, served_by: str) -> None:
    """The ready link on stdout: a line for a person, or one JSON document with ``--json``."""
    if args.json:
        print(json.dumps({"url": url, "servedBy": served_by}), flush=True)
    else:
        print(f"tierclaw memory page: {url}", flush=True)


async def _running_page(
    config: Config, host: str, port: int, *, chosen: bool
) -> tuple[FoundPage, str] | None:
    """A page already served over this memory, and its access token: the one the serving process noted
    (unless ``--host``/``--port`` chose an address), else one at ``host:port``."""
    from gateway.dashboard.access import access_token, load_or_create_token
    from gateway.dashboard.finding import base_url, find_page

    data_dir = config.db_path().parent
    if config.memory_on_file():
        token = load_or_create_token(data_dir)
    else:
        from memory.store.open import open_store

        store = await open_store(config.memory_target(), create=False, warm_text=False)
        try:
            token = await access_token(data_dir, store.page, on_file=False)
        finally:
            await store.close()
    addresses = [base_url(host, port)] if port else []
    found = find_page(token, None if chosen else data_dir, addresses)
    return (found, token) if found is not None else None


def _listen_failure(exc: OSError, host: str, port: int) -> str:
    """Why the page could not listen, and what to do: a taken port is named, with the way out."""
    if exc.errno != errno.EADDRINUSE:
        return f"cannot listen for the memory page: {exc.strerror or exc}"
    from gateway.dashboard.finding import answers_as, base_url

    other = "a memory page over another database" if answers_as(base_url(host, port)) else "another program"
    return (
        f"cannot serve the memory page on {host}:{port}: the port is in use by {other}. "
        "Pass --port 0 for a free port (or --port P, or set dashboard.port)"
    )
