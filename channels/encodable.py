"""Text that every store can take: what no store keeps becomes U+FFFD before it is stored.

A platform can hand over text that is valid JSON but not valid Unicode — a lone UTF-16 surrogate
(``"\\ud800"`` in a Telegram update or a Feishu event) — or that holds a NUL (``"\\u0000"``). Python
keeps either in a ``str``, but SQLite (any UTF-8 store) refuses the first and PostgreSQL the second (and
so, for the same results, does the SQLite store: ``memory/store/errors.py``), the same way at every
retry, so a message holding one would never be stored or answered (channels/README.md, "A message that
can never be stored"). Repairing it first keeps the rest of the message; a pair of surrogates that Python
kept as two code points is joined into the character it stands for.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

REPLACEMENT = "\ufffd"
T = TypeVar("T")


def encodable(text: str) -> str:
    """``text`` with every lone surrogate and every NUL replaced by U+FFFD (surrogate pairs joined);
    unchanged (the same object) when there is neither."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\x00", REPLACEMENT) if "\x00" in text else text


def encodable_fields(record: T) -> T:
    """A copy of the dataclass ``record`` with every ``str`` field made ``encodable`` (itself if none
    needed it)."""
    changes = {}
    for field in dataclasses.fields(record):  # type: ignore[arg-type]
        value = getattr(record, field.name)
        if isinstance(value, str):
            fixed = encodable(value)
            if fixed is not value:
                changes[field.name] = fixed
    return dataclasses.replace(record, **changes) if changes else record  # type: ignore[type-var]
