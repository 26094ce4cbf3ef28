"""How well ``should_retrieve`` separates recall moments from chit-chat, per language.

    python -m bench.gate --data FILE.jsonl [--json]
    python -m bench.gate --data FILE.jsonl --embedding local --corpora ../shared/data [--sample 300] [--json]

Lines are ``{"text", "needs_memory", "lang", "source"?}`` (make them with ``python -m bench.datasets gate``).
"Fires" means should_retrieve returned True. Prints recall on positives and fire rate on negatives per
language (and per source), and the original design's rules' numbers quoted from the reference measurements.
``us_per_message`` / ``us_p95`` are the rules' cost (the cheap first step, no embedding).

With ``--embedding local`` the gate the gateway runs with the shipped embedder is measured too (issue 35):
the rules with ``learned=True``, then the keyword rules or, for a question, the learned head on the
message's query vector (``Head.wants_memory``), as ``gateway/assistant.py`` does; on a seeded sample of
``--sample`` lines per source, the LCCC/DailyDialog lines from the held-out halves only (``--corpora``:
the head never saw them). JSON: ``learned`` (``by_lang``, ``by_source``, ``sample``) and
``learned_ms_per_message`` (the embedding).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.dataset_format import read_jsonl
from bench.report import emit_json, percentile, require_file, table
from memory.retrieval.gate import should_retrieve
from memory.retrieval.question import question_focus


def measure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall / fire rate per language and per source, plus the gate's mean cost per message."""
    fired: dict[tuple[str, bool], list[bool]] = defaultdict(list)
    by_source: dict[str, list[bool]] = defaultdict(list)
    costs: list[float] = []
    t0 = time.perf_counter()
    for row in rows:
        started = time.perf_counter()
        fire = should_retrieve(row["text"])
        costs.append(time.perf_counter() - started)
        fired[(row["lang"], bool(row["needs_memory"]))].append(fire)
        by_source[row.get("source", row["lang"])].append(fire)
    elapsed = time.perf_counter() - t0

    def rate(values: list[bool]) -> float:
        return sum(values) / len(values) if values else 0.0

    langs = sorted({lang for lang, _ in fired})
    return {
        "by_lang": {
            lang: {
                "recall": rate(fired[(lang, True)]),
                "fire_rate": rate(fired[(lang, False)]),
                "positives": len(fired[(lang, True)]),
                "negatives": len(fired[(lang, False)]),
            }
            for lang in langs
        },
        "by_source": {src: {"fire_rate": rate(v), "n": len(v)} for src, v in sorted(by_source.items())},
        "us_per_message": elapsed / max(len(rows), 1) * 1e6,
        "us_p95": percentile(costs, 95) * 1e6 if costs else 0.0,
    }


def _rates(fired: dict[tuple[str, bool], list[bool]], by_source: dict[str, list[bool]]) -> dict[str, Any]:
    def rate(values: list[bool]) -> float:
        return sum(values) / len(values) if values else 0.0

    return {
        "by_lang": {
            lang: {"recall": rate(fired[(lang, True)]), "fire_rate": rate(fired[(lang, False)])}
            for lang in sorted({lang for lang, _ in fired})
        },
        "by_source": {src: {"fire_rate": rate(v), "n": len(v)} for src, v in sorted(by_source.items())},
    }


def learned_sample(rows: list[dict[str, Any]], corpora: Path, per_source: int) -> list[dict[str, Any]]:
    """A seeded sample of ``per_source`` lines per source; chit-chat only from the held-out halves."""
    from memory.head.corpus import chitchat_split

    held = set(chitchat_split(corpora, "lccc", held_out=True)) | set(
        chitchat_split(corpora, "dailydialog", held_out=True)
    )
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        source = row.get("source", row["lang"])
        if source in ("lccc", "dailydialog") and row["text"] not in held:
            continue
        groups[source].append(row)
    rng = random.Random(35)
    return [
        r
        for source in sorted(groups)
        for r in rng.sample(groups[source], min(per_source, len(groups[source])))
    ]


async def measure_learned(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], float]:
    """The gate with the head: the rules (learned=True), then ``Head.wants_memory`` on the query vector of
    a message that asks (``verdict.message_asks``: the rule, then the learned question classifier)."""
    from memory.head.model import load_head
    from memory.head.verdict import message_asks
    from memory.vectors.embedding import LocalEmbedder

    head, embedder = load_head(), LocalEmbedder()
    fired: dict[tuple[str, bool], list[bool]] = defaultdict(list)
    by_source: dict[str, list[bool]] = defaultdict(list)
    await embedder.warm_up()
    started = time.perf_counter()
    try:
        for row in rows:
            fire = should_retrieve(row["text"], learned=True)
            if fire and not should_retrieve(row["text"]):  # the keyword rules, then the head on questions
                vector = (await embedder.embed_queries([question_focus(row["text"])]))[0]
                fire = message_asks(vector, row["text"]) and head.wants_memory(vector, row["text"])
            fired[(row["lang"], bool(row["needs_memory"]))].append(fire)
            by_source[row.get("source", row["lang"])].append(fire)
    finally:
        await embedder.close()
    return _rates(fired, by_source), (time.perf_counter() - started) / max(len(rows), 1) * 1000


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.gate", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="gate set made by python -m bench.datasets gate")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument(
        "--embedding", choices=("none", "local"), default="none", help="also the learned gate"
    )
    parser.add_argument(
        "--corpora", help="the shared data folder (held-out chit-chat; with --embedding local)"
    )
    parser.add_argument("--sample", type=int, default=300, help="lines per source for the learned gate")
    args = parser.parse_args(argv)
    rows = read_jsonl(require_file(args.data, "gate set"))
    result = measure(rows)
    if args.embedding == "local":
        if not args.corpora:
            parser.error("--embedding local needs --corpora (the held-out chit-chat)")
        sample = learned_sample(rows, require_file(args.corpora, "data folder"), args.sample)
        result["learned"], result["learned_ms_per_message"] = asyncio.run(measure_learned(sample))
        result["learned"]["sample"] = len(sample)
    print(
        table(
            ["lang", "recall (positives)", "fire rate (negatives)", "positives", "negatives"],
            [
                [lang, b["recall"], b["fire_rate"], b["positives"], b["negatives"]]
                for lang, b in result["by_lang"].items()
            ],
        )
    )
    print()
    print(
        table(["source", "fires", "n"], [[s, b["fire_rate"], b["n"]] for s, b in result["by_source"].items()])
    )
    print(f"\nshould_retrieve: {result['us_per_message']:.1f} µs per message, p95 {result['us_p95']:.1f} µs")
    if "learned" in result:
        learned = result["learned"]
        print(f"\nlearned gate ({learned['sample']} lines, {result['learned_ms_per_message']:.1f} ms each):")
        print(
            table(
                ["lang", "recall", "fire rate"],
                [[k, v["recall"], v["fire_rate"]] for k, v in learned["by_lang"].items()],
            )
        )
        print(
            table(
                ["source", "fires", "n"],
                [[k, v["fire_rate"], v["n"]] for k, v in learned["by_source"].items()],
            )
        )
    print(
        "original design's rules (reference): zh recall 0.487 / LCCC fire 0.184; "
        "en recall 0.999 / DailyDialog fire 0.355"
    )
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
