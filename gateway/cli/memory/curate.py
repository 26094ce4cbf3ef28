"""Subcommands that change memory or move it in and out: add, edit, forget, export, import, migrate
(reading it is ``listing.py``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.cli.memory.common import IMPORT_BATCH_SIZE, CliError, say
from gateway.cli.memory.progress import ProgressBar
from gateway.memory_export import EXPORT_FORMAT, EXPORT_VERSION, export_memory
from memory.clock import from_db
from memory.conversation import ROLES
from memory.engine import MemoryEngine
from memory.files.migrate import migrate_files
from memory.files.private import write_private
from memory.head.filing import file_category
from memory.model.output import parse_episode
from memory.records import PROFILE_TOPIC, Fact
from memory.text.category import category_for
from memory.text.wording import plural

if TYPE_CHECKING:
    pass

log = logging.getLogger("tierclaw.cli")


def prepare_add(args: argparse.Namespace) -> None:
    """Refuse empty text or half a subject/predicate pair before the database is created."""
    if not args.text.strip():
        raise CliError("memory content must be non-empty text")
    if bool(args.subject) != bool(args.predicate):
        raise CliError("--subject and --predicate go together: give both or neither")


async def run_add(engine: MemoryEngine, args: argparse.Namespace) -> int:
    tier = args.tier or 2
    fact = Fact(content=args.text, tier=tier, source="manual", subject=args.subject, predicate=args.predicate)
    if args.project:
        fact.project = args.project
    fact.topic = args.topic or (PROFILE_TOPIC if tier == 1 else fact.topic)
    # No --category: filed as extraction files it (the head with the configured embedder:
    # memory/head/filing.py), not a blanket "event".
    fact.category = args.category or await file_category(args.text, engine.embedder)
    if args.importance is not None:
        fact.importance = args.importance
    result = await engine.write(args.owner, fact)
    if result.action == "merged":
        text = f"merged into #{result.id}"
    elif result.action == "superseded":
        text = f"added #{result.id}, superseding #{result.replaced_id}"
    else:
        text = f"added #{result.id}"
    action = result.action if result.action in ("merged", "superseded") else "added"
    say(
        args,
        text,
        {"action": action, "id": result.id, "replaced_id": result.replaced_id, "owner": args.owner},
    )
    return 0


async def run_edit(engine: MemoryEngine, args: argparse.Namespace) -> int:
    changes = {
        k: getattr(args, k)
        for k in ("content", "project", "topic", "category", "importance", "tier")
        if getattr(args, k) is not None
    }
    if not changes:
        raise CliError(
            "nothing to change: give --content, --project, --topic, --category, --importance or --tier"
        )
    current = await engine.get(args.owner, args.id)
    if current is None:
        raise CliError(f"no memory #{args.id} for owner {args.owner}")
    if current.is_archived:
        raise CliError(f"memory #{args.id} is archived; only live memories can be edited")
    mem = await engine.edit(args.owner, args.id, **changes)
    say(args, f"edited #{mem.id}: {mem.content}", {"action": "edited", **dataclasses.asdict(mem)})
    return 0


async def run_forget(engine: MemoryEngine, args: argparse.Namespace) -> int:
    current = await engine.get(args.owner, args.id)
    if current is None:
        raise CliError(f"no memory #{args.id} for owner {args.owner}")
    if args.purge:
        if not args.yes and not _confirm(f"delete memory #{args.id} for good? [y/N] "):
            print("not deleted", file=sys.stderr)
            return 1
        if not await engine.purge(args.owner, args.id):
            raise CliError(f"no memory #{args.id} for owner {args.owner}")
        say(args, f"purged #{args.id}", {"id": args.id, "action": "purged"})
        return 0
    if current.is_archived:
        raise CliError(f"memory #{args.id} is already archived (use --purge to delete it for good)")
    if not await engine.archive(args.owner, args.id):
        raise CliError(f"no live memory #{args.id} for owner {args.owner}")
    say(args, f"archived #{args.id}", {"id": args.id, "action": "archived"})
    return 0


async def run_restore(engine: MemoryEngine, args: argparse.Namespace) -> int:
    current = await engine.get(args.owner, args.id)
    if current is None:
        raise CliError(f"no memory #{args.id} for owner {args.owner}")
    if not current.is_archived:
        raise CliError(f"memory #{args.id} is not archived")
    await engine.restore(args.owner, args.id)
    say(args, f"restored #{args.id}", {"id": args.id, "action": "restored"})
    return 0


def _confirm(prompt: str) -> bool:
    """Ask on stderr, read one line from stdin; no stdin, EOF or anything but y/yes means no."""
    print(prompt, end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline() if sys.stdin is not None else ""
    except (OSError, ValueError):
        answer = ""
    if not answer.endswith("\n"):
        print(file=sys.stderr)  # end the prompt line when there was no answer
    return answer.strip().lower() in ("y", "yes")


def prepare_export(args: argparse.Namespace) -> None:
    """``--json`` to stdout is the JSON export itself: Markdown cannot be that."""
    if args.json and args.format == "md" and not args.output:
        raise CliError("--json prints the export as JSON: leave out --format md, or write it with -o FILE")


async def run_export(engine: MemoryEngine, args: argparse.Namespace) -> int:
    export = await export_memory(engine, args.owner, "json" if args.json and not args.output else args.format)
    if args.output:
        out = Path(args.output).expanduser()
        write_private(out, export.text)  # a person's memories: readable by them alone
        text = (
            f"exported {plural(export.memories, 'memory')}, {plural(export.events, 'event')} and "
            f"{plural(export.turns, 'turn')} to {out}"
        )
        data = {"file": str(out), "format": args.format, "owner": args.owner, "memories": export.memories}
        say(args, text, {**data, "events": export.events, "turns": export.turns})
    else:
        sys.stdout.write(export.text)
    return 0


def prepare_import(args: argparse.Namespace) -> None:
    """Read and check the export file (``args.document``) before the database is created; its owner is
    the default ``--owner``."""
    path = Path(args.file).expanduser()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CliError(f"import file not found: {path}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"{path} is not a tierclaw memory export (not JSON: {exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise CliError(f'{path} is not a tierclaw memory export (expected "format": "{EXPORT_FORMAT}")')
    if doc.get("version") != EXPORT_VERSION:
        raise CliError(
            f"{path}: export version {doc.get('version')!r} is not supported (expected {EXPORT_VERSION})"
        )
    if not all(isinstance(doc.get(key) or [], list) for key in ("memories", "events", "turns")):
        raise CliError(f'{path}: "memories", "events" and "turns" must be lists')
    if not isinstance(doc.get("scratchpad") or {}, dict):
        raise CliError(f'{path}: "scratchpad" must be an object')
    args.document = doc
    if not args.owner_given and isinstance(doc.get("owner"), str) and doc["owner"].strip():
        args.owner = doc["owner"]


async def run_import(engine: MemoryEngine, args: argparse.Namespace) -> int:
    imported, present, archived = await _import_memories(engine, args)
    events_imported, events_present = await _import_events(engine, args)
    line = (
        f"owner {args.owner}: memories {imported} imported, {present} already present, "
        f"{archived} archived skipped; events {events_imported} imported, {events_present} already present"
    )
    from gateway.reminders.transfer import imported as import_reminders

    notes = await _import_notes(engine, args)
    notes += await import_reminders(engine.store, args.owner, args.document)  # "; reminders 2 imported, …"
    data = {
        "owner": args.owner,
        "memories": {"imported": imported, "present": present, "archived_skipped": archived},
        "events": {"imported": events_imported, "present": events_present},
        "notes": [note.strip() for note in notes.split(";") if note.strip()],
    }
    say(args, line + notes, data)
    return 0


async def _import_memories(engine: MemoryEngine, args: argparse.Namespace) -> tuple[int, int, int]:
    """Write the export's live memories through the clean path; returns (imported, already present,
    archived skipped)."""
    facts: list[Fact] = []
    primary: list[int] = []  # index in facts of each memory's first write
    archived = 0
    for n, rec in enumerate(args.document.get("memories", []), start=1):
        try:
            if rec.get("is_archived"):
                archived += 1
                continue
            base, refs = _fact_of(rec)
            if not rec.get("category"):  # filed as extraction files it (memory/head/filing.py)
                base.category = await file_category(base.content, engine.embedder)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise CliError(
                f"memory record {n} of {args.file} is malformed ({type(exc).__name__}: {exc})"
            ) from exc
        primary.append(len(facts))
        facts.append(base)
        # Further refs: the same fact again merges into the row just written and adds its ref.
        facts += [dataclasses.replace(base, source_ref=ref) for ref in refs[1:]]
    results = []
    with ProgressBar("importing", "memories") as bar:
        bar(0, len(facts))
        # In batches, so that the bar moves; a fact repeated for its further refs merges into the row an
        # earlier batch wrote, as it would in one batch.
        for start in range(0, len(facts), IMPORT_BATCH_SIZE):
            results += await engine.write_many(args.owner, facts[start : start + IMPORT_BATCH_SIZE])
            bar(len(results), len(facts))
    imported = sum(1 for i in primary if results[i].action != "merged")
    return imported, len(primary) - imported, archived


def _fact_of(rec: dict) -> tuple[Fact, list[str]]:
    """One exported memory record as a fact (with its first source reference) and all its references."""
    refs = [r for r in rec.get("refs") or [] if r] or ([rec["source_ref"]] if rec.get("source_ref") else [])
    fact = Fact(
        content=rec["content"],
        tier=int(rec.get("tier", 2)),
        project=rec.get("project") or "_global",
        topic=rec.get("topic") or "_general",
        category=rec.get("category") or category_for(rec["content"]),  # refiled by the caller
        importance=float(rec.get("importance", 0.5)),
        source=rec.get("source") or "import",
        source_ref=refs[0] if refs else None,
        subject=rec.get("subject"),
        predicate=rec.get("predicate"),
        created_at=from_db(rec["created_at"]) if rec.get("created_at") else None,
    )
    return fact, refs


async def _import_events(engine: MemoryEngine, args: argparse.Namespace) -> tuple[int, int]:
    """Add the export's events a day does not hold yet (same summary); returns (imported, present)."""
    events_imported = events_present = 0
    seen: dict[str, set[str]] = {}
    for n, rec in enumerate(args.document.get("events", []), start=1):
        try:
            day, summary = str(rec["event_date"]), rec["summary"]
            if day not in seen:
                existing = await engine.events.find(args.owner, since=day, until=day, limit=1_000_000)
                seen[day] = {e.summary for e in existing}
            if summary in seen[day]:
                events_present += 1
                continue
            await engine.events.add(
                args.owner,
                summary,
                event_date=day,
                channel=rec.get("channel") or "import",
                sender_id=rec.get("sender_id") or "",
                raw_tokens=int(rec.get("raw_tokens") or 0),
                source_ref=rec.get("source_ref"),
                episode=parse_episode(rec),  # goal, outcome, entities of an episode (schema 7 exports)
            )
        except (AttributeError, KeyError, TypeError) as exc:
            raise CliError(
                f"event record {n} of {args.file} is malformed ({type(exc).__name__}: {exc})"
            ) from exc
        seen[day].add(summary)
        events_imported += 1
    return events_imported, events_present


