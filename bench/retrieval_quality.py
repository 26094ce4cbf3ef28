"""Retrieval quality on a generic benchmark file: recall@1/5/10 and MRR, engine vs the seed-literal baseline.

    python -m bench.retrieval_quality --data FILE [--k 5] [--embedding local|openai|none]
                                      [--target turns] [--json]

Memories are loaded through the engine's real write path (clean-write merges included; the dataset id
is kept in ``source_ref``, and a merged memory answers for every id it absorbed). Queries go through the
real ``retrieve`` with the gate bypassed and access times left untouched, so the result does not depend
on query order. A query counts at k when any of its top k results is relevant. With an embedder (the
default: the bundled local model) memories are embedded on the write path, as extraction does, and
retrieval is hybrid; ``embed_s`` reports how long embedding took and ``embedded_per_s`` its rate.

``--target turns`` loads the items as kept conversation turns instead (``memory/conversation.py``, one chat
per owner, in file order) and asks ``ConversationLog.search`` — what the ``conversation_search`` tool runs.
With an embedder the turns are then given vectors as the gateway's backfill does (``reindex`` over
``engine.conversation``; ``embed_s``) and the search is hybrid. For ``bench.datasets locomo --turns``.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.database_option import add_database_option, scratch_memory, store_name
from bench.dataset_format import load_dataset
from bench.embedding_option import add_embedding_args, attach_embedder, embedding_settings
from bench.report import emit_json, require_file, table
from bench.seed_literal import SeedLiteralIndex
from memory.clock import from_db, utcnow
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors.embedding import EmbeddingSettings

CUTOFFS = (1, 5, 10)


def memory_fact(mem: dict[str, Any]) -> Fact:
    fact = Fact(
        content=mem["content"], source="bench", source_ref=mem["id"], created_at=from_db(mem["created_at"])
    )
    for field in ("category", "project", "topic"):
        if mem.get(field):
            setattr(fact, field, mem[field])
    if mem.get("importance") is not None:
        fact.importance = float(mem["importance"])
    return fact


def first_relevant_rank(ranked_refs: list[list[str]], relevant: set[str]) -> int | None:
    """1-based rank of the first result whose refs include a relevant id, or None."""
    for rank, refs in enumerate(ranked_refs, start=1):
        if relevant.intersection(refs):
            return rank
    return None


def summarise(ranks: list[tuple[str, int | None]]) -> dict[str, Any]:
    """recall@k and MRR overall and per kind from (kind, first relevant rank) pairs (None = miss)."""

    def block(items: list[int | None]) -> dict[str, Any]:
        n = len(items)
        out: dict[str, Any] = {
            f"recall@{c}": (sum(1 for r in items if r and r <= c) / n if n else 0.0) for c in CUTOFFS
        }
        out["mrr"] = sum(1.0 / r for r in items if r) / n if n else 0.0
        out["n"] = n
        return out

    by_kind: dict[str, list[int | None]] = defaultdict(list)
    for kind, rank in ranks:
        by_kind[kind].append(rank)
    result = block([r for _, r in ranks])
    result["by_kind"] = {kind: block(items) for kind, items in sorted(by_kind.items())}
    return result


async def evaluate(
    data: dict[str, Any], db_path: str | Path, embedding: EmbeddingSettings | None = None
) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Run engine and baseline over every owner; returns (engine summary, baseline summary, load seconds).

    With ``embedding`` the engine summary also holds ``embed_s`` and ``embedded_per_s`` (the write-path
    embedding of the memories, through the content-hash cache).
    """
    engine = await MemoryEngine.open(db_path)
    embedder = attach_embedder(engine, embedding) if embedding is not None else None
    if embedder is not None:
        await embedder.embed_query("warm up")  # model load is start-up cost, not per-memory cost
    baseline = SeedLiteralIndex()
    engine_ranks: list[tuple[str, int | None]] = []
    base_ranks: list[tuple[str, int | None]] = []
    load_s = 0.0
    load_time = utcnow()
    try:
        for block in data["owners"]:
            owner = block["owner"]
            t0 = time.perf_counter()
            await engine.write_many(owner, [memory_fact(m) for m in block["memories"]])
            load_s += time.perf_counter() - t0
            for m in block["memories"]:
                # The baseline's last_accessed defaults to the insert time, so its decay re-sort is neutral
                # here.
                baseline.add(
                    owner,
                    m["id"],
                    m["content"],
                    m.get("category") or "event",
                    m.get("importance", 0.5),
                    load_time,
                )
            for q in block["queries"]:
                now: datetime = from_db(q["at"]) if q.get("at") else utcnow()
                relevant = set(q["relevant"])
                hits = await engine.retrieve(owner, q["text"], now, k=max(CUTOFFS), touch=False)
                refs = await engine.refs(owner, [h.id for h in hits])
                engine_ranks.append(
                    (q["kind"], first_relevant_rank([refs.get(h.id, []) for h in hits], relevant))
                )
                base = baseline.query(owner, q["text"], load_time, k=max(CUTOFFS))
                base_ranks.append((q["kind"], first_relevant_rank([[r] for r in base], relevant)))
    finally:
        if embedder is not None:
            await embedder.close()
        await engine.close()
    # Questions whose evidence no memory covers are misses for every method: counting them keeps the
    # numbers comparable with the reference table (LoCoMo ceiling 0.851).
    unanswerable: list[tuple[str, int | None]] = [("no-evidence-memory", None)] * int(
        data.get("dropped_no_evidence", 0) or 0
    )
    answerable = summarise(engine_ranks)
    engine_summary = summarise(engine_ranks + unanswerable)
    engine_summary["answerable"] = {key: answerable[key] for key in answerable if key != "by_kind"}
    if embedder is not None:
        engine_summary["embedded"] = embedder.misses
        engine_summary["embedded_per_s"] = round(embedder.misses / load_s, 1) if load_s else 0.0
    return engine_summary, summarise(base_ranks + unanswerable), load_s


