"""Several replicas writing extracted memories at once on one PostgreSQL: throughput and lock waits.

    python -m bench.db_contention --database auto|postgresql://… [--replicas 1,2,3] [--owners 12]
        [--batches 40] [--facts 5] [--one-clock] [--json]

Issue 38, item 5: rows every replica's memory writes update — the change clock and the shared term counts
— serialise the replicas' commits. Each replica here is its own process with its own store, as the gateway
replicas are, writing extraction batches the way the extraction job commits them
(``MemoryEngine.write_many`` in one owner-serialised transaction, an episode added first, no embedder),
each replica for its own owners (the extraction claims hand each owner to one replica at a time). So
nothing but the shared rows makes one replica wait for another. Meanwhile the parent samples
``pg_stat_activity`` every ``SAMPLE_S``: each sample counts the scratch database's backends waiting on a
lock, by the statement they wait in.

Per replica count: ``facts_per_s`` (all replicas together, the first batch to the last),
``batches_per_s``, ``lock_wait_share`` (mean backends waiting on a lock per sample, divided by the
replicas: the share of the replicas' time spent waiting on each other), ``lock_waits`` (samples by the
waiting statement's first words), ``deadlocks`` (``pg_stat_database``) and ``batches_failed`` (a batch a
deadlock aborted: the extraction job counts it as a failed attempt and tries again after its backoff;
here it is counted and left). Every run uses a fresh scratch database; ``--one-clock`` puts every change
in one part of the change clock (what one clock row for everything cost, on today's schema). The fact
texts are the throughput bench's (``bench/throughput_data.py``), so owners share words.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import sys
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from bench.database_option import scratch_memory
from bench.report import emit_json, table
from bench.throughput_data import make_owners, memories_for

SAMPLE_S = 0.005
DEFAULT_REPLICAS = (1, 2, 3)


def _batches(owner_indexes: list[int], owners: int, batches: int, facts: int) -> list[tuple[str, list[Any]]]:
    """This replica's batches: ``batches`` per owner, round robin over its owners, ``facts`` facts each."""
    everyone = make_owners(owners, seed=23)
    now = datetime.now(UTC)
    plan: list[tuple[str, list[Any]]] = []
    per_owner = {i: memories_for(everyone[i], batches * facts, now) for i in owner_indexes}
    for b in range(batches):
        for i in owner_indexes:
            tier2 = [f for f in per_owner[i] if f.tier == 2]
            plan.append((everyone[i].owner, tier2[b * facts : (b + 1) * facts]))
    return plan


async def _replica(
    url: str, plan: list[tuple[str, list[Any]]], start: Any, done: Any, one_clock: bool
) -> None:
    from memory.engine import MemoryEngine
    from memory.store import changes
    from memory.store.errors import is_database_error

    if one_clock:  # every key in one part of the change clock: one row every commit locks, as before
        changes.PARTS = 1

    engine = await MemoryEngine.open(url)
    try:
        start.wait()
        began = time.perf_counter()
        written = failed = 0
        for n, (owner, facts) in enumerate(plan):

            async def episode(owner: str = owner, n: int = n) -> None:
                await engine.events.add(owner, f"bench episode {n}", source_ref=f"bench:{owner}:{n}")

            try:
                written += len(await engine.write_many(owner, facts, embed=False, first=episode))
            except Exception as exc:  # a deadlock: the extraction job would try the batch again later
                if not is_database_error(exc):
                    raise
                failed += 1
        done.put((began, time.perf_counter(), written, len(plan), failed))
    finally:
        await engine.close()


def _replica_main(
    url: str, plan: list[tuple[str, list[Any]]], start: Any, done: Any, one_clock: bool
) -> None:
    asyncio.run(_replica(url, plan, start, done, one_clock))


def _waiting(conn: Any, database: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT wait_event, query FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
        (database,),
    ).fetchall()
    return [(str(w), " ".join(str(q).split())[:40]) for w, q in rows]


