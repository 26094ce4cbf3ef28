"""``tierclaw memory …``: inspect and curate one owner's long-term memory from the terminal.

Every subcommand takes ``--db`` (default: ``memory.dbPath`` of the config, which ``$TIERCLAW_MEMORY_DB``
overrides; ``~/.tierclaw/data/memory.db`` out of the box), ``--config`` and ``--owner`` (default
``console:local``), runs one ``asyncio.run``, and turns every expected failure
(missing or corrupt database, invalid values, unknown ids, bad import files) into a one-line message on
stderr with exit status 2 — never a traceback. Read-only commands never create the database.
``reindex`` exits 1 when embeddings are off or the embedder fails (what was embedded is kept).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import shutil
import sys
import time
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.config import Config, ConfigError, load_config
from memory.clock import from_db
from memory.engine import MemoryDatabaseError, MemoryEngine
from memory.files.migrate import migrate_files
from memory.records import PROFILE_TOPIC, Event, Fact, Memory
from memory.retrieval.decay import CATEGORIES
from memory.vectors.cache import CachedEmbedder

if TYPE_CHECKING:
    from memory.vectors.embedding import EmbeddingSettings

log = logging.getLogger("tierclaw.cli")

DEFAULT_OWNER = "console:local"
CLI_QUERY_TIMEOUT_SECONDS = 60.0
DB_ENV = "TIERCLAW_MEMORY_DB"
DEFAULT_DB = "~/.tierclaw/data/memory.db"
EXPORT_FORMAT = "tierclaw-memory-export"
EXPORT_VERSION = 1
# Used when the terminal width is unknown (output piped); a real terminal's width wins.
TABLE_WIDTH = 100
MIN_TABLE_WIDTH = 70
# Widest a non-content column may get before it is truncated.
MAX_COLUMN = 24
PAGE = 1000
# tierclaw memory reindex: memories per embedder call, width of the progress bar, redraws per second.
REINDEX_BATCH_SIZE = 64
BAR_WIDTH = 30
BAR_REDRAW_SECONDS = 0.1

Command = Callable[[MemoryEngine, argparse.Namespace], Awaitable[int]]


class CliError(Exception):
    """An expected failure: the message is printed as is, the process exits with ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------- registration


