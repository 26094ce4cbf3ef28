"""Latency of the reply-path memory lookup (should_retrieve + retrieve) at N memories for one owner.

    python -m bench.retrieval_latency --memories N [--queries Q] [--embedding local|openai|none]
        [--vector-cache FILE.npz] [--k K] [--json]

Builds a synthetic zh+en store in a temporary file: N memories for the measured owner plus a quarter as many
for three other owners (noise the owner filter must skip). Chinese words are drawn from jieba's own
dictionary by frequency, English words from a Zipf-distributed pseudo-vocabulary, so term frequencies look
like real text (a few very common words, a long tail). Memories go in through the real clean-write path,
in batches, which is what insert throughput measures. Queries are built from words of stored memories
wrapped in recall phrasing, and are timed through should_retrieve + the real retrieve (access times
updated, as in production). The seed-literal query (raw-text unicode61 FTS, the original design's query)
over the same
rows is timed in the same run.

With an embedder (``--embedding local``, the default, or ``openai``) retrieval is hybrid and every memory
is embedded first: each batch goes through the engine's ``CachedEmbedder.embed_passages`` (as the write
path does it), timed on its own (``embed_per_s``), and ``write_many`` then finds the vectors in the cache,
so ``inserts_per_s`` excludes the model. ``--vector-cache`` pre-fills that cache from an earlier run's
.npz (and saves new vectors to it), so a rerun skips the model; the embed rate is then not measured.
Timed queries are distinct texts, none of them seen in the warm-up, so every one pays for its query
embedding (``query_cache_hits`` shows the in-process LRU was never hit); ``query_embed_*_ms`` is that
share, measured where the engine calls the embedder. ``after_write_*_ms`` times a retrieve right after a
write of the owner (which drops the owner's cached vector matrix). ``--embedding none`` is keyword search
only.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jieba
import numpy as np

from bench.database_option import add_database_option, kept_memory, scratch_memory, store_name
from bench.embedding_option import add_embedding_args, attach_embedder, embedding_settings
from bench.report import emit_json, percentile, table
from bench.seed_literal import SeedLiteralIndex
from bench.vector_cache import load_vector_cache, prefill_cache, save_vector_cache
from gateway.memory_tools import MemoryTools, ToolSettings
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.retrieval.decay import CATEGORIES
from memory.retrieval.gate import should_retrieve
from memory.vectors.cache import CachedEmbedder, text_hash
from memory.vectors.embedding import EmbeddingSettings

OWNER = "bench:owner"
NOISE_OWNERS = ("bench:noise1", "bench:noise2", "bench:noise3")
BATCH = 500
WARM_UP_QUERIES = 20
# After the timed queries: this many rounds of one write followed by one retrieve, timed apart. A write
# drops the owner's cached vector matrix, so the next hybrid retrieve reloads it (the reply right after
# extraction stored something); the steady-state queries above never see that.
AFTER_WRITE_PROBES = 10
_SYLLABLES = [
    "ka",
    "to",
    "ri",
    "mo",
    "na",
    "shi",
    "ve",
    "lo",
    "ban",
    "der",
    "qu",
    "ist",
    "ron",
    "pel",
    "zor",
    "mi",
    "tan",
    "gle",
    "dra",
    "fen",
    "our",
    "wick",
]
_ZH_TEMPLATES = ("我之前说过的{a}和{b}是什么情况？", "你还记得{a}吗，{b}那件事", "上次提到的{a}{b}怎么样了")
_EN_TEMPLATES = (
    "What did I tell you about {a} and {b}?",
    "Do you remember my {a} {b}?",
    "When did we discuss {a}?",
)


def _zh_vocabulary(size: int) -> tuple[list[str], list[float]]:
    """The ``size`` most frequent multi-character words of jieba's dictionary, with their frequencies."""
    path = Path(jieba.__file__).parent / "dict.txt"
    entries: list[tuple[str, int]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and len(parts[0]) >= 2:
                entries.append((parts[0], int(parts[1])))
    entries.sort(key=lambda e: -e[1])
    top = entries[:size]
    return [w for w, _ in top], [float(f) for _, f in top]


def _en_vocabulary(size: int, rng: random.Random) -> tuple[list[str], list[float]]:
    """Pseudo-English words with Zipf weights (rank r has weight 1/r)."""
    if size > len(_SYLLABLES) ** 4 // 2:
        raise ValueError(f"at most {len(_SYLLABLES) ** 4 // 2} pseudo-words can be made")
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered, [1.0 / (rank + 1) for rank in range(size)]


class Corpus:
    """Deterministic synthetic memories and queries."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.zh_words, self.zh_weights = _zh_vocabulary(20000)
        self.en_words, self.en_weights = _en_vocabulary(20000, self.rng)
        # ``choices`` sums the weights at every call unless given these (the same draws, bit for bit):
        # 125k memories took minutes of CPU before the first insert.
        self._zh_cum = list(itertools.accumulate(self.zh_weights))
        self._en_cum = list(itertools.accumulate(self.en_weights))

    def memory(self, i: int) -> str:
        if i % 2:
            phrases = (
                "".join(self.rng.choices(self.zh_words, cum_weights=self._zh_cum, k=self.rng.randint(3, 6)))
                for _ in range(2)
            )
            return "，".join(phrases) + f"（{i}）"
        words = self.rng.choices(self.en_words, cum_weights=self._en_cum, k=self.rng.randint(6, 14))
        return " ".join(words).capitalize() + f" #{i}."

    def query(self, memory_text: str) -> str:
        if any("\u4e00" <= ch <= "\u9fff" for ch in memory_text):
            words = list(jieba.cut(memory_text))
            picks = [w for w in words if len(w) >= 2] or words
            a, b = self.rng.choice(picks), self.rng.choice(picks)
            return self.rng.choice(_ZH_TEMPLATES).format(a=a, b=b)
        picks = [w for w in memory_text.strip(".").split() if not w.startswith("#")]
        a, b = self.rng.choice(picks).lower(), self.rng.choice(picks).lower()
        return self.rng.choice(_EN_TEMPLATES).format(a=a, b=b)


class TimedQueryEmbedder:
    """The engine's embedder with every query embedding timed where ``retrieve`` calls it.

    A thin pass-through (one extra coroutine frame), so the measured retrieve is the real one; ``ms`` holds
    the successful calls, ``failed`` those that raised or were cancelled by the engine's timeout (such a
    query is keyword-only, which would make hybrid look faster than it is).
    """

    def __init__(self, inner: CachedEmbedder) -> None:
        self.inner = inner
        self.ms: list[float] = []
        self.failed = 0

    @property
    def model_key(self) -> str:
        return self.inner.model_key

    @property
    def uses_local_cores(self) -> bool:
        return self.inner.uses_local_cores

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await self.inner.embed_passages(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            vector = await self.inner.embed_query(text)
        except BaseException:
            self.failed += 1
            raise
        self.ms.append((time.perf_counter() - t0) * 1000)
        return vector

    async def close(self) -> None:
        await self.inner.close()


def distinct_queries(
    corpus: Corpus,
    owned: list[str],
    n: int,
    exclude: set[str] | None = None,
) -> list[str]:
    """``n`` queries with distinct texts (not in ``exclude``): a repeated text would find its vector in the
    query LRU and flatter the hybrid latency. Gives up on distinctness after 50 n draws (tiny stores)."""
    seen = set(exclude or ())
    out: list[str] = []
    draws = 0
    while len(out) < n:
        draws += 1
        query = corpus.query(corpus.rng.choice(owned))
        if query in seen and draws < 50 * n:
            continue
        seen.add(query)
        out.append(query)
    return out


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def run(
    n: int,
    n_queries: int,
    db_path: str | Path,
    embedding: EmbeddingSettings | None = None,
    vector_cache: Path | None = None,
    k: int = 5,
    load: bool = True,
    load_only: bool = False,
) -> dict[str, Any]:
    """Load the store, time inserts and queries; returns the result dictionary (``k``: hits a retrieval
    returns, as ``memory.topK`` asks of the message path). ``load`` False: the store already holds this
    corpus (a copy of a ``load_only`` run's database), only the texts are drawn again; ``load_only``: stop
    after the load.

    ``embedding`` (None or provider "none": keyword search only) attaches the cached embedder the gateway
    uses; ``vector_cache`` is an .npz of passage vectors read before loading and extended after it.
    """
    corpus = Corpus()
    engine = await MemoryEngine.open(db_path)
    cached = attach_embedder(engine, embedding) if embedding is not None else None
    timed = TimedQueryEmbedder(cached) if cached is not None else None
    if timed is not None:
        engine.embedder = timed
    baseline = SeedLiteralIndex()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    owned: list[str] = []
    insert_s = embed_s = model_load_s = 0.0
    inserted = merged = 0
    from_file = 0
    fresh_vectors: dict[str, np.ndarray] = {}
    try:
        plan = [(OWNER, i) for i in range(n)]
        plan += [(NOISE_OWNERS[i % len(NOISE_OWNERS)], n + i) for i in range(n // 4)]
        corpus.rng.shuffle(plan)
        texts = [corpus.memory(i) for _, i in plan]  # drawn in the order the loading loop used to draw them
        known: dict[str, np.ndarray] = {}
        if cached is not None:
            t0 = time.perf_counter()
            await cached.embed_query("warm up")  # model load is start-up cost, not per-memory cost
            model_load_s = time.perf_counter() - t0
            if vector_cache is not None:
                known = load_vector_cache(vector_cache, cached.model_key)
                wanted = {h: known[h] for h in {text_hash(t) for t in texts} if h in known}
                wanted = {h: v for h, v in wanted.items() if cached.dim is None or v.shape[0] == cached.dim}
                if wanted:
                    await prefill_cache(engine, cached.model_key, wanted)
                from_file = len(wanted)
        for offset in range(0, len(plan), BATCH):
            chunk = plan[offset : offset + BATCH]
            chunk_texts = texts[offset : offset + BATCH]
            if cached is not None:
                t0 = time.perf_counter()
                vectors = await cached.embed_passages(chunk_texts)
                embed_s += time.perf_counter() - t0
                if vector_cache is not None:
                    fresh_vectors.update((text_hash(t), vectors[j]) for j, t in enumerate(chunk_texts))
                done = offset + len(chunk)
                rate = cached.misses / embed_s if cached.misses and embed_s else 0.0
                _progress(
                    f"embedded {done}/{len(plan)} ({cached.misses} by the model, {rate:.0f}/s)"
                    if rate
                    else f"embedded {done}/{len(plan)} (all from the cache)"
                )
            by_owner: dict[str, list[Fact]] = {}
            for (owner, i), text in zip(chunk, chunk_texts, strict=True):
                created = start + timedelta(minutes=i)
                category = CATEGORIES[i % len(CATEGORIES)]
                by_owner.setdefault(owner, []).append(
                    Fact(content=text, category=category, importance=0.3 + 0.1 * (i % 7), created_at=created)
                )
                baseline.add(owner, str(i), text, category, 0.5, created)
                if owner == OWNER:
                    owned.append(text)
            t0 = time.perf_counter()
            for owner, facts in by_owner.items() if load else ():
                results = await engine.write_many(owner, facts, now=start)
                inserted += len(results)
                merged += sum(1 for r in results if r.action == "merged")
            insert_s += time.perf_counter() - t0
        if load_only:
            return {"memories": n, "noise_memories": n // 4, "inserts_per_s": inserted / insert_s}
        embedded = cached.misses if cached is not None else 0
        if cached is not None and vector_cache is not None and embedded:
            save_vector_cache(vector_cache, cached.model_key, known | fresh_vectors)
        queries = distinct_queries(corpus, owned, n_queries)
        warm_up = distinct_queries(corpus, owned, WARM_UP_QUERIES, exclude=set(queries))
        now = start + timedelta(days=400)
        for q in warm_up:  # warm caches the way a running gateway has them warm (not the timed texts)
            await engine.retrieve(OWNER, q, now, k=k)
        query_hits_before = cached.query_hits if cached is not None else 0
        if timed is not None:
            timed.ms.clear()
            timed.failed = 0
        lat: list[float] = []
        rest: list[float] = []  # per query: its latency minus its query embedding
        fired = 0
        for q in queries:
            embeds_before = len(timed.ms) if timed is not None else 0
            t0 = time.perf_counter()
            if should_retrieve(q):
                fired += 1
                await engine.retrieve(OWNER, q, now, k=k)
            elapsed = (time.perf_counter() - t0) * 1000
            lat.append(elapsed)
            embedded_now = timed is not None and len(timed.ms) > embeds_before
            rest.append(elapsed - timed.ms[-1] if timed is not None and embedded_now else elapsed)
        query_ms = list(timed.ms) if timed is not None else []
        query_failed = timed.failed if timed is not None else 0
        query_hits = (cached.query_hits - query_hits_before) if cached is not None else 0
        probes = distinct_queries(corpus, owned, AFTER_WRITE_PROBES, exclude=set(queries) | set(warm_up))
        after_write: list[float] = []
        for j, q in enumerate(probes):
            i = n + n // 4 + j
            fact = Fact(content=corpus.memory(i), category=CATEGORIES[i % len(CATEGORIES)], created_at=now)
            await engine.write_many(OWNER, [fact], now=now)  # not timed (includes embedding the new text)
            t0 = time.perf_counter()
            if should_retrieve(q):
                await engine.retrieve(OWNER, q, now, k=k)
            after_write.append((time.perf_counter() - t0) * 1000)
        base_lat: list[float] = []
        for q in queries:
            t0 = time.perf_counter()
            baseline.query(OWNER, q, now)
            base_lat.append((time.perf_counter() - t0) * 1000)
        # The model's memory_search tool, on texts not seen before (no query-embedding cache hit): the
        # whole call, arguments parsed to JSON result.
        tool_queries = distinct_queries(
            corpus, owned, n_queries, exclude=set(queries) | set(warm_up) | set(probes)
        )
        tool_lat: list[float] = []
        for q in tool_queries:
            box = MemoryTools(engine, OWNER, q, ToolSettings())
            t0 = time.perf_counter()
            await box.call("memory_search", json.dumps({"query": q, "limit": 5}))
            tool_lat.append((time.perf_counter() - t0) * 1000)
    finally:
        if cached is not None:
            await cached.close()
        await engine.close()
    result: dict[str, Any] = {
        "memories": n,
        "noise_memories": n // 4,
        "queries": n_queries,
        "distinct_queries": len(set(queries)),
        "gate_fired": fired,
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
        "p99_ms": percentile(lat, 99),
        "baseline_p50_ms": percentile(base_lat, 50),
        "baseline_p95_ms": percentile(base_lat, 95),
        "inserts_per_s": inserted / insert_s if insert_s else 0.0,
        "merged_on_write": merged,
        "embedding": embedding.provider if embedding is not None else "none",
        "embedded": embedded,
        "embed_s": round(embed_s, 3) if cached is not None else None,
        "embed_per_s": round(embedded / embed_s, 1) if embedded and embed_s else None,
        "vector_cache": str(vector_cache) if vector_cache is not None and cached is not None else None,
        "vector_cache_hits": from_file,
        "model_load_s": round(model_load_s, 3) if cached is not None else None,
        "query_embed_p50_ms": percentile(query_ms, 50) if timed is not None else None,
        "query_embed_p95_ms": percentile(query_ms, 95) if timed is not None else None,
        "query_embeds": len(query_ms),
        "query_embed_failed": query_failed,
        "query_cache_hits": query_hits,
        "rest_p50_ms": percentile(rest, 50),
        "rest_p95_ms": percentile(rest, 95),
        "after_write_p50_ms": percentile(after_write, 50),
        "after_write_max_ms": max(after_write),
        "tool_search_p50_ms": percentile(tool_lat, 50),
        "tool_search_p95_ms": percentile(tool_lat, 95),
    }
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.retrieval_latency", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--memories", type=int, required=True, help="memories of the measured owner")
    parser.add_argument("--queries", type=int, default=500, help="timed queries (default 500)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument("--k", type=int, default=5, help="hits each retrieval returns (default 5)")
    add_embedding_args(parser)
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="an .npz of passage vectors kept between runs (outside the repo, e.g. /tmp): pre-fills the "
        "engine's embedding cache so reruns skip the model; new vectors are added to it",
    )
    add_database_option(parser)
    parser.add_argument(
        "--keep-loaded",
        metavar="NAME",
        help="with --database: load into a new database NAME on that server, analyse it, keep it and stop",
    )
    parser.add_argument(
        "--from-loaded",
        metavar="NAME",
        help="with --database: measure on a scratch copy of database NAME (a --keep-loaded run with the "
        "same --memories) instead of loading; the code's migrations run on the copy at open",
    )
    args = parser.parse_args(argv)
    if args.memories < 1 or args.queries < 1 or args.k < 1:
        parser.error("--memories, --queries and --k must be positive")
    if (args.keep_loaded or args.from_loaded) and not args.database:
        parser.error("--keep-loaded and --from-loaded need --database")
    try:
        settings = embedding_settings(args)
    except ValueError as exc:
        parser.error(str(exc))
    embedding = settings if settings.provider != "none" else None
    if args.keep_loaded:
        with kept_memory(args.database, args.keep_loaded) as target:
            loaded = run(args.memories, 1, target, embedding, args.vector_cache, args.k, load_only=True)
            result = asyncio.run(loaded)
        print(f"{args.memories} memories loaded into {args.keep_loaded}: {result['inserts_per_s']:.0f}/s")
        if args.json:
            emit_json(result)
        return 0
    with scratch_memory(args.database, "latency.db", template=args.from_loaded) as target:
        fresh = args.from_loaded is None
        result = asyncio.run(
            run(args.memories, args.queries, target, embedding, args.vector_cache, args.k, load=fresh)
        )
    result["store"] = store_name(args.database)
    result["k"] = args.k
    result["from_loaded"] = args.from_loaded
    hybrid = result["embedding"] != "none"
    noise = result["noise_memories"]
    print(
        f"{result['memories']} memories (+{noise} of other owners), {result['queries']} queries "
        f"({result['distinct_queries']} distinct), embedding {result['embedding']}"
    )
    rows: list[list[Any]] = [
        [
            "should_retrieve + retrieve" + (" (hybrid)" if hybrid else " (FTS only)"),
            result["p50_ms"],
            result["p95_ms"],
            result["p99_ms"],
        ]
    ]
    if hybrid:
        rows.append(
            ["  query embedding alone", result["query_embed_p50_ms"], result["query_embed_p95_ms"], "-"]
        )
        rows.append(["  latency minus query embedding", result["rest_p50_ms"], result["rest_p95_ms"], "-"])
    rows.append(["seed-literal query", result["baseline_p50_ms"], result["baseline_p95_ms"], "-"])
    rows.append(["memory_search tool call", result["tool_search_p50_ms"], result["tool_search_p95_ms"], "-"])
    print(table(["path", "p50 ms", "p95 ms", "p99 ms"], rows))
    print(
        f"first retrieve after a write of the owner ({AFTER_WRITE_PROBES} probes): p50 "
        f"{result['after_write_p50_ms']:.1f} ms, max {result['after_write_max_ms']:.1f} ms"
    )
    ratio = result["baseline_p95_ms"] / result["p95_ms"] if result["p95_ms"] else 0.0
    print(
        f"p95 speed-up over seed-literal: {ratio:.1f}x; inserts through the clean path: "
        f"{result['inserts_per_s']:.0f}/s" + (" (model time excluded)" if hybrid else "")
    )
    if hybrid:
        if result["embed_per_s"] is not None:
            embed_line = (
                f"embedded {result['embedded']} texts in {result['embed_s']:.1f} s: "
                f"{result['embed_per_s']:.1f}/s"
            )
        else:
            embed_line = "embed rate not measured: every vector came from the vector cache"
        if result["vector_cache"] is not None:
            embed_line += f"; {result['vector_cache_hits']} vectors from {result['vector_cache']}"
        print(embed_line + f"; model load {result['model_load_s']:.2f} s")
        print(
            f"query embeddings timed: {result['query_embeds']}, failed/timed out: "
            f"{result['query_embed_failed']}, query-LRU hits: {result['query_cache_hits']}"
        )
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
