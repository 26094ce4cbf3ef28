"""Subcommands that read memory: owners, stats, list, search (memories or kept turns), events, show, and
the scratchpad (read, edit, set, clear)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from gateway.cli.memory.common import CliError, load_cli_config, print_json
from gateway.cli.memory.table import render_table
from memory.engine import MemoryEngine
from memory.files.private import write_private
from memory.records import Memory


async def run_owners(engine: MemoryEngine, args: argparse.Namespace) -> int:
    activity = await engine.owner_activity()
    owners = [
        {"owner": owner, **(await engine.stats(owner)), "last_activity": last}
        for owner, last in activity.items()
    ]
    for row in owners:
        row.pop("owners", None)
    if args.json:
        print_json(owners)
        return 0
    if not owners:
        print("no owners: this database holds no memories, events or buffered messages yet")
        return 0
    rows = [
        (
            o["owner"],
            o["tier1"],
            o["tier2"],
            o["archived"],
            o["tier3_events"],
            o["buffered_turns"],
            o["dead_letters"],
            o["conversation_turns"],
            f"{str(o['last_activity'])[:16]} UTC" if o["last_activity"] else "",
        )
        for o in owners
    ]
    headers = (
        *("owner", "profile", "memories", "archived", "events"),
        *("buffered", "dead letters", "turns", "last activity"),
    )
    print(render_table(headers, rows))
    return 0


# The counts of memory/counts.py, in the order printed.
STATS_KEYS = (
    *("tier1", "tier2", "archived", "tier3_events"),
    *("buffered_turns", "dead_letters", "conversation_turns", "owners"),
)


async def run_stats(engine: MemoryEngine, args: argparse.Namespace) -> int:
    counts = await engine.stats(None if args.all_owners else args.owner)
    if args.json:
        print_json({"database": str(engine.path), "owner": None if args.all_owners else args.owner, **counts})
        return 0
    print(f"database           {engine.path}")
    print(f"owner              {'(all owners)' if args.all_owners else args.owner}")
    for key in STATS_KEYS:
        print(f"{key:<18} {counts.get(key, 0)}")
    return 0


async def run_list(engine: MemoryEngine, args: argparse.Namespace) -> int:
    mems = await engine.list(
        args.owner, tier=args.tier, project=args.project, include_archived=args.archived, limit=args.limit
    )
    if args.json:
        print_json([dataclasses.asdict(m) for m in mems])
        return 0
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


async def run_search(engine: MemoryEngine, args: argparse.Namespace) -> int:
    if args.turns:
        return await _search_turns(engine, args)
    relevant, weak = await relevant_and_weak(engine, args)
    if args.json:
        weak_ids = {h.id for h in weak}
        print_json([{**dataclasses.asdict(h), "weak": h.id in weak_ids} for h in relevant + weak])
        return 0
    if not relevant and not weak:
        print("no matches")
        return 0
    columns = ("id", "tier", "project", "category", "score", "content")
    if relevant:
        print(render_table(columns, [_row(h) for h in relevant]))
    else:
        print("no relevant matches (none would be recalled in a reply)")
    if weak:
        print("\nweak (below memory.relevanceFloor: a reply would not recall these)")
        print(render_table(columns, [_row(h) for h in weak]))
    return 0


async def relevant_and_weak(engine: MemoryEngine, args: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    """The hits a reply would recall (the reply path's own floor, ``memory.relevanceFloor``, applied by
    the same ranking), then the rest of the top ``k`` as weak."""
    from gateway.app import relevance_floor

    floor = relevance_floor(load_cli_config(args))
    relevant = await engine.search(args.owner, args.query, k=args.k, floor=floor)
    kept = {h.id for h in relevant}
    every = await engine.search(args.owner, args.query, k=args.k)
    weak = [h for h in every if h.id not in kept][: max(args.k - len(relevant), 0)]
    return relevant, weak


def _row(h: Any) -> tuple[object, ...]:
    return (h.id, h.tier, h.project, h.category, f"{h.score:.3f}", h.content)


async def _search_turns(engine: MemoryEngine, args: argparse.Namespace) -> int:
    hits = await engine.conversation.search(args.owner, args.query, limit=args.k)
    if args.json:
        print_json(
            [
                {
                    "score": h.score,
                    **dataclasses.asdict(h.turn),
                    "context": [dataclasses.asdict(t) for t in h.context],
                }
                for h in hits
            ]
        )
        return 0
    if not hits:
        print("no matches")
        return 0
    rows = [
        (t.id if t is h.turn else "", t.created_at[:16], t.channel, t.role, t.content)
        for h in hits
        for t in h.context
    ]
    print(render_table(("match", "at", "channel", "role", "said"), rows))
    return 0


async def run_events(engine: MemoryEngine, args: argparse.Namespace) -> int:
    events = await engine.events.find(
        args.owner, since=args.since, until=args.until, query=args.query, limit=args.limit
    )
    if args.json:
        print_json([dataclasses.asdict(e) for e in events])
        return 0
    if not events:
        print("no episodes")
        return 0
    rows = [
        (
            e.id,
            e.event_date,
            e.outcome or "-",
            ", ".join(e.entities) or "-",
            f"{e.goal} — {e.summary}" if e.goal else e.summary,
        )
        for e in events
    ]
    print(render_table(("id", "date", "outcome", "entities", "goal — summary"), rows))
    return 0


async def run_scratchpad(engine: MemoryEngine, args: argparse.Namespace) -> int:
    if args.clear:
        cleared = await engine.scratchpad.clear(args.owner)
        print(f"cleared the scratchpad of {args.owner}" if cleared else f"{args.owner} has no scratchpad")
        return 0
    if args.set is not None or args.edit:
        text = args.set if args.set is not None else _edit((await engine.scratchpad.get(args.owner)).content)
        note = await engine.scratchpad.put(args.owner, text)
        print(
            f"saved the scratchpad of {args.owner} ({len(note.content)} characters)"
            if note.content
            else f"the scratchpad of {args.owner} is empty now"
        )
        return 0
    note = await engine.scratchpad.get(args.owner)
    if args.json:
        print_json({"owner": args.owner, "content": note.content, "updated_at": note.updated_at or None})
        return 0
    print(note.content if note.content else f"{args.owner} has no scratchpad yet")
    return 0


def _edit(text: str) -> str:
    """``text`` edited in $VISUAL / $EDITOR (vi), through a private temporary file."""
    import os
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as tmp:  # 0700: the note stays private while it is edited
        path = Path(tmp) / "scratchpad.md"
        write_private(path, text + "\n" if text else "")
        try:
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as exc:
            raise CliError(f"cannot run the editor {editor!r}: {exc.strerror or exc} (set $EDITOR)") from None
        if done.returncode != 0:
            raise CliError(f"the editor {editor!r} exited with {done.returncode}; nothing saved", 1)
        return path.read_text(encoding="utf-8")


async def run_show(engine: MemoryEngine, args: argparse.Namespace) -> int:
    mem = await engine.get(args.owner, args.id)
    if mem is None:
        raise CliError(f"no memory #{args.id} for owner {args.owner}")
    if args.json:
        print_json(dataclasses.asdict(mem))
        return 0
    fields = [
        ("id", mem.id),
        ("owner", mem.owner),
        ("state", _state(mem)),
        ("tier", f"{mem.tier} ({'core profile' if mem.tier == 1 else 'knowledge'})"),
        ("project", mem.project),
        ("topic", mem.topic),
        ("category", mem.category),
        ("importance", f"{mem.importance:.2f}"),
        ("source", mem.source),
        ("sources", ", ".join(mem.refs) or "-"),
        ("subject", f"{mem.subject} / {mem.predicate}" if mem.subject else "-"),
        ("created", mem.created_at),
        ("updated", mem.updated_at),
        ("recalled", f"{mem.access_count} times, last {mem.last_accessed}"),
    ]
    for name, value in fields:
        print(f"{name:<11} {value}")
    print()
    print(mem.content)
    return 0


def _state(mem: Memory) -> str:
    if not mem.is_archived:
        return "live"
    if mem.superseded_by is not None:
        return f"archived (superseded by #{mem.superseded_by})"
    return "archived"
