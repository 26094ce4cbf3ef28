"""What ``bench.everyday`` measures beside its pairs (issue 35): the chit-chat corpora and the categories.

* ``--corpora DIR`` (the shared data folder): the held-out halves of LCCC and DailyDialog
  (``memory.head.corpus.chitchat_split``: dialogues the head was never trained on), their first
  ``--corpora-lines`` lines each. Tell mode: the share of lines the offline stand-in would keep anything of
  (``corpora_false_keeps``; issue 35: at most 0.02) and, over the lines a reader judged (round 31,
  ``memory.head.told_lines``), the share that state a fact about the speaker, the share kept that were not
  judged a fact, and the share of fact lines kept (``judged_lines``). Ask mode: the lines go through the
  message path as chit-chat of the person of their language (``corpora_injection``: the share that got
  memories).
* ``head_load_ms`` (with the embedder): the median of three cold loads of the head, each in a fresh
  process that has numpy already (the gateway has: the embedder needs it) — importing
  ``memory.head.model`` and reading ``head.npz`` (issue 35: at most 50 ms).
* ``--categories FILE`` (``bench/data/categories.json``): each labelled statement's category as the
  offline model files it — the head with ``--embedding local``, the keyword rule with ``none`` — and the
  accuracy per category (``category_accuracy``; issue 35: at least 0.85 each).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.report import require_file
from memory.head.corpus import CHAT_CORPORA, distinct_lines
from memory.head.told_lines import judged_label
from memory.model.keeper import FactKeeper, head_usable
from memory.text.category import fallback_category

CORPORA = CHAT_CORPORA


def corpus_lines(root: Path, lines: int) -> list[dict[str, str]]:
    """The first ``lines`` distinct held-out lines of each chit-chat corpus (``{"text", "lang",
    "source"}``)."""
    out: list[dict[str, str]] = []
    for corpus, lang in CORPORA:
        texts = distinct_lines(root, corpus, held_out=True)[:lines]
        out += [{"text": t, "lang": lang, "source": corpus} for t in texts]
    return out


async def false_keeps(keeper: FactKeeper, rows: list[dict[str, str]]) -> dict[str, Any]:
    """Per corpus: the share of lines of which the keeper keeps anything, and a few of them; and, over the
    lines a reader judged (``memory.head.told_lines``, round 31), the shares ``judged_lines``."""
    kept: dict[str, list[bool]] = defaultdict(list)
    examples: dict[str, list[str]] = defaultdict(list)
    labels: dict[str, list[str | None]] = defaultdict(list)
    for row in rows:
        facts = await keeper.facts(row["text"])
        kept[row["source"]].append(bool(facts))
        labels[row["source"]].append(judged_label(row["source"], row["text"]))
        if facts and len(examples[row["source"]]) < 5:
            examples[row["source"]].append(row["text"])
    return {
        source: {
            "false_keeps": sum(v) / len(v),
            "n": len(v),
            "examples": examples[source],
            **judged_lines(v, labels[source]),
        }
        for source, v in kept.items()
    }


def judged_lines(kept: list[bool], labels: list[str | None]) -> dict[str, float | int | None]:
    """Over the lines a reader judged: ``labelled_facts`` (the share judged to state a lasting fact about
    the speaker — what a keeper that kept exactly the facts would score as ``false_keeps``),
    ``kept_without_fact`` (the share kept and not judged a fact; "unsure" counts against the keeper) and
    ``facts_kept`` (the share of the fact lines kept). None where no line (or no fact line) was judged."""
    pairs = [(k, lab) for k, lab in zip(kept, labels, strict=True) if lab is not None]
    facts = [k for k, lab in pairs if lab == "fact"]
    n = len(pairs)
    return {
        "judged": n,
        "labelled_facts": len(facts) / n if n else None,
        "kept_without_fact": sum(k for k, lab in pairs if lab != "fact") / n if n else None,
        "facts_kept": sum(facts) / len(facts) if facts else None,
    }


def load_categories(path: Path) -> list[dict[str, str]]:
    """The labelled statements of a category file (``{"rows": [{"lang", "category", "text"}]}``)."""
    data = json.loads(require_file(path, "category file").read_text(encoding="utf-8"))
    return list(data["rows"])


async def category_accuracy(keeper: FactKeeper, rows: list[dict[str, str]]) -> dict[str, Any]:
    """Accuracy per labelled category (and per language) of the category the offline model files."""
    texts = [r["text"] for r in rows]
    if head_usable(keeper.embedder) and keeper.embedder is not None:
        from memory.head.model import load_head

        got = load_head().categories(await keeper.embedder.embed_passages(texts))
    else:
        got = [fallback_category(t) for t in texts]
    hits: dict[str, list[bool]] = defaultdict(list)
    for row, category in zip(rows, got, strict=True):
        hits[row["category"]].append(category == row["category"])
        hits[f"{row['lang']}/{row['category']}"].append(category == row["category"])
    out: dict[str, Any] = {k: {"accuracy": sum(v) / len(v), "n": len(v)} for k, v in sorted(hits.items())}
    out["all"] = {
        "accuracy": sum(a == r["category"] for a, r in zip(got, rows, strict=True)) / len(rows),
        "n": len(rows),
    }
    return out


_COLD_LOAD = (
    "import time, numpy; t = time.perf_counter(); from memory.head.model import load_head; load_head(); "
    "print((time.perf_counter() - t) * 1000)"
)


def head_load_ms(runs: int = 3) -> float:
    """The median cold load of the head (module import and ``head.npz``), in fresh processes."""
    command = [sys.executable, "-c", _COLD_LOAD]
    runs_out = [subprocess.run(command, capture_output=True, text=True, check=True) for _ in range(runs)]
    times = [float(done.stdout) for done in runs_out]
    return statistics.median(times)
