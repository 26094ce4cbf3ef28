"""Options accepted anywhere on the command line, as in git, pip or docker.

``tierclaw --log-level DEBUG memory list`` and ``tierclaw memory list --log-level DEBUG`` mean the same.
argparse only knows an option on the parser it was added to, so every global option is added to the
top-level parser *and* to every subcommand parser, with ``default=SUPPRESS``: a parser that did not see
the option leaves the attribute unset rather than overwriting a value an earlier parser set.
``apply_defaults`` fills in what nobody gave. A subcommand that defines an option of its own with the
same name (``onboard --config``: the file to write) keeps its own.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# Attribute -> value when the option was given nowhere.
GLOBAL_DEFAULTS: dict[str, object] = {"log_level": "WARNING", "config": None, "debug_libraries": False}


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--log-level``, ``--debug-libraries`` and ``--config`` to ``parser`` unless it already has an
    option of that name."""
    known = parser._option_string_actions
    if "--log-level" not in known:
        parser.add_argument(
            "--log-level",
            type=str.upper,
            choices=LOG_LEVELS,
            default=argparse.SUPPRESS,
            help="logging level (default WARNING); DEBUG shows tierclaw's own detail",
        )
    if "--debug-libraries" not in known:
        parser.add_argument(
            "--debug-libraries",
            action="store_true",
            default=argparse.SUPPRESS,
            help="with --log-level DEBUG, the libraries' debug lines too (apscheduler, aiosqlite, httpx, …)",
        )
    if "--config" not in known:
        parser.add_argument(
            "--config",
            metavar="PATH",
            default=argparse.SUPPRESS,
            help="config file (default $TIERCLAW_CONFIG or ~/.tierclaw/config.json; built-in defaults "
            "if absent)",
        )


def subcommand_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser below ``parser`` (subcommands, their subcommands, …), each once."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for sub in action.choices.values():  # aliases map to the same parser
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield sub
                    yield from subcommand_parsers(sub)


def spread_global_options(parser: argparse.ArgumentParser) -> None:
    """Make the global options work before or after any subcommand of ``parser``."""
    add_global_options(parser)
    for sub in subcommand_parsers(parser):
        add_global_options(sub)


def apply_defaults(args: argparse.Namespace, defaults: dict[str, object] | None = None) -> None:
    """Set each option nobody gave to its default (``GLOBAL_DEFAULTS`` unless ``defaults`` is given)."""
    for name, value in (GLOBAL_DEFAULTS if defaults is None else defaults).items():
        if not hasattr(args, name):
            setattr(args, name, value)
