"""Tables for the terminal: display width of CJK text, truncation, and column layout."""

from __future__ import annotations

import logging
import shutil
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gateway.cli.memory.common import MAX_COLUMN, MIN_TABLE_WIDTH, TABLE_WIDTH

if TYPE_CHECKING:
    pass

log = logging.getLogger("tierclaw.cli")


def display_width(text: str) -> int:
    """Terminal columns of ``text``: wide/fullwidth (CJK) characters take two, combining marks none."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def truncate(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns, ending in "…" when cut."""
    if display_width(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for ch in text:
        w = 0 if unicodedata.combining(ch) else (2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def one_line(value: Any) -> str:
    return " ".join(str(value).split())


def table_width() -> int:
    """Columns available for a table: the terminal's (or $COLUMNS), never below a readable minimum."""
    return max(shutil.get_terminal_size((TABLE_WIDTH, 24)).columns, MIN_TABLE_WIDTH)


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], *, max_width: int | None = None
) -> str:
    """An aligned table; the last column takes what is left of the width and is truncated with …."""
    if max_width is None:
        max_width = table_width()
    cells = [[one_line(c) for c in row] for row in rows]
    last = len(headers) - 1
    for row in cells:
        for i in range(last):
            row[i] = truncate(row[i], MAX_COLUMN)
    widths = [max([display_width(h)] + [display_width(r[i]) for r in cells]) for i, h in enumerate(headers)]
    room = max(max_width - sum(widths[:last]) - 2 * last, 12)
    if widths[last] > room:
        widths[last] = room
        for row in cells:
            row[last] = truncate(row[last], room)

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v + " " * (w - display_width(v)) for v, w in zip(values, widths, strict=True)
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(out)


# --------------------------------------------------------------------------- commands
