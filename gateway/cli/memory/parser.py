"""``tierclaw memory …``: inspect and curate one owner's long-term memory from the terminal.

Every subcommand takes ``--db`` (default: ``memory.dbPath`` of the config, which ``$TIERCLAW_MEMORY_DB``
overrides; ``~/.tierclaw/data/memory.db`` out of the box), ``--config`` and ``--owner``, before or after
its name. Without ``--owner`` a command means the only owner in the database, the owner of the memory it
names (``show``/``edit``/``forget ID``), or every owner (``owners``, ``flush``, ``retry``, ``reindex``,
``compress``); with several owners and none of those, it lists them and asks for ``--owner``. Each runs
one ``asyncio.run`` and turns every expected failure (missing or corrupt database, invalid values,
unknown ids, bad import files) into a one-line message on stderr with exit status 2 — never a traceback.
Read-only commands never create the database. ``reindex`` exits 1 when embeddings are off or the
embedder fails (what was embedded is kept).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.cli.memory import commands
from gateway.cli.memory.common import (
    ALL_OWNERS,
    BY_ID,
    CLI_QUERY_TIMEOUT_SECONDS,
    DB_ENV,
    DEFAULT_DB,
    ONE_OWNER,
    REINDEX_BATCH_SIZE,
    CliError,
    Command,
    choose_owner,
    fail,
    load_cli_config,
)
from gateway.cli.memory.copy_command import add_copy_parser
from memory.retrieval.decay import CATEGORIES

if TYPE_CHECKING:
    from gateway.config import Config
    from memory.engine import MemoryEngine

log = logging.getLogger("tierclaw.cli")


def _location_options(parser: argparse.ArgumentParser) -> None:
    """``--db`` and ``--owner``: accepted on ``memory`` itself and on each of its subcommands (SUPPRESS
    defaults: see ``gateway/cli/options.py``)."""
    parser.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        help=(
            "memory database, a file or a postgresql:// URL "
            f"(default: the config's memory, ${DB_ENV}, or {DEFAULT_DB})"
        ),
        metavar="PATH|URL",
    )
    parser.add_argument(
        "--owner",
        default=argparse.SUPPRESS,
        help="whose memory (default: the only owner in the database; `tierclaw memory owners` lists them)",
    )


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output (JSON)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memory`` and its subcommands to the ``tierclaw`` parser."""
    common = argparse.ArgumentParser(add_help=False)
    _location_options(common)
    parser = subparsers.add_parser(
        "memory", help="inspect and curate long-term memory", description="Inspect and curate memory."
    )
    _location_options(parser)
    parser.set_defaults(func=lambda _args: _print_help(parser))
    subparsers_of_memory = parser.add_subparsers(dest="memory_command", metavar="COMMAND")
    sub = _Subcommands(subparsers_of_memory, common)
    _register_reading(sub)
    _register_attachments(sub)
    _register_curating(sub)
    _register_transfer(sub)
    _register_jobs(sub)
    add_copy_parser(subparsers_of_memory)  # it opens two databases, so it takes no --db (copy_command.py)