def load_cli_config(args: argparse.Namespace) -> Config:
    """The configuration for this command (``--config``, env overrides); a bad file is a CliError."""
    try:
        return load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memory`` and its subcommands to the ``tierclaw`` parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        default=None,
        help=f"memory database (default: memory.dbPath of the config, ${DB_ENV}, or {DEFAULT_DB})",
        metavar="PATH",
    )
    common.add_argument(
        "--config", default=None, metavar="PATH", help="config file (for defaults and models)"
    )
    common.add_argument("--owner", default=None, help=f"whose memory (default {DEFAULT_OWNER})")

    parser = subparsers.add_parser(
        "memory", help="inspect and curate long-term memory", description="Inspect and curate memory."
    )
    parser.set_defaults(func=lambda _args: _print_help(parser))
    sub = parser.add_subparsers(dest="memory_command", metavar="COMMAND")

    def add(name: str, help_text: str, command: Command, *, must_exist: bool) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(func=lambda args: execute(command, args, must_exist=must_exist))
        return p

    p = add("stats", "counts per tier, archived, events, buffered turns", _stats, must_exist=True)
    p.add_argument("--all-owners", action="store_true", help="count every owner's rows")

    p = add("list", "list memories, newest first", _list, must_exist=True)
    p.add_argument("--tier", type=int, choices=(1, 2))
    p.add_argument("--project")
    p.add_argument("--archived", action="store_true", help="include archived memories")
    p.add_argument("--limit", type=int, default=50)

    p = add("search", "ranked search over tiers 1 and 2", _search, must_exist=True)
    p.add_argument("query")
    p.add_argument("--k", type=int, default=10)

    p = add("add", "add a memory through the clean write path", _add, must_exist=False)
    p.add_argument("text")
    _fact_options(p)
    p.add_argument("--subject", help="with --predicate: a newer fact supersedes the old one")
    p.add_argument("--predicate")

    p = add("edit", "change fields of a live memory", _edit, must_exist=True)
    p.add_argument("id", type=int)
    p.add_argument("--content")
    _fact_options(p)

    p = add("forget", "archive a memory (or delete it for good with --purge)", _forget, must_exist=True)
    p.add_argument("id", type=int)
    p.add_argument("--purge", action="store_true", help="delete permanently instead of archiving")
    p.add_argument("--yes", action="store_true", help="do not ask before purging")

    p = add("export", "export the owner's memories and events", _export, must_exist=True)
    p.add_argument("--format", choices=("json", "md"), default="json")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    p = add("import", "import a JSON export (idempotent)", _import, must_exist=False)
    p.add_argument("file")

    p = add("migrate", "import file memory (MEMORY.md, YYYY-MM-DD.md)", _migrate, must_exist=False)
    p.add_argument("--workspace", required=True, metavar="DIR")

    p = add(
        "retry",
        "re-queue turns whose extraction failed too often (dead letters); all owners unless --owner",
        _retry,
        must_exist=True,
    )
    p.add_argument("--now", action="store_true", help="extract them now with the configured memory model")

    p = add(
        "reindex",
        "give every live memory a vector of the configured embedding model (resumable); "
        "all owners unless --owner",
        _reindex,
        must_exist=True,
    )
    p.add_argument(
        "--batch-size",
        type=_positive_int,
        default=REINDEX_BATCH_SIZE,
        metavar="N",
        help=f"memories per embedder call (default {REINDEX_BATCH_SIZE})",
    )

    p = add("compress", "run the daily or weekly compression job now", _compress, must_exist=True)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--daily", action="store_true", help="Tier 3 events up to yesterday -> Tier 2 facts")
    which.add_argument(
        "--weekly", action="store_true", help="merge partitions, refresh Tier 1, archive decayed"
    )


def _fact_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tier", type=int, choices=(1, 2))
    p.add_argument("--project")
    p.add_argument("--topic")
    p.add_argument("--category", type=_category, metavar="{" + ",".join(CATEGORIES) + "}")
    p.add_argument("--importance", type=_importance, metavar="0..1")


# Validated while parsing, so that a bad value never gets as far as creating the database.
def _category(value: str) -> str:
    if value not in CATEGORIES:
        raise argparse.ArgumentTypeError(f"category must be one of {', '.join(CATEGORIES)}; got {value!r}")
    return value


def _importance(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"importance must be a number within [0, 1], got {value!r}")
    return number


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value!r}")
    return number


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


# --------------------------------------------------------------------------- execution


def execute(command: Command, args: argparse.Namespace, *, must_exist: bool) -> int:
    """Open the database, run one command, close; map expected failures to a message and exit 2."""
    args.owner_given = args.owner is not None
    args.owner = args.owner or DEFAULT_OWNER
    try:
        args.loaded_config = load_cli_config(args)
        args.db_path = Path(args.db).expanduser() if args.db else args.loaded_config.db_path()
        if must_exist and not args.db_path.exists():
            raise CliError(
                f"memory database not found: {args.db_path} "
                "(run tierclaw memory add, or point --db at an existing file)"
            )
        return asyncio.run(_with_engine(command, args, must_exist))
    except CliError as exc:
        return _fail(str(exc), exc.code)
    except MemoryDatabaseError as exc:
        return _fail(str(exc))
    except (ValueError, KeyError) as exc:
        return _fail(str(exc.args[0]) if exc.args else type(exc).__name__)
    except OSError as exc:
        return _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
    except Exception as exc:  # the promise is "no traceback": say what failed, details at DEBUG
        log.debug("unexpected error", exc_info=True)
        return _fail(f"unexpected error: {type(exc).__name__}: {exc} (rerun with --log-level DEBUG)", 1)


