"""A person's whole memory as a document — memories, episodes, the scratchpad, every kept turn, their
reminders and time zone — as JSON (``tierclaw memory import`` reads it back) or Markdown.

One builder for every way out: ``tierclaw memory export`` writes it to a file or stdout, the memory web
page offers it as a download.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from gateway.reminders.transfer import exported as reminder_export
from gateway.reminders.transfer import markdown_lines
from memory.engine import MemoryEngine
from memory.records import Event, Memory
from memory.store.attachments import AttachmentRow
from memory.store.turns import TurnRow

EXPORT_FORMAT = "tierclaw-memory-export"
EXPORT_VERSION = 1
EXPORT_FORMATS = ("json", "md")
PAGE = 1000
# What an export keeps of each conversation turn (``tierclaw memory import`` records them again).
TURN_FIELDS = ("channel", "chat_id", "role", "content", "created_at")


@dataclass(slots=True)
class Export:
    """An export's text and what it holds."""

    text: str
    memories: int
    events: int
    turns: int = 0


async def all_memories(engine: MemoryEngine, owner: str) -> list[Memory]:
    """Every memory of the owner, archived included, oldest first."""
    out: list[Memory] = []
    while True:
        page = await engine.list(owner, include_archived=True, limit=PAGE, offset=len(out))
        out += page
        if len(page) < PAGE:
            break
    out.sort(key=lambda m: m.id)
    return out


async def all_events(engine: MemoryEngine, owner: str) -> list[Event]:
    """Every event (episode) of the owner, by date."""
    total = (await engine.stats(owner))["tier3_events"]
    events = await engine.events.find(owner, limit=total + 1)
    events.sort(key=lambda e: (e.event_date, e.id))
    return events


async def export_memory(engine: MemoryEngine, owner: str, fmt: str) -> Export:
    """The owner's memories and events as ``fmt`` (json, or md for Markdown)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}")
    memories = await all_memories(engine, owner)
    events = await all_events(engine, owner)
    pad = await engine.scratchpad.get(owner)
    turns = await engine.conversation.all_turns(owner)
    kept = await engine.attachments.list(
        owner, limit=100_000
    )  # listed, not their bytes (`memory attachments`)
    reminders = await reminder_export(engine.store, owner)  # and the owner's time zone
    exported_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if fmt == "json":
        doc = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "owner": owner,
            "exported_at": exported_at,
            "memories": [dataclasses.asdict(m) for m in memories],
            "events": [dataclasses.asdict(e) for e in events],
            "scratchpad": dataclasses.asdict(pad) if pad.content else None,
            "turns": [{k: getattr(t, k) for k in TURN_FIELDS} for t in turns],
            "attachments": [dataclasses.asdict(a) for a in kept],
            **reminders,
        }
        text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    else:
        text = markdown(owner, exported_at, memories, events) + _markdown_rest(pad.content, turns)
        text += "".join(_attachment_lines(kept))
        text += "\n".join(markdown_lines(reminders)) + ("\n" if reminders["reminders"] else "")
    return Export(text, len(memories), len(events), len(turns))


def _one_line(value: str) -> str:
    return " ".join(value.split())


def markdown(owner: str, exported_at: str, memories: list[Memory], events: list[Event]) -> str:
    """The export as Markdown: tiers, projects, then events by day."""
    lines = [f"# tierclaw memory export: {owner}", "", f"Exported {exported_at}."]
    titles = {1: "Tier 1: core profile", 2: "Tier 2: knowledge"}
    for tier in (1, 2):
        in_tier = [m for m in memories if m.tier == tier]
        if not in_tier:
            continue
        lines += ["", f"## {titles[tier]}"]
        for project in sorted({m.project for m in in_tier}):
            lines += ["", f"### {project}", ""]
            for m in (m for m in in_tier if m.project == project):
                meta = [f"#{m.id}", m.topic, m.category, f"importance {m.importance:.2f}", m.created_at[:10]]
                if m.is_archived:
                    meta.append("archived")
                if m.refs:
                    meta.append("refs: " + ", ".join(m.refs))
                lines.append(f"- {_one_line(m.content)} _({'; '.join(meta)})_")
    if events:
        lines += ["", "## Tier 3: daily events"]
        for day in sorted({e.event_date for e in events}):
            lines += ["", f"### {day}", ""]
            for e in (e for e in events if e.event_date == day):
                body = e.summary.strip().replace("\n", "\n  ")
                lines.append(f"- ({e.channel}) {body}")
    return "\n".join(lines) + "\n"


def _markdown_rest(scratchpad: str, turns: list[TurnRow]) -> str:
    """The scratchpad and what was said, after the memories and events."""
    lines: list[str] = []
    if scratchpad:
        lines += ["", "## Scratchpad", "", scratchpad]
    if turns:
        lines += ["", "## What was said"]
        day = ""
        for t in turns:
            if t.created_at[:10] != day:
                day = t.created_at[:10]
                lines += ["", f"### {day}", ""]
            lines.append(f"- {t.created_at[11:16]} ({t.channel}) {t.role}: {_one_line(t.content)}")
    return "\n".join(lines) + "\n" if lines else ""


def _attachment_lines(kept: list[AttachmentRow]) -> list[str]:
    """The voice notes, photos and files kept, one line each (their bytes stay in the database)."""
    if not kept:
        return []
    lines = ["\n## Attachments\n\n"]
    for a in kept:
        what = _one_line(a.transcription or a.description or a.caption)[:200]
        lines.append(f"- #{a.id} {a.created_at[:16]} {a.direction} {a.kind} {a.file_name or '-'}: {what}\n")
    return lines
