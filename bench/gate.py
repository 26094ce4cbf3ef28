"""How well ``should_retrieve`` separates recall moments from chit-chat, per language.

    python -m bench.gate --data FILE.jsonl [--json]

Lines are ``{"text", "needs_memory", "lang", "source"?}`` (make them with ``python -m bench.datasets gate``).
"Fires" means should_retrieve returned True. Prints recall on positives and fire rate on negatives per
language (and per source), and the original design's rules' numbers quoted from the reference measurements.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from typing import Any

from bench.dataset_format import read_jsonl
from bench.report import emit_json, require_file, table
from memory.retrieval.gate import should_retrieve


def measure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall / fire rate per language and per source, plus the gate's mean cost per message."""
    fired: dict[tuple[str, bool], list[bool]] = defaultdict(list)
    by_source: dict[str, list[bool]] = defaultdict(list)
    t0 = time.perf_counter()
    for row in rows:
        fire = should_retrieve(row["text"])
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
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.gate", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="gate set made by python -m bench.datasets gate")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    rows = read_jsonl(require_file(args.data, "gate set"))
    result = measure(rows)
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
    print(f"\nshould_retrieve: {result['us_per_message']:.1f} µs per message")
    print(
        "original design's rules (reference): zh recall 0.487 / LCCC fire 0.184; "
        "en recall 0.999 / DailyDialog fire 0.355"
    )
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