def _fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


async def _with_engine(command: Command, args: argparse.Namespace, must_exist: bool) -> int:
    prepare = getattr(command, "prepare", None)
    if prepare is not None:
        prepare(args)  # validate inputs before the database is opened (or created)
    engine = await MemoryEngine.open(args.db_path, create=not must_exist)
    try:
        engine.embedder = _configured_embedder(args.loaded_config, engine)
        # The person at the terminal waits for the model to load on the first search (up to seconds on a
        # cold start); the reply path's queryTimeoutMs bound is for chats, not for this.
        engine.query_embed_timeout = CLI_QUERY_TIMEOUT_SECONDS
        return await command(engine, args)
    finally:
        if engine.embedder is not None:
            await engine.embedder.close()
        await engine.close()


# --------------------------------------------------------------------------- text tables


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


def _one_line(value: Any) -> str:
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
    cells = [[_one_line(c) for c in row] for row in rows]
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


async def _stats(engine: MemoryEngine, args: argparse.Namespace) -> int:
    counts = await engine.stats(None if args.all_owners else args.owner)
    print(f"database        {engine.path}")
    print(f"owner           {'(all owners)' if args.all_owners else args.owner}")
    for key in ("tier1", "tier2", "archived", "tier3_events", "buffered_turns", "owners"):
        print(f"{key:<15} {counts.get(key, 0)}")
    return 0


async def _list(engine: MemoryEngine, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    mems = await engine.list(
        args.owner, tier=args.tier, project=args.project, include_archived=args.archived, limit=args.limit
    )
    if not mems:
        print("no memories")
        return 0
    rows = [
        (
            m.id,
            m.tier,
            m.project,
            m.category,
            f"{m.importance:.2f}",
            m.created_at[:10],
            f"[archived] {m.content}" if m.is_archived else m.content,
        )
        for m in mems
    ]
    print(render_table(("id", "tier", "project", "category", "importance", "created", "content"), rows))
    return 0


async def _search(engine: MemoryEngine, args: argparse.Namespace) -> int:
    if args.k < 1:
        raise CliError("--k must be at least 1")
    hits = await engine.search(args.owner, args.query, k=args.k)
    if not hits:
        print("no matches")
        return 0
    rows = [(h.id, h.tier, h.project, h.category, f"{h.score:.3f}", h.content) for h in hits]
    print(render_table(("id", "tier", "project", "category", "score", "content"), rows))
    return 0


def _prepare_add(args: argparse.Namespace) -> None:
    if not args.text.strip():
        raise CliError("memory content must be non-empty text")
    if bool(args.subject) != bool(args.predicate):
        raise CliError("--subject and --predicate go together: give both or neither")


async def _add(engine: MemoryEngine, args: argparse.Namespace) -> int:
    tier = args.tier or 2
    fact = Fact(content=args.text, tier=tier, source="manual", subject=args.subject, predicate=args.predicate)
    if args.project:
        fact.project = args.project
    fact.topic = args.topic or (PROFILE_TOPIC if tier == 1 else fact.topic)
    if args.category:
        fact.category = args.category
    if args.importance is not None:
        fact.importance = args.importance
    result = await engine.write(args.owner, fact)
    if result.action == "merged":
        print(f"merged into #{result.id}")
    elif result.action == "superseded":
        print(f"added #{result.id}, superseding #{result.replaced_id}")
    else:
        print(f"added #{result.id}")
    return 0


_add.prepare = _prepare_add  # type: ignore[attr-defined]


async def _edit(engine: MemoryEngine, args: argparse.Namespace) -> int:
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
    print(f"edited #{mem.id}: {mem.content}")
    return 0


async def _forget(engine: MemoryEngine, args: argparse.Namespace) -> int:
    current = await engine.get(args.owner, args.id)
    if current is None:
        raise CliError(f"no memory #{args.id} for owner {args.owner}")
    if args.purge:
        if not args.yes and not _confirm(f"delete memory #{args.id} for good? [y/N] "):
            print("not deleted", file=sys.stderr)
            return 1
        if not await engine.purge(args.owner, args.id):
            raise CliError(f"no memory #{args.id} for owner {args.owner}")
        print(f"purged #{args.id}")
        return 0
    if current.is_archived:
        raise CliError(f"memory #{args.id} is already archived (use --purge to delete it for good)")
    if not await engine.archive(args.owner, args.id):
        raise CliError(f"no live memory #{args.id} for owner {args.owner}")
    print(f"archived #{args.id}")
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


async def _all_memories(engine: MemoryEngine, owner: str) -> list[Memory]:
    out: list[Memory] = []
    while True:
        page = await engine.list(owner, include_archived=True, limit=PAGE, offset=len(out))
        out += page
        if len(page) < PAGE:
            break
    out.sort(key=lambda m: m.id)
    return out


async def _all_events(engine: MemoryEngine, owner: str) -> list[Event]:
    total = (await engine.stats(owner))["tier3_events"]
    events = await engine.events(owner, limit=total + 1)
    events.sort(key=lambda e: (e.event_date, e.id))
    return events


async def _export(engine: MemoryEngine, args: argparse.Namespace) -> int:
    memories = await _all_memories(engine, args.owner)
    events = await _all_events(engine, args.owner)
    exported_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if args.format == "json":
        doc = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "owner": args.owner,
            "exported_at": exported_at,
            "memories": [dataclasses.asdict(m) for m in memories],
            "events": [dataclasses.asdict(e) for e in events],
        }
        text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    else:
        text = _markdown(args.owner, exported_at, memories, events)
    if args.output:
        out = Path(args.output).expanduser()
        out.write_text(text, encoding="utf-8")
        print(f"exported {len(memories)} memories and {len(events)} events to {out}")
    else:
        sys.stdout.write(text)
    return 0


