"""How many memory pairs of one owner the near-duplicate rule would merge, at several Dice thresholds.

    python -m bench.dedup_threshold --data FILE [--examples N] [--json]

Run on LoCoMo observations (distinct facts by construction, with real restatements across sessions), it
shows where merging starts to swallow different facts: the justification for ``NEAR_DUPLICATE_DICE``.
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any

from bench.dataset_format import load_dataset
from bench.report import emit_json, require_file, table
from memory.dedup import NEAR_DUPLICATE_DICE, NEGATIONS, content_words, dice

THRESHOLDS = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def pair_scores(data: dict[str, Any]) -> list[tuple[float, str, str]]:
    """Dice of every same-owner memory pair whose negations agree (the rule never merges the others)."""
    scored: list[tuple[float, str, str]] = []
    for block in data["owners"]:
        items = [(m["content"], content_words(m["content"])) for m in block["memories"]]
        for (a, wa), (b, wb) in itertools.combinations(items, 2):
            if (wa & NEGATIONS) == (wb & NEGATIONS):
                score = dice(wa, wb)
                if score >= THRESHOLDS[0]:
                    scored.append((score, a, b))
    return scored


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.dedup_threshold", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="a benchmark file made by python -m bench.datasets")
    parser.add_argument("--examples", type=int, default=3, help="example pairs shown per threshold band")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    data = load_dataset(require_file(args.data, "benchmark file"))
    scored = pair_scores(data)
    counts = {str(t): sum(1 for s, _, _ in scored if s >= t) for t in THRESHOLDS}
    n_memories = sum(len(b["memories"]) for b in data["owners"])
    print(f"{data['name']}: {n_memories} memories; current threshold {NEAR_DUPLICATE_DICE}")
    print(table(["Dice >=", "pairs merged"], [[t, c] for t, c in counts.items()]))
    for low, high in itertools.pairwise((*THRESHOLDS, 1.01)):
        band = sorted((p for p in scored if low <= p[0] < high), key=lambda p: -p[0])[: args.examples]
        if band:
            print(f"\n[{low}, {min(high, 1.0)}):")
            for score, a, b in band:
                print(f"  {score:.2f}  {a[:70]!r}\n        {b[:70]!r}")
    if args.json:
        emit_json({"pairs_at": counts, "memories": n_memories, "threshold": NEAR_DUPLICATE_DICE})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
