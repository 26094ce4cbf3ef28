"""The ``tierclaw memory`` subcommands as plain functions, the ones ``parser.register`` points at.

Each imports the module that does the work (``listing``, ``curate``, ``jobs``) when it runs, not when the
parser is built: ``tierclaw --help`` must not pay for the engine and its libraries (start-up time is
benchmarked, ``python -m bench.cli_startup``). Being plain functions, a reader jumps from the parser
straight to them. ``prepare_…`` checks a command's inputs before the database is opened (or created).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.engine import MemoryEngine

# --------------------------------------------------------------------------- listing.py


async def owners(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_owners

    return await run_owners(engine, args)


async def stats(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_stats

    return await run_stats(engine, args)


async def list_(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_list

    return await run_list(engine, args)


async def search(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_search

    return await run_search(engine, args)


async def events(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_events

    return await run_events(engine, args)


async def scratchpad(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_scratchpad

    return await run_scratchpad(engine, args)


async def attachments(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.attachments import run_attachments

    return await run_attachments(engine, args)


async def show(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.listing import run_show

    return await run_show(engine, args)


# --------------------------------------------------------------------------- curate.py


async def add(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_add

    return await run_add(engine, args)


async def edit(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_edit

    return await run_edit(engine, args)


async def forget(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_forget

    return await run_forget(engine, args)


async def restore(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_restore

    return await run_restore(engine, args)


async def export(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_export

    return await run_export(engine, args)


async def import_(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_import

    return await run_import(engine, args)


async def migrate(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.curate import run_migrate

    return await run_migrate(engine, args)


# --------------------------------------------------------------------------- jobs.py


async def retry(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.jobs import run_retry

    return await run_retry(engine, args)


async def flush(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.jobs import run_flush

    return await run_flush(engine, args)


async def reindex(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.jobs import run_reindex

    return await run_reindex(engine, args)


async def compress(engine: MemoryEngine, args: argparse.Namespace) -> int:
    from gateway.cli.memory.jobs import run_compress

    return await run_compress(engine, args)


def prepare_add(args: argparse.Namespace) -> None:
    from gateway.cli.memory.curate import prepare_add

    prepare_add(args)


def prepare_export(args: argparse.Namespace) -> None:
    from gateway.cli.memory.curate import prepare_export

    prepare_export(args)


def prepare_import(args: argparse.Namespace) -> None:
    from gateway.cli.memory.curate import prepare_import

    prepare_import(args)


def prepare_migrate(args: argparse.Namespace) -> None:
    from gateway.cli.memory.curate import prepare_migrate

    prepare_migrate(args)
