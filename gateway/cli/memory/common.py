"""What every ``tierclaw memory`` subcommand shares: defaults, the error type, loading the config."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when a command runs, not when the parser is built (tierclaw --help)
    from gateway.config import Config
    from memory.engine import MemoryEngine

log = logging.getLogger("tierclaw.cli")


DEFAULT_OWNER = "console:local"
CLI_QUERY_TIMEOUT_SECONDS = 60.0
DB_ENV = "TIERCLAW_MEMORY_DB"
DEFAULT_DB = "~/.tierclaw/data/memory.db"
# Used when the terminal width is unknown (output piped); a real terminal's width wins.
TABLE_WIDTH = 100
MIN_TABLE_WIDTH = 70
# Widest a non-content column may get before it is truncated.
MAX_COLUMN = 24
# tierclaw memory reindex: memories per embedder call.
REINDEX_BATCH_SIZE = 64
# tierclaw memory import: memories per transaction (the progress bar moves once per batch).
IMPORT_BATCH_SIZE = 64

# What a command without --owner means (gateway/cli/memory/parser.py, ``_default_owner``).
ONE_OWNER = "one"  # the only owner in the database; asks when there are several
BY_ID = "by_id"  # the owner of the memory named by the ID argument
ALL_OWNERS = "all"  # every owner (args.owner stays None)

Command = Callable[["MemoryEngine", argparse.Namespace], Awaitable[int]]


class CliError(Exception):
    """An expected failure: the message is printed as is, the process exits with ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------- registration


def load_cli_config(args: argparse.Namespace) -> Config:
    """The configuration for this command (``--config``, env overrides); a bad file is a CliError."""
    from gateway.config import ConfigError, load_config

    try:
        return load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def choose_owner(owners: list[str]) -> str:
    """The owner a command means when none was given: the only one, or ``DEFAULT_OWNER`` in an empty
    database (the terminal chat's); several is a CliError that names them."""
    if not owners:
        return DEFAULT_OWNER
    if len(owners) == 1:
        return owners[0]
    shown = ", ".join(owners[:10]) + (f" and {len(owners) - 10} more" if len(owners) > 10 else "")
    raise CliError(
        f"this database holds {len(owners)} owners ({shown}): choose one with --owner "
        "(tierclaw memory owners lists them with their counts)"
    )


def print_json(value: object) -> None:
    """``--json`` output: one document on stdout, non-ASCII text kept readable."""
    import json

    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def say(args: argparse.Namespace, text: str, data: dict[str, object]) -> None:
    """What a command did: ``text`` for a person, or ``data`` as one JSON document with ``--json``."""
    if getattr(args, "json", False):
        print_json(data)
    else:
        print(text)


def fail(message: str, code: int = 2) -> int:
    """Print ``error: message`` on stderr; returns ``code`` (the exit status)."""
    print(f"error: {message}", file=sys.stderr)
    return code
