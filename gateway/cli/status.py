"""``tierclaw status``: what is configured and in what state memory is (``gateway/cli/status_report.py``
collects and renders it; imported when the command runs, so that ``tierclaw --help`` stays fast)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from gateway.cli.run import run_configured

if TYPE_CHECKING:
    from gateway.config import Config


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``status``."""
    parser = subparsers.add_parser("status", help="configuration in use, models, memory counts, jobs")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the status; exit 2 when the configuration is invalid or the database unreadable."""
    from gateway.cli.status_report import collect, render

    async def show(config: Config) -> int:
        report = await collect(config)
        if args.json:
            print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
        else:
            print(render(report))
        return 0

    return run_configured(args, show)