def _markdown(owner: str, exported_at: str, memories: list[Memory], events: list[Event]) -> str:
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


def _prepare_import(args: argparse.Namespace) -> None:
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
    if not isinstance(doc.get("memories", []), list) or not isinstance(doc.get("events", []), list):
        raise CliError(f'{path}: "memories" and "events" must be lists')
    args.document = doc
    if not args.owner_given and isinstance(doc.get("owner"), str) and doc["owner"].strip():
        args.owner = doc["owner"]


async def _import(engine: MemoryEngine, args: argparse.Namespace) -> int:
    doc = args.document
    facts: list[Fact] = []
    primary: list[int] = []  # index in facts of each memory's first write
    archived = 0
    for n, rec in enumerate(doc.get("memories", []), start=1):
        try:
            if rec.get("is_archived"):
                archived += 1
                continue
            refs = [r for r in rec.get("refs") or [] if r] or (
                [rec["source_ref"]] if rec.get("source_ref") else []
            )
            base = Fact(
                content=rec["content"],
                tier=int(rec.get("tier", 2)),
                project=rec.get("project") or "_global",
                topic=rec.get("topic") or "_general",
                category=rec.get("category") or "event",
                importance=float(rec.get("importance", 0.5)),
                source=rec.get("source") or "import",
                source_ref=refs[0] if refs else None,
                subject=rec.get("subject"),
                predicate=rec.get("predicate"),
                created_at=from_db(rec["created_at"]) if rec.get("created_at") else None,
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise CliError(
                f"memory record {n} of {args.file} is malformed ({type(exc).__name__}: {exc})"
            ) from exc
        primary.append(len(facts))
        facts.append(base)
        # Further refs: the same fact again merges into the row just written and adds its ref.
        facts += [dataclasses.replace(base, source_ref=ref) for ref in refs[1:]]
    results = await engine.write_many(args.owner, facts) if facts else []
    imported = sum(1 for i in primary if results[i].action != "merged")
    present = len(primary) - imported

    events_imported = events_present = 0
    seen: dict[str, set[str]] = {}
    for n, rec in enumerate(doc.get("events", []), start=1):
        try:
            day, summary = str(rec["event_date"]), rec["summary"]
            if day not in seen:
                existing = await engine.events(args.owner, since=day, until=day, limit=1_000_000)
                seen[day] = {e.summary for e in existing}
            if summary in seen[day]:
                events_present += 1
                continue
            await engine.add_event(
                args.owner,
                summary,
                event_date=day,
                channel=rec.get("channel") or "import",
                sender_id=rec.get("sender_id") or "",
                raw_tokens=int(rec.get("raw_tokens") or 0),
                source_ref=rec.get("source_ref"),
            )
        except (AttributeError, KeyError, TypeError) as exc:
            raise CliError(
                f"event record {n} of {args.file} is malformed ({type(exc).__name__}: {exc})"
            ) from exc
        seen[day].add(summary)
        events_imported += 1
    print(
        f"owner {args.owner}: memories {imported} imported, {present} already present, "
        f"{archived} archived skipped; events {events_imported} imported, {events_present} already present"
    )
    return 0


_import.prepare = _prepare_import  # type: ignore[attr-defined]


def _prepare_migrate(args: argparse.Namespace) -> None:
    directory = Path(args.workspace).expanduser() / "memory"
    if not directory.is_dir():
        raise CliError(f"no file memory to migrate: {directory} is not a directory")


async def _migrate(engine: MemoryEngine, args: argparse.Namespace) -> int:
    report = await migrate_files(engine, Path(args.workspace).expanduser(), args.owner)
    print(f"owner {args.owner}")
    print(report.summary())
    return 0


_migrate.prepare = _prepare_migrate  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- message-path maintenance


async def _with_memory_jobs(engine: MemoryEngine, args: argparse.Namespace, body) -> int:
    """Build the configured memory model, extraction service and jobs around ``engine`` for ``body``."""
    # Imported here: the message-path modules pull in openai and apscheduler, which the browsing
    # commands never need.
    from gateway.app import memory_services
    from gateway.providers import build_models

    models = build_models(args.loaded_config)
    extraction, jobs = memory_services(args.loaded_config, engine, models.memory)
    try:
        return await body(extraction, jobs, models.memory.label)
    finally:
        await extraction.close()
        await models.close()


async def _retry(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from memory.pipeline.buffer import ExtractionBuffer

    owner = args.owner if args.owner_given else None
    count = await ExtractionBuffer(engine).requeue_dead(owner)
    if not count:
        print("no dead letters to re-queue")
        return 0
    print(f"re-queued {count} turns")
    if not args.now:
        print("the gateway extracts them at the owner's next message or the daily sweep (or use --now)")
        return 0

    async def run(extraction, _jobs, label: str) -> int:
        owners = [b.owner for b in await extraction.buffer.backlog(owner)]
        failed = 0
        for who in owners:
            result = await extraction.flush(who, force=True)
            failed += result.failed
            print(f"{who}: {result.turns} turns extracted with {label}, {result.facts} facts")
        return 1 if failed else 0

    return await _with_memory_jobs(engine, args, run)


async def _compress(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.scheduler import DAILY_JOB, WEEKLY_JOB

    async def run(_extraction, jobs, label: str) -> int:
        name = DAILY_JOB if args.daily else WEEKLY_JOB
        outcome = await jobs.run(name)
        print(f"{name} ({label}): {outcome}")
        return 1 if "failed" in outcome else 0

    return await _with_memory_jobs(engine, args, run)


# --------------------------------------------------------------------------- embeddings


def _embedding_settings(config: Config) -> EmbeddingSettings:
    """The embedding settings of ``config`` (``memory.embedding``)."""
    return config.memory.embedding.settings()


def _configured_embedder(config: Config, engine: MemoryEngine) -> CachedEmbedder | None:
    """The configured embedder behind the vector cache, or None when embeddings are off.

    Nothing loads until a command embeds something (``search`` ranks like the assistant, writes get
    their vectors and semantic dedup); ``list``, ``stats`` and ``export`` never touch the model.
    """
    from memory.vectors import embedding  # looked up at call time, so tests can substitute a backend

    try:
        inner = embedding.build_embedder(_embedding_settings(config))
    except ValueError as exc:
        raise CliError(f"memory.embedding: {exc}") from None
    return CachedEmbedder(inner, engine) if inner is not None else None


def _reindex_embedder(engine: MemoryEngine) -> CachedEmbedder:
    """The configured embedder behind the persistent vector cache; CliError (exit 1) when embeddings are off.

    The cache means a reindex after switching models back and forth reuses the vectors made before.
    """
    embedder = engine.embedder if isinstance(engine.embedder, CachedEmbedder) else None
    if embedder is None:
        raise CliError('embeddings are off: set memory.embedding.provider to "local" or "openai"', 1)
    return embedder


def _memories(n: int) -> str:
    return f"{n} memory" if n == 1 else f"{n} memories"


class _ReindexProgress:
    """``progress(done, total)`` for reindex: a bar redrawn in place on a terminal, silent otherwise."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.done = 0
        self.total = 0
        self._drawn = 0.0
        self._width = 0

    def rate(self) -> float:
        """Memories per second since the start."""
        return self.done / max(time.monotonic() - self.started, 1e-6)

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if not self.tty or not total or (now - self._drawn < BAR_REDRAW_SECONDS and done < total):
            return
        self._drawn = now
        filled = BAR_WIDTH * done // total
        line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} memories, {self.rate():.0f}/s"
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def end_line(self) -> None:
        """Leave the bar's line, so that what is printed next starts on its own."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


async def _reindex(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from memory.vectors.reindex import EmbeddingError, reindex

    owner = args.owner if args.owner_given else None
    scope = f" of {owner}" if owner else ""
    embedder = _reindex_embedder(engine)  # closed by _with_engine
    model_key = embedder.model_key
    progress = _ReindexProgress(sys.stderr)
    try:
        # Known before the first batch, so that an early Ctrl-C or failure can say "0 of N", and the bar
        # shows up while a local model is still loading.
        progress(0, await engine.count_missing_embeddings(model_key, owner))
        result = await reindex(engine, embedder, owner=owner, batch_size=args.batch_size, progress=progress)
    except EmbeddingError as exc:
        progress.end_line()
        _fail(str(exc), 1)
        if progress.done:
            print(
                f"{progress.done} of {progress.total} memories{scope} were embedded and kept; "
                "run tierclaw memory reindex again to resume",
                file=sys.stderr,
            )
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl-C: asyncio.run cancels this task (or the interrupt lands here directly). The batches stored
        # so far stay; the exit status is the usual one for SIGINT.
        progress.end_line()
        print(
            f"interrupted after {progress.done} of {progress.total} memories{scope}; finished batches are "
            "saved, run tierclaw memory reindex again to resume",
            file=sys.stderr,
        )
        return 130
    progress.end_line()
    if not result.done:
        print(f"nothing to reindex: every live memory{scope} has a {model_key} vector")
        return 0
    rate = result.done / result.seconds if result.seconds > 0 else 0.0
    line = f"embedded {_memories(result.embedded)}{scope} with {model_key}"
    line += f" in {result.seconds:.1f}s ({rate:.0f}/s)"
    if result.skipped:
        line += f"; {result.skipped} changed while being embedded: run it again to embed them"
    if result.refused:
        line += f"; {result.refused} refused by the embedder (--log-level DEBUG says which), left without"
    print(line)
    return 0
