"""``tierclaw reminders [list|cancel|add]``: everyone's reminders from the command line (README
"Reminders"). ``list`` shows waiting ones (``--all``: delivered, failed, missed and cancelled too) of one
owner or of all; ``cancel N`` cancels one (``--purge`` deletes it for good); ``add "remind me …"`` makes
one through the same book as chat (``--chat CHANNEL:ID``, default the owner's latest chat). ``--json``
for scripts. Everything but the parser is imported when the command runs (``tierclaw --help`` stays light).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.engine import MemoryEngine
    from memory.store.reminders import ReminderRow


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``reminders``."""
    parser = subparsers.add_parser(
        "reminders",
        help="list, cancel or add reminders (what people asked to be told later)",
        description="Reminders of everyone in the memory database. Without an action: list.",
    )
    parser.add_argument("action", nargs="?", default="list", choices=("list", "cancel", "add"))
    parser.add_argument("what", nargs="?", default="", help="cancel: the reminder's number; add: the request")
    parser.add_argument(
        "--owner", help="whose reminders (default: everyone's for list, the only owner for add)"
    )
    parser.add_argument("--chat", help="add: where to send it, CHANNEL:ID (default: the owner's latest chat)")
    parser.add_argument("--all", action="store_true", help="list: also delivered, failed, missed, cancelled")
    parser.add_argument("--purge", action="store_true", help="cancel: delete it for good")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--db", help="a SQLite file or postgresql:// URL instead of the configured memory")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gateway.cli.memory.common import ALL_OWNERS, ONE_OWNER
    from gateway.cli.memory.parser import execute

    if args.action == "add":
        owner_mode, must_exist = ONE_OWNER, False
    else:
        owner_mode, must_exist = ALL_OWNERS, True
    return execute(_command, args, must_exist=must_exist, owner_mode=owner_mode)


async def _command(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.app import reminder_book
    from gateway.cli.memory.common import CliError

    book = reminder_book(args.loaded_config, engine)
    if book is None:
        raise CliError("reminders are turned off (reminders.enabled in the config)")
    if args.action == "add":
        return await _add(book, engine, args)
    if args.action == "cancel":
        return await _cancel(book, engine, args)
    return await _list(engine, args)


async def _list(engine: MemoryEngine, args: argparse.Namespace) -> int:
    statuses = ("pending", "delivered", "failed", "missed", "cancelled") if args.all else ("pending",)
    owners = [args.owner] if args.owner else sorted(await engine.store.reminders.counts_by_owner())
    rows = [r for owner in owners for r in await engine.store.reminders.of_owner(owner, statuses)]
    if args.json:
        print(json.dumps({"reminders": [_as_json(r) for r in rows]}, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("no reminders" + ("" if args.all else " waiting (--all shows the others)"))
        return 0
    for r in rows:
        repeat = f" [{r.repeat}]" if r.repeat else ""
        state = "" if r.status == "pending" else f" ({r.status}{': ' + r.last_error if r.last_error else ''})"
        print(
            f"{r.id:>5}  {_local(r)} {r.zone}{repeat}  {r.owner} → {r.channel}:{r.chat_id}  {r.text}{state}"
        )
    return 0


async def _cancel(book: Any, engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.common import CliError

    if not args.what.isdigit():
        raise CliError("tierclaw reminders cancel N: N is a reminder's number (tierclaw reminders list)")
    number = int(args.what)
    owners = [args.owner] if args.owner else sorted(await engine.store.reminders.counts_by_owner())
    for owner in owners:
        row = await engine.store.reminders.get(owner, number)
        if row is None:
            continue
        if args.purge:
            await book.forget(owner, number)
            done = "deleted"
        elif await book.cancel(owner, number) is not None:
            done = "cancelled"
        else:
            raise CliError(f"reminder {number} is {row.status}, not waiting (--purge deletes it)")
        print(json.dumps({done: number}) if args.json else f"{done} reminder {number}: {row.text}")
        return 0
    raise CliError(f"no reminder {number} (tierclaw reminders list shows them)")


async def _add(book: Any, engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.common import CliError
    from gateway.reminders.book import Created

    if not args.what.strip():
        raise CliError('tierclaw reminders add "remind me tomorrow at 9 to call the dentist"')
    chat = args.chat or ""
    if not chat:
        latest = await engine.store.reminders.latest_chat(args.owner)
        if latest is None and args.owner != "console:local":
            raise CliError(f"{args.owner} has no chat yet: say where with --chat CHANNEL:ID")
        chat = ":".join(latest) if latest else "console:local"
    channel, _, chat_id = chat.partition(":")
    if not channel or not chat_id:
        raise CliError(f"--chat must be CHANNEL:ID such as telegram:123456789, not {chat!r}")
    made = await book.create(args.owner, channel, chat_id, said=args.what)
    if args.json:
        body = (
            {"id": made.id, "said": made.said}
            if isinstance(made, Created)
            else {"refused": made.reason, "said": made.said}
        )
        print(json.dumps(body, ensure_ascii=False))
    else:
        print(made.said)
    return 0 if isinstance(made, Created) else 1


def _local(row: ReminderRow) -> str:
    from gateway.reminders.book import local_of

    return f"{local_of(row):%Y-%m-%d %H:%M}"


def _as_json(row: ReminderRow) -> dict[str, Any]:
    return {
        "id": row.id, "owner": row.owner, "channel": row.channel, "chat_id": row.chat_id, "text": row.text,
        "at": _local(row), "zone": row.zone, "repeat": row.repeat, "status": row.status,
        "due_utc": row.due_at[:19], "sent": row.sent_count, "last_error": row.last_error,
    }  # fmt: skip
