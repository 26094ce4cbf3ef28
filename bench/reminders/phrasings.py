"""Parsing accuracy of ``python -m bench.reminders``: every phrasing of ``bench/data/reminder_phrasings.json``
read at its fixed "now" in its zone (``gateway.reminders.parsing.parse_request``) and compared with what
its author wrote down before the parser existed: the first due time (local wall clock, to the minute),
the repeat rule and the text; or the kind of error. A phrasing is right when all three agree."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from gateway.reminders.parsing import parse_request
from gateway.reminders.when import Problem

DATA = Path(__file__).resolve().parent.parent / "data" / "reminder_phrasings.json"
_LEAD = re.compile(r"^(?:to|about|that)\s+", re.IGNORECASE)


def graded_text(text: str) -> str:
    """The text as graded: a leading to/about/that and outer punctuation dropped, case and spaces folded."""
    text = " ".join(text.split()).strip(" ,.:;!?，。：；！？\"'")
    return _LEAD.sub("", text).casefold()


def read_one(row: dict[str, Any], nows: dict[str, dict[str, str]]) -> dict[str, Any]:
    """What the parser made of one phrasing, beside what was expected."""
    setting = nows[row["now"]]
    now = datetime.strptime(setting["now"], "%Y-%m-%d %H:%M")
    request = parse_request(row["said"], now, ZoneInfo(setting["tz"]))
    if isinstance(request.due, Problem):
        at, repeat = f"error:{request.due.kind}", ""
    else:
        at = request.due.shown.strftime("%Y-%m-%d %H:%M")
        repeat = str(request.due.repeat) if request.due.repeat else ""
    time_right = at == row["at"] and repeat == row["repeat"]
    text_right = row["at"].startswith("error:") or graded_text(request.text) == graded_text(row["text"])
    return {**row, "got_at": at, "got_repeat": repeat, "got_text": request.text,
            "time_right": time_right, "right": time_right and text_right}  # fmt: skip


def measure(path: Path = DATA) -> dict[str, Any]:
    """Shares right per language (``parsed``), time-only shares, per kind, and the misses."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    results = [read_one(row, doc["nows"]) for row in doc["phrasings"]]
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_lang[r["lang"]].append(r)
        by_kind[f"{r['lang']}:{r['kind']}"].append(r)

    def share(rows: list[dict[str, Any]], key: str = "right") -> float:
        return round(sum(r[key] for r in rows) / len(rows), 4) if rows else 0.0

    return {
        "parsed": {lang: share(rows) for lang, rows in sorted(by_lang.items())},
        "parsed_time": {lang: share(rows, "time_right") for lang, rows in sorted(by_lang.items())},
        "phrasings": {lang: len(rows) for lang, rows in sorted(by_lang.items())},
        "parsed_by_kind": {kind: share(rows) for kind, rows in sorted(by_kind.items())},
        "misses": [
            {
                k: r[k]
                for k in ("lang", "kind", "said", "at", "got_at", "repeat", "got_repeat", "text", "got_text")
            }
            for r in results
            if not r["right"]
        ],
    }
