"""The errors every store raises, whichever backend: the CLI and the gateway catch these, never a driver's.

docs/architecture.md, "Storage": a bad database (missing, corrupt, too new, unreachable, refused) is one
``MemoryDatabaseError`` whose message names it (a URL with its password masked); text a database cannot
hold (a NUL character: PostgreSQL refuses it, so SQLite refuses it too, and both stores hold the same
things) is a ``ValueError``, raised before anything is written. Whether a failed write could succeed if
tried again, and whether an error means the store was closed, is asked here too (``cannot_succeed_on_retry``,
``store_was_closed``): each backend registers its driver's errors, so no caller imports a driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


class MemoryDatabaseError(RuntimeError):
    """The memory database is missing, corrupt, unreachable or of an unknown schema; the message says
    which."""


class NulCharacterError(ValueError):
    """A text to store contains a NUL character, which neither store keeps."""


def refuse_nul(params: Iterable[object]) -> None:
    """Raise ``NulCharacterError`` when any text parameter holds a NUL character."""
    for value in params:
        if isinstance(value, str) and "\x00" in value:
            raise NulCharacterError("text to store contains a NUL character (U+0000), which is not kept")


@dataclass(frozen=True, slots=True)
class DriverErrors:
    """How one backend's driver says things, registered by the backend when it is imported
    (``sqlite.py``, ``postgres/database.py``), so callers classify a failure without importing a driver.

    ``database``: its errors (their message names the database's complaint, never row content);
    ``content``: those that come from what was written (writing the same again can never succeed);
    ``closed``: whether an exception means the store was closed under the caller (shutdown)."""

    database: tuple[type[BaseException], ...]
    content: tuple[type[BaseException], ...]
    closed: Callable[[BaseException], bool]


_BACKENDS: dict[str, DriverErrors] = {}


def register_driver_errors(backend: str, errors: DriverErrors) -> None:
    """Make a backend's driver errors known to the classification below (once per backend)."""
    _BACKENDS[backend] = errors


def cannot_succeed_on_retry(exc: BaseException) -> bool:
    """Whether a failed write failed because of what was written (text UTF-8 cannot encode, a NUL, a value
    the database refuses, a constraint) rather than the database's state (busy, locked, read-only, full,
    missing, the server gone), so writing the same values again can never succeed. The gateway then skips
    the message instead of having the platform deliver it forever (gateway/README.md)."""
    if isinstance(exc, UnicodeError | NulCharacterError | TypeError):
        return True
    return any(isinstance(exc, b.content) for b in _BACKENDS.values())


def is_database_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a store's or its driver's error (its message may be shown: it names no row)."""
    if isinstance(exc, MemoryDatabaseError):
        return True
    return any(isinstance(exc, b.database) for b in _BACKENDS.values())


def store_was_closed(exc: BaseException) -> bool:
    """Whether ``exc`` says the store was closed under the caller (a background task at shutdown)."""
    return any(b.closed(exc) for b in _BACKENDS.values())
