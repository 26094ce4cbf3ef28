"""How tierclaw logs: its own lines at the chosen level, the libraries' only when they matter.

The default level is WARNING, and every library tierclaw runs on is held at WARNING whatever the level
(apscheduler announces every job, aiosqlite logs every SQL statement at DEBUG, httpx every request URL —
a Telegram token included — at INFO). ``--log-level DEBUG`` shows tierclaw's own detail; only
``--log-level DEBUG --debug-libraries`` lets the libraries speak at DEBUG too. What tierclaw started is
said on stderr at any level by the ready line (``ready_line``). README.md, "Logs", is the user's side.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

# Loggers of the libraries (top-level names; children inherit): held at WARNING unless --debug-libraries.
LIBRARIES = (
    "aiohttp",
    "aiosqlite",
    "apscheduler",
    "asyncio",
    "httpcore",
    "httpx",
    "jieba",
    "Lark",  # lark-oapi
    "openai",
    "psycopg",
    "requests",
    "telegram",
    "tzlocal",
    "urllib3",
    "websockets",
)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: str, *, debug_libraries: bool = False, stream: TextIO | None = None) -> None:
    """Root at ``level`` on stderr; the libraries at WARNING, or at DEBUG with ``debug_libraries`` and a
    DEBUG ``level`` (``--debug-libraries`` alone changes nothing: the level still applies)."""
    numeric = getattr(logging, level.upper())
    logging.basicConfig(level=numeric, format=FORMAT, stream=stream or sys.stderr)
    library_level = logging.DEBUG if debug_libraries and numeric <= logging.DEBUG else logging.WARNING
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(max(library_level, numeric))
    if library_level > logging.DEBUG:  # a WARNING per failed reconnect while a PostgreSQL server is away:
        # the channel says once per message that it was not stored (README.md, "Running on PostgreSQL")
        logging.getLogger("psycopg.pool").setLevel(max(logging.ERROR, numeric))


def home_relative(path: Path | str) -> str:
    """``path`` with the home directory written as ``~`` (shorter, and the same on every machine)."""
    text = str(path)
    home = str(Path.home())
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + "/") else text


def ready_line(parts: Sequence[str], stream: TextIO | None = None) -> str:
    """Print ``[gateway] ready: part, part, …`` on stderr (whatever the log level) and return it. Each part
    names one thing started; none may hold a secret (the callers pass names, modes and addresses)."""
    line = "[gateway] ready: " + ", ".join(parts)
    print(line, file=stream or sys.stderr, flush=True)
    return line