def run_one(
    url: str, replicas: int, owners: int, batches: int, facts: int, one_clock: bool = False
) -> dict[str, Any]:
    """One run: ``replicas`` processes on a fresh database, each writing its owners' batches."""
    import psycopg

    from memory.store.open import open_store

    async def create() -> None:  # the schema once, before the replicas race to open it
        store = await open_store(url)
        await store.close()

    asyncio.run(create())
    database = urlsplit(url).path.lstrip("/")
    ctx = mp.get_context("spawn")
    start, done = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(
            target=_replica_main,
            args=(
                url,
                _batches(list(range(r, owners, replicas)), owners, batches, facts),
                start,
                done,
                one_clock,
            ),
        )
        for r in range(replicas)
    ]
    for p in procs:
        p.start()
    waits: dict[str, int] = {}
    samples = 0
    with psycopg.connect(url, autocommit=True) as conn:
        time.sleep(0.5)
        while (
            sum(
                1
                for r in conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'",
                    (database,),
                ).fetchall()
            )
            < replicas + 1
        ):
            time.sleep(0.1)  # every replica has opened its store
        d0 = conn.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = %s", (database,)).fetchone()
        start.set()
        finished: list[tuple[float, float, int, int, int]] = []
        while len(finished) < replicas:
            for event, query in _waiting(conn, database):
                key = f"{event}: {query}"
                waits[key] = waits.get(key, 0) + 1
            samples += 1
            while not done.empty():
                finished.append(done.get())
            if any(p.exitcode not in (None, 0) for p in procs):
                raise RuntimeError("a replica failed")
            time.sleep(SAMPLE_S)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        d1 = conn.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = %s", (database,)).fetchone()
    for p in procs:
        p.join()
    wall = max(f[1] for f in finished) - min(f[0] for f in finished)
    written = sum(f[2] for f in finished)
    batch_count = sum(f[3] for f in finished)
    failed = sum(f[4] for f in finished)
    waited = sum(waits.values())
    return {
        "replicas": replicas,
        "facts": written,
        "batches": batch_count,
        "batches_failed": failed,
        "wall_s": round(wall, 3),
        "facts_per_s": written / wall if wall else None,
        "batches_per_s": batch_count / wall if wall else None,
        "samples": samples,
        "lock_wait_share": waited / samples / replicas if samples else None,
        "lock_waits": dict(sorted(waits.items(), key=lambda kv: -kv[1])),
        "deadlocks": int((d1 or (0,))[0] or 0) - int((d0 or (0,))[0] or 0),
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.db_contention", description=__doc__.split("\n")[0])
    parser.add_argument("--database", required=True, metavar="URL", help="auto or a postgresql:// server")
    parser.add_argument("--replicas", default=",".join(map(str, DEFAULT_REPLICAS)), help="e.g. 1,2,3")
    parser.add_argument("--owners", type=int, default=12, help="owners, shared out among the replicas")
    parser.add_argument("--batches", type=int, default=40, help="extraction batches per owner")
    parser.add_argument("--facts", type=int, default=5, help="facts per batch")
    parser.add_argument(
        "--one-clock",
        action="store_true",
        help="every change in one part of the change clock (the single clock row of schema 19), to "
        "measure what the parts save",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.replicas.split(",") if c.strip()]
    if not counts or min(counts) < 1 or args.owners < max(counts) or args.batches < 1 or args.facts < 1:
        parser.error("--replicas ≥ 1 each, --owners ≥ the largest, --batches and --facts ≥ 1")
    results = []
    with _server(args.database) as server:
        for replicas in counts:
            with scratch_memory(server) as url:
                results.append(run_one(url, replicas, args.owners, args.batches, args.facts, args.one_clock))
    rows = [
        [
            r["replicas"],
            r["facts"],
            round(r["facts_per_s"] or 0, 1),
            round(r["batches_per_s"] or 0, 1),
            round(r["lock_wait_share"] or 0, 3),
            r["batches_failed"],
            r["deadlocks"],
        ]
        for r in results
    ]
    print(
        table(["replicas", "facts", "facts/s", "batches/s", "lock-wait share", "failed", "deadlocks"], rows)
    )
    for r in results:
        for what, n in list(r["lock_waits"].items())[:5]:
            print(
                f"  {r['replicas']} replicas, waiting {n / r['samples']:.3f}/sample in {what}",
                file=sys.stderr,
            )
    if args.json:
        emit_json({"store": "postgresql", "runs": results})
    return 0


def _server(database: str) -> Any:
    import contextlib

    if database != "auto":
        return contextlib.nullcontext(database)
    from bench.replicas.cluster import throwaway_server

    return throwaway_server()


if __name__ == "__main__":
    raise SystemExit(main())