async def _import_notes(engine: MemoryEngine, args: argparse.Namespace) -> str:
    """Restore the scratchpad and the kept turns of an export — only where the database has none for
    the owner yet, so importing the same file twice adds nothing. Returns what to add to the summary."""
    doc, said = args.document, ""
    pad = (doc.get("scratchpad") or {}).get("content") or ""
    if isinstance(pad, str) and pad.strip():
        if (await engine.scratchpad.get(args.owner)).content:
            said += "; scratchpad kept (the database has one)"
        else:
            await engine.scratchpad.put(args.owner, pad)
            said += "; scratchpad imported"
    turns = doc.get("turns") or []
    if turns and await engine.conversation.count(args.owner):
        return said + f"; {len(turns)} turns skipped (this owner's conversation is already kept)"
    checked = []  # all checked before the first is written: a bad record leaves nothing half-imported
    for n, rec in enumerate(turns, start=1):
        try:
            if rec["role"] not in ROLES:
                raise ValueError(f"role must be one of {', '.join(ROLES)}")
            when = from_db(rec["created_at"])
            checked.append((str(rec["channel"]), str(rec["chat_id"]), rec["role"], str(rec["content"]), when))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            why = f"{type(exc).__name__}: {exc}"
            raise CliError(f"turn record {n} of {args.file} is malformed ({why})") from exc
    for channel, chat_id, role, content, when in checked:
        await engine.conversation.record(
            args.owner, channel=channel, chat_id=chat_id, role=role, content=content, now=when
        )
    return said + (f"; turns {len(turns)} imported" if turns else "")


def prepare_migrate(args: argparse.Namespace) -> None:
    """Refuse a workspace without a ``memory/`` folder before the database is created."""
    directory = Path(args.workspace).expanduser() / "memory"
    if not directory.is_dir():
        raise CliError(f"no file memory to migrate: {directory} is not a directory")


async def run_migrate(engine: MemoryEngine, args: argparse.Namespace) -> int:
    with ProgressBar("migrating", "files") as bar:
        report = await migrate_files(engine, Path(args.workspace).expanduser(), args.owner, bar)
    data = {
        "owner": args.owner,
        "imported": {"memories": report.memories_imported, "events": report.events_imported},
        "present": {"memories": report.memories_present, "events": report.events_present},
        "skipped": [{"file": name, "reason": reason} for name, reason in report.skipped],
    }
    say(args, f"owner {args.owner}\n{report.summary()}", data)
    return 0


# --------------------------------------------------------------------------- message-path maintenance
