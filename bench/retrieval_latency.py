"""Latency of the reply-path memory lookup (should_retrieve + retrieve) at N memories for one owner.

    python -m bench.retrieval_latency --memories N [--queries Q] [--json]

Builds a synthetic zh+en store in a temporary file: N memories for the measured owner plus a quarter as many
for three other owners (noise the owner filter must skip). Chinese words are drawn from jieba's own
dictionary by frequency, English words from a Zipf-distributed pseudo-vocabulary, so term frequencies look
like real text (a few very common words, a long tail). Memories go in through the real clean-write path,
in batches, which is what insert throughput measures. Queries are built from words of stored memories
wrapped in recall phrasing, and are timed through should_retrieve + the real retrieve (access times
updated, as in production). The seed-literal query (raw-text unicode61 FTS, seed 000 §5.3) over the same
rows is timed in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jieba

from bench.report import emit_json, percentile, table
from bench.seed_literal import SeedLiteralIndex
from memory.decay import CATEGORIES
from memory.engine import MemoryEngine
from memory.gate import should_retrieve
from memory.models import Fact

OWNER = "bench:owner"
NOISE_OWNERS = ("bench:noise1", "bench:noise2", "bench:noise3")
BATCH = 500
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

    def memory(self, i: int) -> str:
        if i % 2:
            return (
                "，".join(
                    "".join(self.rng.choices(self.zh_words, self.zh_weights, k=self.rng.randint(3, 6)))
                    for _ in range(2)
                )
                + f"（{i}）"
            )
        words = self.rng.choices(self.en_words, self.en_weights, k=self.rng.randint(6, 14))
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


async def run(n: int, n_queries: int, db_path: Path) -> dict[str, Any]:
    """Load the store, time inserts and queries; returns the result dictionary."""
    corpus = Corpus()
    engine = await MemoryEngine.open(db_path)
    baseline = SeedLiteralIndex()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    owned: list[str] = []
    insert_s = 0.0
    inserted = 0
    try:
        plan = [(OWNER, i) for i in range(n)]
        plan += [(NOISE_OWNERS[i % len(NOISE_OWNERS)], n + i) for i in range(n // 4)]
        corpus.rng.shuffle(plan)
        for offset in range(0, len(plan), BATCH):
            chunk = plan[offset : offset + BATCH]
            by_owner: dict[str, list[Fact]] = {}
            for owner, i in chunk:
                text = corpus.memory(i)
                created = start + timedelta(minutes=i)
                category = CATEGORIES[i % len(CATEGORIES)]
                by_owner.setdefault(owner, []).append(
                    Fact(content=text, category=category, importance=0.3 + 0.1 * (i % 7), created_at=created)
                )
                baseline.add(owner, str(i), text, category, 0.5, created)
                if owner == OWNER:
                    owned.append(text)
            t0 = time.perf_counter()
            for owner, facts in by_owner.items():
                inserted += len(await engine.write_many(owner, facts, now=start))
            insert_s += time.perf_counter() - t0
        queries = [corpus.query(corpus.rng.choice(owned)) for _ in range(n_queries)]
        now = start + timedelta(days=400)
        for q in queries[:20]:  # warm caches the way a running gateway has them warm
            await engine.retrieve(OWNER, q, now)
        lat: list[float] = []
        fired = 0
        for q in queries:
            t0 = time.perf_counter()
            if should_retrieve(q):
                fired += 1
                await engine.retrieve(OWNER, q, now)
            lat.append((time.perf_counter() - t0) * 1000)
        base_lat: list[float] = []
        for q in queries:
            t0 = time.perf_counter()
            baseline.query(OWNER, q, now)
            base_lat.append((time.perf_counter() - t0) * 1000)
    finally:
        await engine.close()
    return {
        "memories": n,
        "noise_memories": n // 4,
        "queries": n_queries,
        "gate_fired": fired,
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
        "p99_ms": percentile(lat, 99),
        "baseline_p50_ms": percentile(base_lat, 50),
        "baseline_p95_ms": percentile(base_lat, 95),
        "inserts_per_s": inserted / insert_s if insert_s else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.retrieval_latency", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--memories", type=int, required=True, help="memories of the measured owner")
    parser.add_argument("--queries", type=int, default=500, help="timed queries (default 500)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    if args.memories < 1 or args.queries < 1:
        parser.error("--memories and --queries must be positive")
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(run(args.memories, args.queries, Path(tmp) / "latency.db"))
    noise = result["noise_memories"]
    print(f"{result['memories']} memories (+{noise} of other owners), {result['queries']} queries")
    print(
        table(
            ["path", "p50 ms", "p95 ms", "p99 ms"],
            [
                ["should_retrieve + retrieve", result["p50_ms"], result["p95_ms"], result["p99_ms"]],
                ["seed-literal query", result["baseline_p50_ms"], result["baseline_p95_ms"], "-"],
            ],
        )
    )
    ratio = result["baseline_p95_ms"] / result["p95_ms"] if result["p95_ms"] else 0.0
    print(
        f"p95 speed-up over seed-literal: {ratio:.1f}x; inserts through the clean path: "
        f"{result['inserts_per_s']:.0f}/s"
    )
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
