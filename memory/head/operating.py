"""The gate's operating point per language (issue 35, round 13): ``train --only gate-point --networks FILE
--gate-fire-rate en=0.15,zh=0.25 [--own-false-rate ...]`` chooses again only the ``thresholds``' gate and
own columns, on the out-of-fold scores of FILE's gate members on the gate's training rows (the rates are
shares of the training chit-chat lines / other texts, ``calibrate.gate_thresholds``); every other array of
FILE — the networks, the keep and tell columns, ``combined*``, the question arrays — is written bit for
bit."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory.head.calibrate import Rates, fold_ids, gate_thresholds, out_of_fold
from memory.head.corpus import Example
from memory.head.dialogues import ROUND2, ROUND10
from memory.head.floor import values_by_language
from memory.head.model import LANGUAGES, read_head
from memory.head.outputs import read_arrays, save_head

# The version a head file carries once its gate and own columns are chosen here (meta only: the
# networks and every other column are those of the file it started from).
GATE_POINT_VERSION = "2026.12-13g"
# The columns of ``thresholds`` (keep, gate, own, tell) chosen here.
GATE_COLUMNS = (1, 2)


def parse_rates(text: str) -> dict[str, float]:
    """``en=0.15,zh=0.25`` (or one number for both languages) as a rate per language of ``LANGUAGES``."""
    rates = values_by_language(text)
    if sorted(rates) != sorted(LANGUAGES):
        raise ValueError(f"a rate for each of {LANGUAGES}: {text!r}")
    return rates


def merge_gate(
    base: dict[str, np.ndarray],
    chosen: dict[str, tuple[float, float]],
    report: object,
    langs: Sequence[str] = LANGUAGES,
) -> dict:
    """``base``'s arrays with only the gate and own columns of ``thresholds`` replaced by ``chosen``
    (per language: gate, own) for ``langs`` (every other row bit for bit) and the meta's version and
    ``report["gate_point"]`` set."""
    arrays = dict(base)
    thresholds = np.array(base["thresholds"], copy=True)
    for row, lang in enumerate(LANGUAGES):
        if lang not in langs:
            continue
        for column, value in zip(GATE_COLUMNS, chosen[lang], strict=True):
            thresholds[row, column] = value
    arrays["thresholds"] = thresholds
    meta = json.loads(str(base["meta"]))
    meta["version"] = GATE_POINT_VERSION
    meta["report"] = {**meta.get("report", {}), "gate_point": report}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    return arrays


def gate_point(
    networks: str,
    out: str,
    rows: tuple[Sequence[Example], np.ndarray, np.ndarray, np.ndarray],
    rates: Rates,
    langs: Sequence[str] | None = None,
) -> dict[str, object]:
    """Write ``out``: ``networks``' head file with the gate and own thresholds chosen again at ``rates``.
    ``rows``: the gate's training examples, their query vectors, their folds, which are chit-chat lines.

    Round 21: each language's columns are chosen on the out-of-fold scores of the gate network that
    language reads (``Head.gate_for``: its own ``gate_<lang>_*`` since round 15, else the shared one) —
    a head with one language's own gate had that language's thresholds chosen on the other gate's scores
    before. ``langs`` (``train --only gate-point --gate-languages zh``): only these rows are chosen again,
    every other language's row bit for bit (its own gate may have been trained on rows this run does not
    build: round 19's ``--passing`` for English)."""
    examples, queries, folds, lines = rows
    base = read_arrays(networks)
    with np.load(networks) as data:
        head = read_head(data)
    langs = list(langs or LANGUAGES)
    chosen: dict[str, tuple[float, float]] = {}
    report: dict[str, object] = {"networks": networks, "languages": langs}
    for lang in langs:
        gate = out_of_fold(head.gate_for(lang), queries, folds)
        picked, by_language = gate_thresholds(examples, gate, lines, rates)
        chosen[lang], report[lang] = picked[lang], by_language[lang]
    report["rates"] = {"gate_fire": rates.gate_fire, "own_false": rates.own_false}
    save_head(out, merge_gate(base, chosen, report, langs))
    return report


def run(
    args: Any,
    rates: Rates,
    training_examples: Callable[..., tuple[list[Example], int, dict[str, object]]],
    embed: Callable[[list[str], str, Path | None], np.ndarray],
    gate_rows: Callable[[list[Example]], np.ndarray],
) -> int:
    """``train --only gate-point``: the gate's training rows as a full run builds them (same data, seed,
    folds), then ``gate_point``; prints the report."""
    cache = Path(args.cache) if args.cache else None
    world = (int(args.world), tuple(args.world_languages.split(",")))
    mining = ROUND10 if args.round10 else ROUND2
    examples, _, _ = training_examples(Path(args.data), cache, bool(args.chat8), mining, world)
    in_gate = gate_rows(examples)
    chosen = [e for e, used in zip(examples, in_gate, strict=True) if used]
    queries = embed([e.text for e in chosen], "query", cache)
    folds = fold_ids(examples, int(args.seed))[in_gate]
    lines = np.array([e.source.endswith("-train") for e in chosen])
    langs = args.gate_languages.split(",") if args.gate_languages else None  # round 21: these rows only
    report = gate_point(args.networks or args.out, args.out, (chosen, queries, folds, lines), rates, langs)
    print(json.dumps(report, indent=1, sort_keys=True))
    print(f"wrote {args.out} ({Path(args.out).stat().st_size} bytes)")
    return 0
