"""The errors every store raises, whichever backend: the CLI and the gateway catch these, never a driver's.

docs/architecture.md, "Storage": a bad database (missing, corrupt, too new, unreachable, refused) is one
``MemoryDatabaseError`` whose message names it (a URL with its password masked); text a database cannot
hold (a NUL character: PostgreSQL refuses it, so SQLite refuses it too, and both stores hold the same
things) is a ``ValueError``, raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable


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
