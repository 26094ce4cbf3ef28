"""One-shot migration of file memory into SQLite (docs/architecture.md, "Extraction and compression", file
memory).

``MEMORY.md``: each non-empty, non-heading line becomes a Tier 1 memory (identity, importance 1.0,
``_global``/``_profile``, source ``migration``, source_ref ``MEMORY.md:<line>``), written through the
engine's clean path so duplicates merge. Each ``YYYY-MM-DD.md`` becomes one Tier 3 event of that date
(source_ref = the file name). Running it again imports nothing: a line whose write merges into an
existing memory and a file whose event already exists count as "present". Source files are only read.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory.engine import MemoryEngine
from memory.files.file_memory import LONG_TERM_FILE, parse_day_name
from memory.records import GLOBAL_PROJECT, PROFILE_TOPIC, Fact
from memory.writes import MAX_CONTENT_CHARS

log = logging.getLogger("tierclaw.memory")

MIGRATION_SOURCE = "migration"
MIGRATION_CHANNEL = "migration"
# "- ", "* ", "+ ", "1. ", "1) " and a task box "[ ] "/"[x] " after a bullet.
_LIST_MARKER = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass(slots=True)
class MigrationReport:
    """What one migration run did."""

    memories_imported: int = 0
    memories_present: int = 0
    events_imported: int = 0
    events_present: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        """Human-readable lines for the CLI."""
        lines = [
            f"memories: {self.memories_imported} imported, {self.memories_present} already present",
            f"events:   {self.events_imported} imported, {self.events_present} already present",
        ]
        if self.skipped:
            lines.append(f"skipped:  {len(self.skipped)}")
            lines += [f"  {name}: {reason}" for name, reason in self.skipped]
        return "\n".join(lines)


def profile_line(raw: str) -> str | None:
    """The memory a ``MEMORY.md`` line holds, or None for blank lines, headings and rules/fences."""
    line = raw.strip()
    if not line or line.startswith("#"):
        return None
    line = _LIST_MARKER.sub("", line, count=1).strip()
    # Markdown scaffolding ("---", "```", a bare "-") carries no fact.
    if not any(ch.isalnum() for ch in line):
        return None
    return line


async def migrate_files(
    engine: MemoryEngine,
    workspace: Path | str,
    owner: str,
    progress: Callable[[int, int], None] | None = None,
) -> MigrationReport:
    """Import ``<workspace>/memory/`` into the engine for ``owner``; safe to run again.

    ``progress(done, total)`` is called with files handled so far (for a progress bar)."""
    report = MigrationReport()
    directory = Path(workspace) / "memory"
    if not directory.is_dir():
        report.skipped.append(("memory/", "directory not found"))
        _log(owner, report)
        return report

    daily = [p for p in sorted(directory.iterdir()) if p.name != LONG_TERM_FILE and p.suffix == ".md"]
    total = len(daily) + 1
    tick = progress or (lambda _done, _total: None)
    tick(0, total)
    await _migrate_long_term(engine, directory / LONG_TERM_FILE, owner, report)
    for done, path in enumerate(daily, start=1):
        tick(done, total)
        day = parse_day_name(path.name)
        if day is None:
            report.skipped.append((path.name, "not a YYYY-MM-DD.md daily file"))
            continue
        if not path.is_file():
            report.skipped.append((path.name, "not a regular file"))
            continue
        text = _read_text(path, report)
        if text is None:
            continue
        text = text.strip()
        if not text:
            report.skipped.append((path.name, "empty"))
            continue
        if await engine.events.find(owner, source_ref=path.name, limit=1):
            report.events_present += 1
            continue
        await engine.events.add(owner, text, event_date=day, channel=MIGRATION_CHANNEL, source_ref=path.name)
        report.events_imported += 1
    tick(total, total)
    _log(owner, report)
    return report


async def _migrate_long_term(engine: MemoryEngine, path: Path, owner: str, report: MigrationReport) -> None:
    if not path.is_file():
        return
    text = _read_text(path, report)
    if text is None:
        return
    facts: list[Fact] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        content = profile_line(raw)
        if content is None:
            continue
        if len(content) > MAX_CONTENT_CHARS:
            report.skipped.append((f"{path.name}:{number}", f"longer than {MAX_CONTENT_CHARS} characters"))
            continue
        facts.append(
            Fact(
                content=content,
                tier=1,
                project=GLOBAL_PROJECT,
                topic=PROFILE_TOPIC,
                category="identity",
                importance=1.0,
                source=MIGRATION_SOURCE,
                source_ref=f"{path.name}:{number}",
            )
        )
    if not facts:
        return
    for result in await engine.write_many(owner, facts):
        if result.action == "merged":
            report.memories_present += 1
        else:
            report.memories_imported += 1


def _read_text(path: Path, report: MigrationReport) -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        report.skipped.append((path.name, "not UTF-8 text"))
    except OSError as exc:
        report.skipped.append((path.name, f"unreadable ({exc.strerror or exc})"))
    return None


def _log(owner: str, report: MigrationReport) -> None:
    log.info(
        "[memory] migrate owner=%s memories_imported=%d memories_present=%d events_imported=%d "
        "events_present=%d skipped=%d",
        owner,
        report.memories_imported,
        report.memories_present,
        report.events_imported,
        report.events_present,
        len(report.skipped),
    )
