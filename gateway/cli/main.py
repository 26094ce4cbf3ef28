"""The ``tierclaw`` command line: global options and one registration per subcommand.

To add a subcommand, write ``register(subparsers)`` in its own module (it adds a parser and sets
``func=<callable(args) -> int>`` as a default) and list it in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from gateway.cli import dashboard, doctor, memory, onboard, reminders, run, status
from gateway.cli.options import apply_defaults, spread_global_options
from gateway.log_setup import configure_logging

GETTING_STARTED = """
Getting started:
  tierclaw chat            talk in this terminal (works without an API key, on the offline model)
  tierclaw onboard         write ~/.tierclaw/config.json and a workspace with AGENTS.md / SOUL.md
  tierclaw status          what is configured, memory counts, buffered turns, jobs
  tierclaw doctor          check the setup: config, database, model, channel credentials
A real model: set provider.apiKey in the config, or export TIERCLAW_PROVIDER_API_KEY=sk-...
(any OpenAI-compatible endpoint: provider.baseUrl or TIERCLAW_PROVIDER_BASE_URL).
Memory lives in ~/.tierclaw/data/memory.db; browse it with tierclaw memory list/search/stats,
or in a browser with tierclaw dashboard.
"""

# Each entry adds one subcommand to the parser.
SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    run.register,
    status.register,
    onboard.register,
    memory.register,
    dashboard.register,
    doctor.register,
    reminders.register,
)


def _version() -> str:
    """The installed package's version (``pyproject.toml``), or "unknown" when run from a bare checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tierclaw")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tierclaw",
        description="Personal AI assistant gateway with a tiered long-term memory in SQLite.",
    )
    parser.add_argument("--version", action="version", version=f"tierclaw {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in SUBCOMMANDS:
        register(subparsers)
    spread_global_options(parser)  # --log-level and --config before or after the subcommand
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tierclaw``; returns the exit status: 0 ok, 1 failure (or declined), 2 usage, config or database
    error, 130 interrupted (Ctrl-C)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return exc.code if isinstance(exc.code, int) else 2
    apply_defaults(args)
    configure_logging(args.log_level, debug_libraries=args.debug_libraries)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        print(GETTING_STARTED)
        return 0
    try:
        return int(func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
