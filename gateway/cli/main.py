"""The ``tierclaw`` command line: global options and one registration per subcommand.

To add a subcommand, write ``register(subparsers)`` in its own module (it adds a parser and sets
``func=<callable(args) -> int>`` as a default) and list it in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import os
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
        description="Personal AI assistant gateway with a tiered long-term memory (SQLite or PostgreSQL).",
    )
    parser.add_argument("--version", action="version", version=f"tierclaw {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in SUBCOMMANDS:
        register(subparsers)
    spread_global_options(parser)  # --log-level and --config before or after the subcommand
    return parser


# The exit status when whoever read the output went away (``tierclaw memory list | head``): 128 + SIGPIPE,
# what a tool killed by the signal reports, so a script can tell it from a failure of its own.
READER_GONE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tierclaw``; returns the exit status: 0 ok, 1 failure (or declined), 2 usage, config or database
    error, 130 interrupted (Ctrl-C), 141 the reader of the output closed it (``| head``: said nowhere)."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # what is still buffered, now: a closed pipe is caught here, not at exit
    except BrokenPipeError:
        return _reader_gone()
    return code


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` chose: ``tierclaw memory add`` for ``memory add …``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest or "", None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def _reader_gone() -> int:
    """The output's reader closed it: nothing more to say, and nothing to say it to. stdout is pointed at
    /dev/null so that Python's own last flush at exit does not complain about the pipe either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (an embedding caller's stdout): nothing to close
        pass
    return READER_GONE


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # said with the usage of the command they were given to, not tierclaw's
            _chosen(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
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