class _Subcommands:
    """Adds one ``memory`` subcommand: its parser (with ``--db``/``--owner``) and what runs it."""

    def __init__(self, sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
        self._sub, self._common = sub, common

    def add(
        self,
        name: str,
        help_text: str,
        command: Command,
        *,
        must_exist: bool,
        owner: str = ONE_OWNER,
        prepare: Callable[[argparse.Namespace], None] | None = None,
    ) -> argparse.ArgumentParser:
        """``command`` is a function of ``commands.py`` (it imports its module when it runs, not for
        --help); ``owner`` says what an absent ``--owner`` means (``_default_owner``); ``prepare`` checks
        the inputs before the database is opened."""
        p = self._sub.add_parser(name, parents=[self._common], help=help_text, description=help_text)
        _json_option(p)  # every subcommand prints what it found or did as JSON on request
        p.set_defaults(
            func=lambda args: execute(command, args, must_exist=must_exist, owner_mode=owner, prepare=prepare)
        )
        return p


def _register_reading(sub: _Subcommands) -> None:
    """The read-only commands: owners, stats, list, search, events, scratchpad, show."""
    sub.add(
        "owners",
        "the owners this database holds, with their counts and last activity",
        commands.owners,
        must_exist=True,
        owner=ALL_OWNERS,
    )

    p = sub.add("stats", "counts per tier, archived, events, buffered turns", commands.stats, must_exist=True)
    p.add_argument("--all-owners", action="store_true", help="count every owner's rows")

    p = sub.add("list", "list memories, newest first", commands.list_, must_exist=True)
    p.add_argument("--tier", type=int, choices=(1, 2))
    p.add_argument("--project")
    p.add_argument("--archived", action="store_true", help="include archived memories")
    p.add_argument("--limit", type=_positive_int, default=50, metavar="N", help="at most N (default 50)")

    p = sub.add("search", "ranked search over tiers 1 and 2", commands.search, must_exist=True)
    p.add_argument("query")
    p.add_argument("--k", type=_positive_int, default=10, metavar="N", help="at most N hits (default 10)")
    p.add_argument(
        "--turns", action="store_true", help="search what was said (every kept conversation turn) instead"
    )

    p = sub.add("events", "episodes (Tier 3): what happened, newest first", commands.events, must_exist=True)
    p.add_argument("--since", type=_day, metavar="YYYY-MM-DD")
    p.add_argument("--until", type=_day, metavar="YYYY-MM-DD")
    p.add_argument("--query", help="only episodes matching these words (best first)")
    p.add_argument("--limit", type=_positive_int, default=20, metavar="N", help="at most N (default 20)")

    p = sub.add(
        "scratchpad",
        "the owner's scratchpad note (what is going on): print, --edit in $EDITOR, --set TEXT or --clear",
        commands.scratchpad,
        must_exist=True,
    )
    change = p.add_mutually_exclusive_group()
    change.add_argument("--edit", action="store_true", help="edit it in $EDITOR (then saved)")
    change.add_argument("--set", metavar="TEXT", help="replace it with TEXT")
    change.add_argument("--clear", action="store_true", help="delete it")

    p = sub.add(
        "show",
        "one memory with every field (its sources, dates, what superseded it)",
        commands.show,
        must_exist=True,
        owner=BY_ID,
    )
    p.add_argument("id", type=int)


def _register_attachments(sub: _Subcommands) -> None:
    """``attachments``: the voice notes, photos and files kept (list, search, save, forget)."""
    p = sub.add(
        "attachments",
        "voice notes, photos and files kept, newest first (--search Q, --save ID -o FILE, --forget ID)",
        commands.attachments,
        must_exist=True,
    )
    p.add_argument("--kind", help="only this kind (voice, photo, image, document, file, video, …)")
    p.add_argument("--search", metavar="Q", help="find them by what they held, their name or caption")
    p.add_argument("--save", type=_positive_int, metavar="ID", help="write attachment ID's file (-o FILE)")
    p.add_argument("-o", "--output", metavar="FILE", help="where --save writes (default: its name)")
    p.add_argument("--forget", type=_positive_int, metavar="ID", help="delete attachment ID and its file")
    p.add_argument("--limit", type=_positive_int, default=50, metavar="N", help="at most N (default 50)")


def _register_curating(sub: _Subcommands) -> None:
    """The commands that change memories: add, edit, forget, restore."""
    p = sub.add(
        "add",
        "add a memory through the clean write path",
        commands.add,
        must_exist=False,
        prepare=commands.prepare_add,
    )
    p.add_argument("text")
    _fact_options(p)
    p.add_argument("--subject", help="with --predicate: a newer fact supersedes the old one")
    p.add_argument("--predicate")

    p = sub.add("edit", "change fields of a live memory", commands.edit, must_exist=True, owner=BY_ID)
    p.add_argument("id", type=int)
    p.add_argument("--content")
    _fact_options(p)

    p = sub.add(
        "forget",
        "archive a memory (or delete it for good with --purge)",
        commands.forget,
        must_exist=True,
        owner=BY_ID,
    )
    p.add_argument("id", type=int)
    p.add_argument("--purge", action="store_true", help="delete permanently instead of archiving")
    p.add_argument("--yes", action="store_true", help="do not ask before purging")

    p = sub.add(
        "restore",
        "make an archived (forgotten or superseded) memory live again",
        commands.restore,
        must_exist=True,
        owner=BY_ID,
    )
    p.add_argument("id", type=int)


def _register_transfer(sub: _Subcommands) -> None:
    """The commands that move memories in and out: export, import, migrate."""
    p = sub.add(
        "export",
        "export the owner's memories and events (--json: the JSON export, or with -o what was written)",
        commands.export,
        must_exist=True,
        prepare=commands.prepare_export,
    )
    p.add_argument("--format", choices=("json", "md"), default="json")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    p = sub.add(
        "import",
        "import a JSON export (idempotent)",
        commands.import_,
        must_exist=False,
        prepare=commands.prepare_import,
    )
    p.add_argument("file")

    p = sub.add(
        "migrate",
        "import file memory (MEMORY.md, YYYY-MM-DD.md)",
        commands.migrate,
        must_exist=False,
        prepare=commands.prepare_migrate,
    )
    p.add_argument("--workspace", required=True, metavar="DIR")


def _register_jobs(sub: _Subcommands) -> None:
    """The commands that run memory jobs now: retry, flush, reindex, compress (every owner by default)."""
    p = sub.add(
        "retry",
        "re-queue turns whose extraction failed too often (dead letters); all owners unless --owner",
        commands.retry,
        must_exist=True,
        owner=ALL_OWNERS,
    )
    p.add_argument("--now", action="store_true", help="extract them now with the configured memory model")

    p = sub.add(
        "flush",
        "extract every buffered message into memories now (all owners unless --owner)",
        commands.flush,
        must_exist=True,
        owner=ALL_OWNERS,
    )
    p.add_argument("--all", action="store_true", help="every owner (the default without --owner)")

    p = sub.add(
        "reindex",
        "give every live memory a vector of the configured embedding model (resumable); "
        "all owners unless --owner",
        commands.reindex,
        must_exist=True,
        owner=ALL_OWNERS,
    )
    p.add_argument(
        "--batch-size",
        type=_positive_int,
        default=REINDEX_BATCH_SIZE,
        metavar="N",
        help=f"memories per embedder call (default {REINDEX_BATCH_SIZE})",
    )
    p.add_argument(
        "--turns",
        action="store_true",
        help="embed the kept conversation turns (what conversation_search reads) instead of the memories",
    )

    p = sub.add(
        "compress",
        "run the daily or weekly compression job now (every owner)",
        commands.compress,
        must_exist=True,
        owner=ALL_OWNERS,
    )
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


def _day(value: str) -> str:
    import datetime

    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {value!r}") from None
    return value


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


def memory_target(given: str | None, config: Config) -> Path | str:
    """``--db`` (a file path or a ``postgresql://`` URL), else the configured memory."""
    from memory.store.urls import is_database_url

    if given:
        return given if is_database_url(given) else Path(given).expanduser()
    target = config.memory_target()
    return target if is_database_url(target) else Path(target)


def execute(
    command: Command,
    args: argparse.Namespace,
    *,
    must_exist: bool,
    owner_mode: str,
    prepare: Callable[[argparse.Namespace], None] | None = None,
) -> int:
    """Open the database, run one command, close; map expected failures to a message and exit 2."""
    from memory.store.errors import MemoryDatabaseError

    args.db = getattr(args, "db", None)
    args.owner = getattr(args, "owner", None)
    args.owner_given = args.owner is not None
    try:
        args.loaded_config = load_cli_config(args)
        args.db_path = memory_target(args.db, args.loaded_config)
        if must_exist and isinstance(args.db_path, Path) and not args.db_path.exists():
            raise CliError(
                f"memory database not found: {args.db_path} "
                "(run tierclaw memory add, or point --db at an existing file)"
            )
        return asyncio.run(_with_engine(command, args, must_exist, owner_mode, prepare))
    except CliError as exc:
        return fail(str(exc), exc.code)
    except MemoryDatabaseError as exc:
        return fail(str(exc))
    except (ValueError, KeyError) as exc:
        return fail(str(exc.args[0]) if exc.args else type(exc).__name__)
    except BrokenPipeError:
        raise  # the reader of the output went away (| head): ended quietly in cli/main.py
    except OSError as exc:
        return fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
    except Exception as exc:  # the promise is "no traceback": say what failed, details at DEBUG
        log.debug("[gateway] unexpected error", exc_info=True)
        return fail(f"unexpected error: {type(exc).__name__}: {exc} (rerun with --log-level DEBUG)", 1)


async def _with_engine(
    command: Command,
    args: argparse.Namespace,
    must_exist: bool,
    owner_mode: str,
    prepare: Callable[[argparse.Namespace], None] | None,
) -> int:
    from gateway.cli.memory.jobs import configured_embedder
    from memory.engine import MemoryEngine

    if prepare is not None:
        prepare(args)  # validate inputs before the database is opened (or created)
    engine = await MemoryEngine.open(args.db_path, create=not must_exist, warm_text=False)
    try:
        if args.owner is None and owner_mode != ALL_OWNERS and not getattr(args, "all_owners", False):
            args.owner = await _default_owner(engine, args, owner_mode)
        engine.embedder = configured_embedder(args.loaded_config, engine)
        # The person at the terminal waits for the model to load on the first search (up to seconds on a
        # cold start); the reply path's queryTimeoutMs bound is for chats, not for this.
        engine.embedding.query_timeout = CLI_QUERY_TIMEOUT_SECONDS
        return await command(engine, args)
    finally:
        if engine.embedder is not None:
            await engine.embedder.close()
        await engine.close()


async def _default_owner(engine: MemoryEngine, args: argparse.Namespace, owner_mode: str) -> str:
    """Whose memory a command without ``--owner`` means: the owner of the memory it names (``show ID``),
    else the only owner in the database (``console:local`` in an empty one); several is a usage error
    that lists them."""
    if owner_mode == BY_ID:
        owner = await engine.owner_of(args.id)
        if owner is None:
            raise CliError(f"no memory #{args.id} (tierclaw memory list shows the ids)")
        return owner
    return choose_owner(sorted(await engine.owner_activity()))
