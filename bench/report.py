"""Output helpers every benchmark shares: percentiles, aligned tables, and the ``--json`` last line."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile (0–100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table; floats are shown with three decimals."""
    cells = [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def emit_json(result: dict[str, Any]) -> None:
    """Print the result as one JSON object on the last line of stdout (the --json contract)."""
    print(json.dumps(result, ensure_ascii=False, sort_keys=True))


def require_file(path: str | Path, what: str) -> Path:
    """Exit 1 with a one-line message when a benchmark's input is missing (never a traceback)."""
    p = Path(path)
    if not p.exists():
        print(
            f"{what} not found: {p} (benchmark data lives in ../shared/data; convert it with "
            "python -m bench.datasets)",
            file=sys.stderr,
        )
        raise SystemExit(1)
    return p
