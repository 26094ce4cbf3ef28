"""Why the round-13 cut lets held-out chit-chat through (issue 35, round 14): the scores a combined cut
was chosen on beside the scores the keeper gives held-out lines.

``python -m memory.head.gap --head FILE [--data ../shared/data] [--cache FILE.npz] [--lines 500]``

The combined threshold is chosen on the training chit-chat lines' *out-of-fold* scores: each line read by
the keep and gate members of its fold, which never saw it. The keeper reads a held-out line with the
whole ensemble (the members' log-odds averaged). If the held-out lines pass far more often than the
training lines did, the difference is in one of three places, and this reads each one:

* ``train_oof``: training lines, each by its fold's members (what the cut was chosen on);
* ``train_ensemble``: the same lines by the ensemble (four of five members saw each line: in sample);
* ``held_member``: held-out lines (``bench.everyday --corpora``'s) by one member at a time — the way a
  training line is read, on lines no member saw; if these pass like ``train_oof``, the members did not
  learn the training halves' lines any better than unseen ones;
* ``held_ensemble``: held-out lines by the ensemble, as the keeper reads them.

Per corpus: the share of lines whose best clause reaches the cut, and quantiles of the best clause's
combined score minus the cut, its keep log-odds, the message's and the clause's sentence's tell.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from memory.head.calibrate import fold_ids
from memory.head.corpus import CHAT_CORPORA, SEED, distinct_lines
from memory.head.longer import clause_table
from memory.head.model import Combined, Head, gate_odds, read_head

QUANTILES = (0.5, 0.9, 0.95, 0.975, 0.99)
Embed = Mapping[str, Callable[[list[str]], np.ndarray]]


def line_scores(table: np.ndarray, tell: float, rule: Combined) -> tuple[float, float, float, float]:
    """(best clause's combined score minus the cut, its keep, the message's tell, its sentence's tell) of
    one line's clause table (``longer.clause_table``: keep, own per clause)."""
    scores = rule.a * table[:, 0] + rule.b * tell + rule.c + rule.g * table[:, 1] - rule.threshold
    best = int(np.argmax(scores))
    return float(scores[best]), float(table[best, 0]), tell, float(table[best, 1])


def read_lines(
    texts: Sequence[str], folds: np.ndarray, head: Head, embed: Embed, rule: Combined
) -> np.ndarray:
    """(n, 4) ``line_scores`` of lines, each read by the members of its fold (``folds``; -1: the
    ensemble, the mean of every member's log-odds, as the keeper reads)."""
    members = range(head.gate_w.members)
    tell_all = gate_odds(head.gate_w.logits(embed["query"](list(texts))))[1]  # (members, n)
    per_member = {
        k: clause_table(texts, np.full(len(texts), k), (head.keep_w, head.gate_w), embed) for k in members
    }
    rows = []
    for i, k in enumerate(folds):
        if int(k) < 0:
            table = np.mean([per_member[m][i] for m in members], axis=0)
            tell = float(tell_all[:, i].mean())
        else:
            table, tell = per_member[int(k)][i], float(tell_all[int(k), i])
        rows.append(line_scores(table, tell, rule))
    return np.array(rows)


def summary(rows: np.ndarray) -> dict[str, object]:
    """The pass rate and quantiles of each column of ``read_lines``."""
    names = ("score_minus_cut", "keep", "tell_message", "tell_sentence")
    out: dict[str, object] = {"n": len(rows), "passed": round(float((rows[:, 0] >= 0).mean()), 4)}
    for j, name in enumerate(names):
        out[name] = [round(float(np.quantile(rows[:, j], q)), 2) for q in QUANTILES]
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: the four readings per corpus as JSON."""
    from memory.head.embedding import embed
    from memory.head.gate_training import gate_rows
    from memory.head.train import training_examples

    parser = argparse.ArgumentParser(prog="python -m memory.head.gap", description=__doc__.split("\n")[0])
    parser.add_argument("--head", required=True)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--lines", type=int, default=500, help="held-out lines per corpus (bench's)")
    args = parser.parse_args(argv)
    root, cache = Path(args.data), Path(args.cache) if args.cache else None
    with np.load(args.head) as data:
        head = read_head(data)
    assert head.combined is not None
    embed_as: Embed = {m: partial(embed, mode=m, cache=cache) for m in ("passage", "query")}
    examples, _, _ = training_examples(root, cache)
    folds = fold_ids(examples, SEED)
    seen = gate_rows(examples)
    report: dict[str, object] = {"head": args.head}
    for corpus, lang in CHAT_CORPORA:
        rows = [i for i, e in enumerate(examples) if e.source == f"{corpus}-train" and seen[i]]
        train = [examples[i].text for i in rows]
        held = distinct_lines(root, corpus, held_out=True)[: args.lines]
        rule = head.combined[lang]
        spread_folds = np.arange(len(held)) % head.gate_w.members
        report[corpus] = {
            "train_oof": summary(read_lines(train, folds[rows], head, embed_as, rule)),
            "train_ensemble": summary(read_lines(train, np.full(len(train), -1), head, embed_as, rule)),
            "held_member": summary(read_lines(held, spread_folds, head, embed_as, rule)),
            "held_ensemble": summary(read_lines(held, np.full(len(held), -1), head, embed_as, rule)),
        }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
