"""A person's memories are theirs alone: directories 0700, files 0600, whatever the umask.

Used for the memory database (and its ``-wal``/``-shm``, which SQLite creates with the database file's
mode), exports and config files. Directories that already exist are left as they are — a person may have
pointed the database into a folder of their own — only those created here are made private.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents, each 0700."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        directory.mkdir(exist_ok=True)
        os.chmod(directory, PRIVATE_DIR_MODE)


def private_file(path: Path) -> None:
    """Create ``path`` if absent (empty) and make it 0600 when it is ours; its content is not touched.

    A file we cannot change (another owner's, a read-only file system) is left as it is: opening it is
    what says whether it can be used.
    """
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, PRIVATE_FILE_MODE)
        os.close(fd)
    with contextlib.suppress(OSError):
        if path.stat().st_uid == os.getuid() and path.stat().st_mode & 0o777 != PRIVATE_FILE_MODE:
            os.chmod(path, PRIVATE_FILE_MODE)


def write_private(path: Path, text: str | bytes, mode: int = PRIVATE_FILE_MODE) -> None:
    """Write ``text`` (or bytes: a kept attachment) to ``path`` (``mode``, 0600 unless said) via a temp file
    beside it and ``os.replace``.

    The temp file gets its mode before any content is written, so the file is never readable by others,
    not even for a moment, and a crash never leaves half a file.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as raw:
                raw.write(text)
                raw.flush()
                os.fsync(raw.fileno())
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
