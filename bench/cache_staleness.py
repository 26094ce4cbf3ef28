"""How stale a replica's caches are after another replica's write (issue 29, target ≤ 1 s).

Two engines — two store connections, as two gateway replicas have — on one database. Engine B warms its
caches (a chat's session number, an owner's known projects, the owner's vector matrix, a word's document
frequency), reads the change versions (``memory/store/changes.py``), and at once engine A writes: a
``/new`` on the chat, a memory of a new project, a memory with a vector (the bundled local embedder), a
memory with a new word. B then asks its caches every ``POLL_S`` until it sees each write; the seconds from
A's commit to B seeing it are the staleness of that kind. B having read just before A's write is the
worst case: it must wait one whole refresh interval before it reads again.

``measure_staleness(url)`` is what ``bench/replicas.py`` reads; ``python -m bench.cache_staleness
[--database URL] [--json]`` runs it on a scratch database (a temporary SQLite file without the option).
The JSON keys: ``session_s``, ``projects_s``, ``vectors_s``, ``terms_s`` (worst over ``rounds``), ``max_s``
(the worst of them; None when a write was not seen within ``TIMEOUT_S``), ``interval_s``, ``rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench.database_option import add_database_option, scratch_memory, store_name
from bench.report import emit_json, table
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.sessions import SessionStore
from memory.vectors.cache import CachedEmbedder
from memory.vectors.protocol import Embedder

POLL_S = 0.002  # how often B asks its caches
TIMEOUT_S = 10.0  # a write not seen by then counts as never seen (None)
KINDS = ("session", "projects", "vectors", "terms")

Seen = Callable[[], Awaitable[bool]]


@dataclass(slots=True)
class Step:
    """One kind: warm B's cache, write on A (returns B's check), as B would see it."""

    warm: Callable[[], Awaitable[object]]
    write: Callable[[], Awaitable[Seen]]


async def _staleness(step: Step, b: MemoryEngine) -> float | None:
    """Seconds from A's write returning (committed) until B's check holds; B's cache is warm and B has
    just read the change versions when A writes."""
    await step.warm()
    await b.store.changes.refresh(force=True)
    seen = await step.write()
    start = time.perf_counter()
    while time.perf_counter() - start < TIMEOUT_S:
        if await seen():
            return time.perf_counter() - start
        await asyncio.sleep(POLL_S)
    return None


def _steps(a: MemoryEngine, b: MemoryEngine, tag: str) -> dict[str, Step]:
    """The four writes of one round, each with the B cache it must reach."""
    owner, chat, project, word = f"staleness-{tag}", f"bench:staleness-{tag}", f"Orion{tag}", f"zq{tag}"
    sessions_a, sessions_b = SessionStore(a.store.sessions), SessionStore(b.store.sessions)
    trip = f"a kayak trip down the river, round {tag}"

    async def new_session() -> Seen:
        number = await sessions_a.new_session(chat)
        return lambda: _equals(sessions_b.current(chat), number)

    async def new_project() -> Seen:
        await a.write(owner, Fact(content=f"the {project} launch moved to spring", project=project))
        return lambda: _contains(b.known_projects(owner), project)

    async def warm_vectors() -> None:
        assert a.embedder is not None
        await a.embedder.embed_passages([trip])  # A's write then takes the cached vector: no model time
        await b.vectors.of_owner(owner)

    async def new_vector() -> Seen:
        written = await a.write(owner, Fact(content=trip))

        async def seen() -> bool:
            matrix = await b.vectors.of_owner(owner)
            return matrix is not None and written.id in matrix.ids.tolist()

        return seen

    async def new_word() -> Seen:
        written = await a.write(owner, Fact(content=f"the parcel code is {word}"), embed=False)

        async def seen() -> bool:
            return written.id in [h.id for h in await b.search(owner, word)]

        return seen

    return {
        "session": Step(lambda: sessions_b.current(chat), new_session),
        "projects": Step(lambda: b.known_projects(owner), new_project),
        "vectors": Step(warm_vectors, new_vector),
        "terms": Step(lambda: b.search(owner, word), new_word),  # the word's frequency cached as 0
    }


async def _round(a: MemoryEngine, b: MemoryEngine, tag: str) -> dict[str, float | None]:
    """One write of each kind on A, and how long B took to see it; the owner's rows are purged after."""
    owner = f"staleness-{tag}"
    await b.write(owner, Fact(content=f"the staleness probe of round {tag}"))
    result = {kind: await _staleness(step, b) for kind, step in _steps(a, b, tag).items()}
    for memory in await a.list(owner, include_archived=True, limit=1000):
        await a.purge(owner, memory.id)
    return result


async def _equals(value: Awaitable[int], expected: int) -> bool:
    return await value == expected


async def _contains(values: Awaitable[frozenset[str]], item: str) -> bool:
    return item in await values


def _local_embedder() -> Embedder:
    from memory.vectors.embedding import LocalEmbedder

    return LocalEmbedder()


async def measure_staleness(
    database_url: str, *, rounds: int = 3, embedder: Embedder | None = None
) -> dict[str, Any]:
    """Seconds until engine B's caches see engine A's write, per kind (worst of ``rounds``), on the
    memory database ``database_url`` (a ``postgresql://`` URL or a SQLite path; its schema is created
    if missing). ``embedder`` (default: the bundled local model) makes the vectors; the rows written
    are purged afterwards."""
    inner = embedder or _local_embedder()
    a = await MemoryEngine.open(database_url, warm_text=False)
    b = await MemoryEngine.open(database_url, warm_text=False)
    try:
        a.embedder = CachedEmbedder(inner, a.store.vectors)  # as the gateway wires it
        b.embedder = CachedEmbedder(inner, b.store.vectors)
        worst: dict[str, float | None] = dict.fromkeys(KINDS, 0.0)
        for _ in range(rounds):
            measured = await _round(a, b, secrets.token_hex(3))
            for kind, value in measured.items():
                current = worst[kind]
                worst[kind] = None if value is None or current is None else max(current, value)
    finally:
        await a.close()
        await b.close()
        await inner.close()
    values = list(worst.values())
    result: dict[str, Any] = {f"{kind}_s": value for kind, value in worst.items()}
    result["max_s"] = None if any(v is None for v in values) else max(v for v in values if v is not None)
    result["interval_s"] = b.store.changes.interval_s  # type: ignore[attr-defined]
    result["rounds"] = rounds
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.cache_staleness``: the staleness per kind on a scratch database."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.cache_staleness", description=__doc__.split("\n")[0]
    )
    add_database_option(parser)
    parser.add_argument("--rounds", type=int, default=3, help="writes of each kind (the worst is reported)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    with scratch_memory(args.database, "staleness.db") as url:
        result = asyncio.run(measure_staleness(url, rounds=args.rounds))
    result["store"] = store_name(args.database)
    rows = [[kind, result[f"{kind}_s"] if result[f"{kind}_s"] is not None else "never"] for kind in KINDS]
    print(table(["cache", "stale for (s)"], rows))
    print(f"refresh interval {result['interval_s']} s; worst {result['max_s']} s over {args.rounds} rounds")
    if args.json:
        emit_json(result)
    return 0 if result["max_s"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
