"""One ``tierclaw gateway`` per SQLite file: an OS file lock beside the database, held while it runs.

SQLite serves one process well; two gateways on one file would both poll Telegram, both replay the
unanswered inbox and both run the nightly jobs (docs/scale-out.md lists what each would trip over).
So ``tierclaw gateway`` takes an exclusive ``flock`` on ``<database>.gateway.lock`` before it opens the
database, and a second one is refused with one line that points at PostgreSQL (``memory.databaseUrl``)
for several gateways. The kernel drops the lock when the process ends in any way — ``kill -9``
included — so a crash never leaves a stale lock behind; the pid written into the file only serves the
message.

Only the gateway takes the lock: ``tierclaw memory …``, ``tierclaw dashboard`` and ``tierclaw chat``
keep working beside a running gateway, as before. ``gateway_running`` lets ``tierclaw chat`` see one
(it then leaves the scheduled jobs to the gateway).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from memory.files.private import PRIVATE_FILE_MODE, private_dir

LOCK_SUFFIX = ".gateway.lock"


class GatewayAlreadyRunning(Exception):
    """Another gateway holds the lock of this database; the message is the one line to print."""


def lock_path(database: Path) -> Path:
    """The lock file of ``database``: beside it, so every process that opens the file finds it."""
    return database.with_name(database.name + LOCK_SUFFIX)


class GatewayLock:
    """The held lock (an open file descriptor); ``release`` or the process's end lets it go."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock and close (idempotent). The file stays: removing it could race with a new holder."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> GatewayLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold_gateway_lock(database: Path) -> GatewayLock:
    """Take the gateway lock of ``database`` for this process, or raise ``GatewayAlreadyRunning``.

    Non-blocking: a second gateway is told at once instead of waiting for the first to stop.
    """
    path = lock_path(database)
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise GatewayAlreadyRunning(
            f"another tierclaw gateway{holder} is already running on {database}; SQLite is for one "
            "process — to run several gateways, put them on PostgreSQL (memory.databaseUrl)"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return GatewayLock(path, fd)


def gateway_running(database: Path) -> bool:
    """Whether a gateway holds the lock of ``database`` now (never creates the file or waits)."""
    path = lock_path(database)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock, if it was taken
    return False


def _holder(fd: int) -> str:
    """`` (pid N)`` from the lock file, or "" when it says nothing usable."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode().strip() or "0")
        if pid > 0:
            return f" (pid {pid})"
    return ""
