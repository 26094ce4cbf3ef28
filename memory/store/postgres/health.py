"""What ``tierclaw doctor`` asks a PostgreSQL memory database, without changing it: can this URL connect
(reachable, authenticated, the database exists), which server and schema version, and may this user
write there (README.md, "Checking the setup").

Writing is tried, then undone: in one transaction an update of the schema row (a database in use) or
the creation of a table (an empty one, whose tables the first start creates), rolled back — so a
read-only user, a standby server or a missing ``CREATE`` privilege shows, and nothing is left behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from memory.store.errors import MemoryDatabaseError
from memory.store.postgres.database import connect
from memory.store.postgres.schema import current_version, other_tables

# What a failed connection means, from libpq's message (a connection error carries no SQLSTATE).
_KINDS = (
    ("auth", ("password authentication failed", "authentication failed", "no password supplied",
              "is not permitted to log in", "role \"")),
    ("no_database", ("does not exist",)),
    ("unreachable", ("connection refused", "timeout expired", "could not translate host name",
                     "no route to host", "network is unreachable", "name or service not known",
                     "could not connect", "server closed the connection")),
)  # fmt: skip


class DatabaseUnusable(MemoryDatabaseError):
    """The URL cannot be used: ``kind`` is "auth", "no_database", "unreachable" or "other"; the message
    is one line naming the URL with its password masked."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class PostgresHealth:
    """What the database said: its server version, tierclaw's schema version there (None: no tierclaw
    tables), how many other tables it holds, and whether this user can write (else why not)."""

    server_version: str
    schema_version: int | None
    other_tables: int
    write_problem: str  # "" when a write went through (and was undone)


def kind_of(message: str) -> str:
    """ "auth", "no_database", "unreachable" or "other", from a connection failure's message."""
    lowered = message.lower()
    if 'role "' in lowered and "does not exist" in lowered:
        return "auth"  # an unknown user is a login problem, not a missing database
    for kind, marks in _KINDS:
        if any(mark in lowered for mark in marks):
            return kind
    return "other"


async def database_health(url: str) -> PostgresHealth:
    """Connect to ``url`` once and ask (see the module doc); ``DatabaseUnusable`` when it cannot."""
    try:
        conn = await connect(url)
    except MemoryDatabaseError as exc:
        raise DatabaseUnusable(str(exc), kind_of(str(exc))) from None
    try:
        server = str(conn.info.parameter_status("server_version") or "?").split(" ")[0]
        version = await current_version(conn)
        others = await other_tables(conn) if version is None else 0
        return PostgresHealth(server, version, others, await _write_problem(conn, version))
    finally:
        await conn.close()


async def _write_problem(conn: psycopg.AsyncConnection[Any], version: int | None) -> str:
    """Why this user cannot write here ("" when it can): a write tried in a transaction rolled back."""
    probe = (
        "UPDATE tierclaw_schema SET version = version"
        if version is not None
        else "CREATE TABLE tierclaw_doctor_probe (id integer)"
    )
    try:
        async with conn.transaction(force_rollback=True):
            await conn.execute(probe)
    except psycopg.Error as exc:
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return ""
