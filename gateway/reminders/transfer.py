"""Reminders in a person's export (``gateway/memory_export.py``) and back in with ``tierclaw memory import``:
every reminder of the owner (waiting ones go on waiting; delivered, failed, missed and cancelled ones keep
their state and history) and their time zone. An import adds only the reminders the database lacks (same
chat, text and time), under the importing owner, so importing twice adds nothing."""

from __future__ import annotations

import dataclasses
from typing import Any

from memory.clock import to_db, utcnow
from memory.store.protocol import MemoryStore
from memory.store.reminders import STATUSES, ReminderRow

FIELDS = tuple(
    f.name
    for f in dataclasses.fields(ReminderRow)
    if f.name not in ("id", "owner", "claimed_by", "lease_until")
)


async def exported(store: MemoryStore, owner: str) -> dict[str, Any]:
    """The owner's reminders and time zone as the export's ``reminders`` and ``timezone``."""
    rows = await store.reminders.of_owner(owner, STATUSES, limit=1_000_000)
    return {
        "timezone": await store.reminders.zone(owner),
        "reminders": [{k: getattr(r, k) for k in FIELDS} for r in rows],
    }


def markdown_lines(doc: dict[str, Any]) -> list[str]:
    """The export's reminders as Markdown lines."""
    rows = doc["reminders"]
    if not rows:
        return []
    lines = ["", "## Reminders", ""]
    for r in rows:
        repeat = f" {r['repeat']}" if r["repeat"] else ""
        lines.append(f"- {r['local_at']} {r['zone']}{repeat} ({r['status']}): {r['text']}")
    return lines


async def imported(store: MemoryStore, owner: str, doc: dict[str, Any]) -> str:
    """Add the export's reminders and time zone the database lacks; what to add to the summary. A
    malformed record is a ValueError before anything is written."""
    records = doc.get("reminders") or []
    if not isinstance(records, list):
        raise ValueError('"reminders" must be a list')
    rows = []
    for n, rec in enumerate(records, start=1):
        try:
            values = {k: rec[k] for k in FIELDS}
            if values["status"] not in STATUSES:
                raise ValueError(f"status must be one of {', '.join(STATUSES)}")
            rows.append(ReminderRow(id=0, owner=owner, claimed_by=None, lease_until=None, **values))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"reminder record {n} is malformed ({type(exc).__name__}: {exc})") from exc
    added = sum([await store.reminders.restore(row) is not None for row in rows])
    said = f"; reminders {added} imported, {len(rows) - added} already present" if rows else ""
    zone = doc.get("timezone")
    if isinstance(zone, str) and zone and await store.reminders.zone(owner) is None:
        await store.reminders.set_zone(owner, zone, to_db(utcnow()))
        said += f"; time zone {zone}"
    return said
