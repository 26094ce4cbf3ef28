"""Server time of the memory web page with N memories for one person.

    python -m bench.dashboard_page [--memories 10000] [--requests 50] [--json]

Fills a temporary database with the synthetic zh+en memories of ``bench.retrieval_latency`` (N for the
measured person, a quarter as many for three others), spread over a year and over the categories, then
serves the page in this process (the real aiohttp app, keyword search) and requests each page ``--requests``
times through a logged-in client on 127.0.0.1. The time reported is the server's own, from the page's
``Server-Timing`` header (handler and template; HTTP on loopback adds about a millisecond, ``*_wall_*``).

JSON keys: ``memories``, ``requests``, and ``<page>_p50_ms`` / ``<page>_p95_ms`` for ``owners_page``,
``owner_page`` (the person's first page, sorted by decay score — the issue's target: ≤ 300 ms at 10k),
``owner_page_by_date`` (page 100 sorted by date), ``search_page`` (a search, sorted by score),
``memory_page`` and ``operations_page``; ``owner_page_wall_p95_ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

from bench.report import emit_json, percentile
from bench.retrieval_latency import BATCH, NOISE_OWNERS, OWNER, Corpus
from gateway.dashboard.context import DashboardContext, person_url
from gateway.dashboard.server import start_dashboard
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.records import Fact
from memory.retrieval.decay import CATEGORIES

TOKEN = "bench-token"


async def fill(engine: MemoryEngine, n: int) -> list[int]:
    """N memories for OWNER and n/4 for the others, through the clean write path; the owner's ids."""
    corpus = Corpus()
    rng = random.Random(11)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    plan = [(OWNER, i) for i in range(n)] + [(NOISE_OWNERS[i % 3], n + i) for i in range(n // 4)]
    rng.shuffle(plan)
    ids: list[int] = []
    for offset in range(0, len(plan), BATCH):
        by_owner: dict[str, list[Fact]] = {}
        for owner, i in plan[offset : offset + BATCH]:
            fact = Fact(
                corpus.memory(i),
                category=rng.choice(CATEGORIES),
                importance=round(rng.uniform(0.2, 1.0), 2),
                created_at=start + timedelta(minutes=i * 37 % (365 * 24 * 60)),
            )
            by_owner.setdefault(owner, []).append(fact)
        for owner, facts in by_owner.items():
            results = await engine.write_many(owner, facts, embed=False)
            if owner == OWNER:
                ids += [r.id for r in results]
    return ids


async def timed(client: aiohttp.ClientSession, url: str, times: int) -> tuple[list[float], list[float]]:
    """(server ms, wall ms) of ``times`` GETs of ``url``."""
    server, wall = [], []
    for _ in range(times):
        t0 = time.perf_counter()
        async with client.get(url) as resp:
            await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"{url}: HTTP {resp.status}")
            found = re.search(r"dur=([\d.]+)", resp.headers.get("Server-Timing", ""))
        wall.append((time.perf_counter() - t0) * 1000)
        if found is None:
            raise RuntimeError(f"{url}: no Server-Timing header")
        server.append(float(found.group(1)))
    return server, wall


async def run(n: int, requests: int, db: Path) -> dict[str, Any]:
    engine = await MemoryEngine.open(db)
    try:
        print(f"filling {n} memories (+{n // 4} of other people)…", file=sys.stderr)
        ids = await fill(engine, n)
        page = await start_dashboard(
            DashboardContext(engine=engine, buffer=ExtractionBuffer(engine.store.buffer)),
            token=TOKEN,
            host="127.0.0.1",
            port=0,
        )
        base = page.url.split("/?")[0]
        pages = {
            "owners_page": "/",
            "owner_page": person_url(OWNER),
            "owner_page_by_date": person_url(OWNER) + "?sort=date&page=100",
            "search_page": person_url(OWNER) + "?q=" + "的时候",
            "memory_page": person_url(OWNER, "memories", ids[len(ids) // 2]),
            "operations_page": person_url(OWNER, "operations"),
        }
        result: dict[str, Any] = {"memories": n, "requests": requests}
        try:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as client:
                async with client.get(page.url) as resp:
                    resp.raise_for_status()
                for name, path in pages.items():
                    await timed(client, base + path, 3)  # warm-up (statement cache, template compile)
                    server, wall = await timed(client, base + path, requests)
                    result[f"{name}_p50_ms"] = round(statistics.median(server), 2)
                    result[f"{name}_p95_ms"] = round(percentile(server, 95), 2)
                    if name == "owner_page":
                        result["owner_page_wall_p95_ms"] = round(percentile(wall, 95), 2)
                    p50, p95 = result[f"{name}_p50_ms"], result[f"{name}_p95_ms"]
                    print(f"{name:22s} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms", file=sys.stderr)
        finally:
            await page.stop()
    finally:
        await engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.dashboard_page", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--memories", type=int, default=10_000, help="memories of the measured person")
    parser.add_argument("--requests", type=int, default=50, help="timed requests per page (default 50)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    if args.memories < 1 or args.requests < 1:
        parser.error("--memories and --requests must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(run(args.memories, args.requests, Path(tmp) / "memory.db"))
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
