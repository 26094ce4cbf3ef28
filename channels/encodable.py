"""Text that every store can take: what UTF-8 cannot encode becomes U+FFFD before it is stored.

A platform can hand over text that is valid JSON but not valid Unicode — a lone UTF-16 surrogate
(``"\\ud800"`` in a Telegram update or a Feishu event). Python keeps it in a ``str``, but SQLite (any
UTF-8 store) refuses it, the same way at every retry, so a message holding one would never be stored and
its channel would stall on it (channels/README.md, "A message that can never be stored"). Repairing it
first keeps the rest of the message; a pair of surrogates that Python kept as two code points is joined
into the character it stands for.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

REPLACEMENT = "\ufffd"
T = TypeVar("T")


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (surrogate pairs joined); unchanged (the same
    object) when it already encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


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
