"""This gateway process's replica id, and that id in front of each of its log lines.

With several gateways on one database (docs/scale-out.md) the operator must tell their log lines and
metrics apart: ``gateway.replicaId`` names the process; left empty it is ``<hostname>-<pid>``, which
differs for every process on every machine. ``/metrics`` carries it too (gateway/metrics.py).
"""

from __future__ import annotations

import logging
import os
import socket


def replica_id(configured: str = "") -> str:
    """``gateway.replicaId``, else ``<hostname>-<pid>``."""
    if configured:
        return configured
    host = socket.gethostname().split(".", 1)[0] or "host"
    return f"{host}-{os.getpid()}"


class ReplicaFormatter(logging.Formatter):
    """Another handler's formatter with ``[replica ID] `` in front: whatever format the CLI set
    (gateway/cli/main.py) stays as it is, and every line says which process wrote it."""

    def __init__(self, inner: logging.Formatter | None, replica: str) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()
        self.replica = replica

    def format(self, record: logging.LogRecord) -> str:
        return f"[replica {self.replica}] {self.inner.format(record)}"


def tag_log_lines(replica: str, logger: logging.Logger | None = None) -> None:
    """Prefix every line of ``logger``'s handlers (default: the root logger's) with the replica id.

    Idempotent: a handler already tagged gets the new id, not a second prefix.
    """
    for handler in (logger or logging.getLogger()).handlers:
        current = handler.formatter
        if isinstance(current, ReplicaFormatter):
            current.replica = replica
        else:
            handler.setFormatter(ReplicaFormatter(current, replica))
