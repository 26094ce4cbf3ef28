"""A gate network for some languages only (issue 35, round 15; ``train --gate-only HEAD --gate-languages
en``): a new gate that meets its bars in one language and not in the other ships for that language alone.

Why a file of its own: a gate-only run trains one gate on both languages' rows and chooses each
language's thresholds and combined row on that language's out-of-fold scores. Those per-language parts
are independent of the other language's, so a head can take, for the languages named, the new network
(stored as ``gate_<lang>_*``, ``model.Head.gate_for``) with that language's row of ``thresholds`` and of
``combined*``, and keep for every other language the earlier head's shared gate and rows bit for bit.
Both gates' first layers are stored as float16 so that the file stays within the issue's 2 MB (the
log-odds move by about 0.002; ``model.Classifier.read`` reads them back as float32).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from memory.head.calibrate import given_networks, out_of_fold
from memory.head.corpus import Example
from memory.head.model import LANGUAGES, PARTS, Classifier, read_head
from memory.head.outputs import read_arrays, save_head

# The arrays with one row per language (``outputs.head_rows``).
ROWS = ("thresholds", "combined", "combined_spread", "combined_sentence")


def own_gates(base: str, out: str, langs: Sequence[str]) -> dict[str, object]:
    """Rewrite ``out`` (just written by ``train --gate-only base``) so that its gate network judges only
    ``langs`` with their rows of ``ROWS``; every other language keeps ``base``'s gate — the shared one
    (``gate_*``) or its own (``gate_<lang>_*``) — and its rows bit for bit.

    Where ``base`` has a language's own gate already (round 19: 2026.12-18g has English's, a run for
    Chinese), that gate is kept as it is; a language named must not have one. When no language would be
    left on the shared gate, the new network is stored as the shared gate (``gate_*``) rather than as a
    third copy: ``model.Head`` reads a language without ``gate_<lang>_*`` by the shared one, so the verdicts
    are those of a ``gate_<lang>_*`` copy while the file keeps two gate networks (2 MB; the cold load)."""
    old, new = read_arrays(base), read_arrays(out)
    if not set(langs) <= set(LANGUAGES) or not langs:
        raise ValueError(f"languages {list(langs)} not among {LANGUAGES}")
    owned = [lang for lang in LANGUAGES if any(k.startswith(f"gate_{lang}_") for k in old)]
    if set(owned) & set(langs):
        raise ValueError(f"{base} has a gate of its own for {sorted(set(owned) & set(langs))} already")
    shared_left = [lang for lang in LANGUAGES if lang not in owned and lang not in langs]
    arrays = {k: v for k, v in new.items() if not k.startswith(tuple(f"gate_{lang}_" for lang in LANGUAGES))}
    for part in PARTS:
        for lang in owned:  # a language's own gate of ``base``, bit for bit
            arrays[f"gate_{lang}_{part}"] = old[f"gate_{lang}_{part}"]
        if shared_left:  # the others keep the shared gate; the new one is each named language's own
            arrays[f"gate_{part}"] = old[f"gate_{part}"]
            for lang in langs:
                arrays[f"gate_{lang}_{part}"] = new[f"gate_{part}"]
    for name in [k for k in arrays if k == "gate_w1" or (k.startswith("gate_") and k.endswith("_w1"))]:
        arrays[name] = np.asarray(arrays[name], dtype=np.float16)  # float16 of float16: the same bits
    for name in ROWS:
        if name not in new and name not in old:
            continue
        if (name in new) != (name in old):
            raise ValueError(f"{name} is in one head file only")
        rows = np.array(old[name], copy=True)
        for lang in langs:
            rows[LANGUAGES.index(lang)] = new[name][LANGUAGES.index(lang)]
        arrays[name] = rows
    meta = json.loads(str(new["meta"]))
    stored = "shared" if not shared_left else "own"
    report: dict[str, object] = {"languages": list(langs), "others_from": base, "kept_own": owned}
    report["stored"] = stored
    meta["report"] = {**meta.get("report", {}), "gate_languages": report}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    save_head(out, arrays)
    return report


def own_gate_networks(
    path: str,
    passages: np.ndarray,
    queries: np.ndarray,
    folds: np.ndarray,
    in_gate: np.ndarray,
    gate_examples: list[Example],
) -> tuple[Classifier, Classifier, Classifier, np.ndarray, np.ndarray, dict[str, object]]:
    """``calibrate.given_networks`` for ``train --only keep`` (round 28), with the gate rows of each language
    that has a gate of its own in ``path`` (``gate_<lang>_*``) scored by that gate's members out of fold.

    Why: the keep and tell thresholds and the combined rows an ``--only keep`` run chooses read the gate's
    logits; at run time a message of such a language is judged by its own gate (``Head.gate_for``), so its
    rows must be chosen on that gate's scores, not on the shared gate's (in 2026.12-26g/27g the shared gate
    is Chinese's and English has its own: English's rows were otherwise fitted on the Chinese gate)."""
    keep, category, gate, keep_scores, gate_scores, report = given_networks(
        path, passages, queries, folds, in_gate
    )
    with np.load(path) as data:
        own = read_head(data).gate_by_language
    langs, gate_folds = np.array([e.lang for e in gate_examples]), folds[in_gate]
    for lang, network in sorted(own.items()):
        rows = langs == lang
        gate_scores[rows] = out_of_fold(network, queries[rows], gate_folds[rows])
    return keep, category, gate, keep_scores, gate_scores, {**report, "own_gates": sorted(own)}
