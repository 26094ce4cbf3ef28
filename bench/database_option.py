"""``--database URL``: run a bench on PostgreSQL instead of a temporary SQLite file.

The URL names a PostgreSQL server the bench may create databases on (its database part is only where it
connects first): each run makes a scratch database, fills it, measures, and drops it, so no existing memory
is touched. Without the option the bench uses a SQLite file in a temporary directory, as before. The
JSON output gains ``store``: "sqlite" or "postgresql".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


def add_database_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--database``."""
    parser.add_argument(
        "--database",
        metavar="URL",
        help="a postgresql:// server to run on (a scratch database is created and dropped); "
        "default: a temporary SQLite file",
    )


def store_name(database: str | None) -> str:
    """The ``store`` JSON key."""
    return "postgresql" if database else "sqlite"


@contextlib.contextmanager
def scratch_memory(
    database: str | None, file_name: str = "bench.db", template: str | None = None
) -> Iterator[str]:
    """Where the bench's memory lives for one run: a fresh SQLite file, or a fresh PostgreSQL database
    (with ``template``: a copy of that database of the server, e.g. one ``kept_memory`` loaded)."""
    if not database:
        with tempfile.TemporaryDirectory(prefix="tierclaw-bench-") as tmp:
            yield str(Path(tmp) / file_name)
        return
    import psycopg

    name = f"tierclaw_bench_{os.getpid()}_{secrets.token_hex(3)}"
    from psycopg import sql

    copy = sql.SQL(" TEMPLATE {}").format(sql.Identifier(template)) if template else sql.SQL("")
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}{}").format(sql.Identifier(name), copy))
    try:
        yield urlunsplit(urlsplit(database)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def kept_memory(database: str, name: str) -> Iterator[str]:
    """A new PostgreSQL database ``name`` on the server of ``database``, kept after the run (and analysed
    then, as autovacuum would): loaded once, copied by ``scratch_memory(template=name)`` for each run that
    measures, so alternated runs of two versions of the code start from the same rows."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlunsplit(urlsplit(database)._replace(path=f"/{name}"))
    yield url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
