"""Which process this is among several on one database: the holder named in the claims of background work
(extraction, the embedding backfill; docs/scale-out.md). The gateway names itself with
``gateway.replicaId`` (gateway/replica.py); anything else, and the default there, is ``<hostname>-<pid>``."""

from __future__ import annotations

import os
import socket


def default_replica() -> str:
    """``<hostname>-<pid>``: differs for every process on every machine."""
    host = socket.gethostname().split(".", 1)[0] or "host"
    return f"{host}-{os.getpid()}"
