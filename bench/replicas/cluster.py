"""``--database auto``: a throwaway PostgreSQL cluster for one bench run, started from Debian's server
binaries the way the tests start theirs (localservers/postgres_cluster.py, shared with them:
initdb and pg_ctl as the ``postgres`` user when run as root, a free localhost port, trust
authentication), stopped and removed afterwards. Unlike the tests' clusters it keeps PostgreSQL's
durable defaults (fsync on), so the throughput it measures is that of a real server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

BENCH_SETTINGS = "-c max_connections=300"


class NoServer(Exception):
    """No PostgreSQL server binaries to start a cluster with."""


@contextlib.contextmanager
def throwaway_server() -> Iterator[str]:
    """The URL of a fresh cluster's ``postgres`` database, for the length of the block."""
    from localservers.postgres_cluster import INSTALL_HINT, server_binaries, start_cluster

    binaries = server_binaries()
    if binaries is None:
        raise NoServer(INSTALL_HINT)
    cluster = start_cluster(binaries, BENCH_SETTINGS)
    try:
        yield cluster.url
    finally:
        cluster.stop()