async def evaluate_turns(
    data: dict[str, Any], db_path: str | Path, embedding: EmbeddingSettings | None = None
) -> tuple[dict[str, Any], float]:
    """The items as kept turns, the queries through ``ConversationLog.search``; (summary, load seconds).
    With ``embedding`` (not "none") the turns are embedded after loading and the search is hybrid."""
    from memory.vectors.reindex import reindex

    engine = await MemoryEngine.open(db_path)
    embedder = attach_embedder(engine, embedding) if embedding is not None else None
    ranks: list[tuple[str, int | None]] = []
    load_s = embed_s = 0.0
    owner_ids: dict[str, dict[int, str]] = {}
    try:
        for block in data["owners"]:
            owner = block["owner"]
            ids: dict[int, str] = {}
            t0 = time.perf_counter()
            for m in block["memories"]:
                turn_id = await engine.conversation.record(
                    owner,
                    channel="bench",
                    chat_id=owner,
                    role="user",
                    content=m["content"],
                    now=from_db(m["created_at"]),
                )
                ids[turn_id] = m["id"]
            load_s += time.perf_counter() - t0
            owner_ids[owner] = ids
        if embedder is not None:
            t0 = time.perf_counter()
            await reindex(engine.conversation, embedder, batch_size=64)
            embed_s = time.perf_counter() - t0
        for block in data["owners"]:
            ids = owner_ids[block["owner"]]
            for q in block["queries"]:
                hits = await engine.conversation.search(
                    block["owner"], q["text"], limit=max(CUTOFFS), context=0
                )
                ranked = [[ids.get(h.turn.id, "")] for h in hits]
                ranks.append((q["kind"], first_relevant_rank(ranked, set(q["relevant"]))))
    finally:
        if embedder is not None:
            await embedder.close()
        await engine.close()
    summary = summarise(ranks)
    summary["embed_s"] = round(embed_s, 3)
    return summary, load_s


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.retrieval_quality", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="a benchmark file made by python -m bench.datasets")
    parser.add_argument("--k", type=int, default=5, help="the cut-off shown first in the table (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument(
        "--target",
        choices=("memories", "turns"),
        default="memories",
        help="load the items as memories (default) or as kept conversation turns (conversation_search)",
    )
    add_embedding_args(parser)
    add_database_option(parser)
    args = parser.parse_args(argv)
    data = load_dataset(require_file(args.data, "benchmark file"))
    try:
        settings = embedding_settings(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.target == "turns":
        return _main_turns(args, data, settings)
    with scratch_memory(args.database) as target:
        engine, base, load_s = asyncio.run(evaluate(data, target, settings))
    n_memories = sum(len(b["memories"]) for b in data["owners"])
    rows = [["tierclaw", *[engine[f"recall@{c}"] for c in CUTOFFS], engine["mrr"], engine["n"]]]
    rows.append(["seed-literal", *[base[f"recall@{c}"] for c in CUTOFFS], base["mrr"], base["n"]])
    for kind, block in engine["by_kind"].items():
        rows.append([f"  {kind}", *[block[f"recall@{c}"] for c in CUTOFFS], block["mrr"], block["n"]])
    print(
        f"{data['name']}: {n_memories} memories, {engine['n']} queries; loaded in {load_s:.1f} s; "
        f"embedding {args.embedding}"
    )
    print(table(["method / kind", "R@1", "R@5", "R@10", "MRR", "n"], rows))
    dropped = int(data.get("dropped_no_evidence", 0) or 0)
    if dropped:
        ceiling = 1 - dropped / engine["n"]
        print(
            f"{dropped} questions have no evidence memory and count as misses (ceiling {ceiling:.3f}); "
            f"recall@{args.k} over answerable questions: {engine['answerable'][f'recall@{args.k}']:.3f}"
        )
    if args.json:
        result = dict(engine)
        result["baseline"] = base
        result["k"] = args.k
        result["dropped_no_evidence"] = dropped
        result["memories"] = n_memories
        result["load_s"] = round(load_s, 3)
        result["embedding"] = args.embedding
        result["store"] = store_name(args.database)
        emit_json(result)
    return 0


def _main_turns(args: argparse.Namespace, data: dict[str, Any], settings: EmbeddingSettings) -> int:
    """``--target turns``: conversation search only (no baseline), keyword or hybrid."""
    with scratch_memory(args.database) as target:
        result, load_s = asyncio.run(evaluate_turns(data, target, settings))
    rows = [["conversation_search", *[result[f"recall@{c}"] for c in CUTOFFS], result["mrr"], result["n"]]]
    for kind, block in result["by_kind"].items():
        rows.append([f"  {kind}", *[block[f"recall@{c}"] for c in CUTOFFS], block["mrr"], block["n"]])
    n_items = sum(len(b["memories"]) for b in data["owners"])
    print(
        f"{data['name']}: {n_items} turns, {result['n']} queries; loaded in {load_s:.1f} s; "
        f"embedding {args.embedding}"
    )
    print(table(["method / kind", "R@1", "R@5", "R@10", "MRR", "n"], rows))
    if args.json:
        extra = {"k": args.k, "memories": n_items, "load_s": round(load_s, 3), "target": "turns"}
        extra["store"] = store_name(args.database)
        emit_json({**result, **extra, "embedding": args.embedding})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
