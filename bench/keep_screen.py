"""What the offline stand-in keeps, for several head files in one process (issue 35, stop 63): a round's
candidates screened before the full ``bench.everyday`` runs.

    python -m bench.keep_screen --head A.npz --head B.npz --data bench/data/everyday_dev.json [--data …]
        [--corpora ../shared/data] [--corpora-lines 500] [--json]

Each head (``memory.head.swap.head_file``) is put every tell and chit-chat line of the sets and, with
``--corpora``, the held-out LCCC and DailyDialog lines ``bench.everyday --corpora`` reads (a line a reader
judged also under ``<corpus>/fact``, ``/unsure`` or ``/no``, round 31); a message counts
as kept when the keeper (``FactKeeper.facts``, the whole decision: candidates, the head's verdicts, the
rules) keeps anything of it. No store and no recall, so it is minutes for many heads where ``bench.everyday
--mode tell`` is minutes for one: the embedder's caches serve every head after the first. On the head
2026.12-29k (stop 63) and the 24 dev sets it gave ``bench.everyday``'s tell kept (1,475 English, 1,266
Chinese) and false keeps (LCCC 9, DailyDialog 10 of 500) exactly; on 2026.12-31t (stop 64), 1,568 and 1,400.

Only for sets already run: a blind set is run once, by ``bench.everyday``, at the end of its round.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.embedding_option import attach_embedder
from bench.everyday import load_everyday
from bench.everyday_measures import corpus_lines
from bench.report import emit_json, require_file
from memory.engine import MemoryEngine
from memory.head.swap import head_file
from memory.head.told_lines import judged_label
from memory.model.keeper import FactKeeper
from memory.vectors.embedding import EmbeddingSettings

# (group, language, text) of every message a head is put.
Message = tuple[str, str, str]


def messages(sets: list[Path], corpora: Path | None, lines: int) -> list[Message]:
    """The sets' tells and chit-chat lines, then the corpora's held-out lines (group ``lccc``, …)."""
    out: list[Message] = []
    for path in sets:
        data = load_everyday(path)
        out += [("tell", p["lang"], p["tell"]) for p in data["pairs"]]
        out += [("chitchat", c["lang"], c["text"]) for c in data.get("chitchat", [])]
    if corpora is not None:
        out += [(r["source"], r["lang"], r["text"]) for r in corpus_lines(corpora, lines)]
    return out


def judged_group(group: str, text: str) -> list[str]:
    """A corpus line a reader judged also counts in ``<corpus>/fact``, ``/unsure`` or ``/no`` (round 31,
    ``memory.head.told_lines``): kept "no" and "unsure" lines are the false keeps a fact line is not."""
    label = judged_label(group, text)
    return [f"{group}/{label}"] if label else []


async def screen(heads: list[Path], said: list[Message]) -> dict[str, Any]:
    """Per head: of each group and language, how many messages the keeper keeps anything of, and of how
    many."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as workspace:
        engine = await MemoryEngine.open(Path(workspace) / "memory.db")
        embedder = attach_embedder(engine, EmbeddingSettings(provider="local"))
        if embedder is None:
            raise SystemExit("keep_screen needs the local embedder (the head reads its vectors)")
        keeper = FactKeeper(embedder)
        try:
            for head in heads:
                counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
                with head_file(head):
                    for group, lang, text in said:
                        kept = bool(await keeper.facts(text))
                        for name in (group, *judged_group(group, text)):
                            counts[name][lang][0] += int(kept)
                            counts[name][lang][1] += 1
                out[str(head)] = {g: {lang: tuple(v) for lang, v in by.items()} for g, by in counts.items()}
        finally:
            await embedder.close()
            await engine.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.keep_screen", description=__doc__.split("\n")[0])
    parser.add_argument("--head", action="append", required=True, help="a head file (repeat for more)")
    parser.add_argument("--data", action="append", required=True, help="an everyday file (repeat for more)")
    parser.add_argument("--corpora", help="the shared data folder: LCCC's, DailyDialog's held-out lines too")
    parser.add_argument("--corpora-lines", type=int, default=500, help="held-out lines of each corpus")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    heads = [require_file(h, "head file") for h in args.head]
    sets = [require_file(d, "everyday file") for d in args.data]
    corpora = require_file(args.corpora, "shared data folder") if args.corpora else None
    result = {"heads": asyncio.run(screen(heads, messages(sets, corpora, args.corpora_lines)))}
    for head, groups in result["heads"].items():
        shown = "; ".join(
            f"{g} " + ", ".join(f"{lang} {k}/{n}" for lang, (k, n) in sorted(by.items()))
            for g, by in groups.items()
        )
        print(f"{head}: {shown}")
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
