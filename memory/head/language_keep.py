"""A keep network for some languages only (issue 35, round 29): ``python -m memory.head.language_keep BASE NEW
--languages zh --out OUT``.

Why (DATA_CARD "Round 29"): round 28 retrained the keep network with the written Chinese statement
rows (``train --only keep --keep-also …``, then ``--only grams``). Chinese kept more of its tells;
English kept fewer and the English held-out false keeps rose past the bar. The two languages' keep
verdicts are independent — a clause of one language is scored by the keep network, that language's row
of ``combined*`` and the keep and tell columns of ``thresholds`` (and, where ``combined_grams`` weighs
one, that language's ``grams_<lang>``) — so a head can take, for the languages named, NEW's keep network
(stored as ``keep_<lang>_*``, ``model.Head.keep_for``) with those rows, and keep for every other language
BASE's keep network and rows.

What: every array of OUT is BASE's but, for each language named: ``keep_<lang>_*`` (NEW's ``keep_*``);
its row of ``combined``, ``combined_spread``, ``combined_sentence`` and ``combined_grams``; columns 0 and
3 (keep, tell) of ``thresholds``; and ``grams_<lang>``. NEW must judge with BASE's gates (trained from
BASE's networks: the gate arrays and the gate and own thresholds equal), or its rows would not fit the
gate scores they are read with. The keep networks' first layers are stored as float16, as the gates' are
(``language_gate.py``), so the file stays within the issue's 2 MB; English keep log-odds move by ≤ 0.005.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence

import numpy as np

from memory.head.model import LANGUAGES, PARTS
from memory.head.outputs import KEEP_COLUMNS, read_arrays, save_head

# The arrays with one row per language that belong to the keep verdict.
ROWS = ("combined", "combined_spread", "combined_sentence", "combined_grams")


def _check(base: Mapping[str, np.ndarray], new: Mapping[str, np.ndarray], langs: Sequence[str]) -> None:
    """Refuse what would give a language rows that do not fit its gate, or a keep network twice."""
    if not langs or not set(langs) <= set(LANGUAGES):
        raise ValueError(f"languages {list(langs)} not among {LANGUAGES}")
    owned = sorted(lang for lang in langs if f"keep_{lang}_mean" in base)
    if owned:
        raise ValueError(f"the base head has a keep network of its own for {owned} already")
    gates = sorted(k for k in base if k.startswith("gate_"))
    if gates != sorted(k for k in new if k.startswith("gate_")):
        raise ValueError("the two heads' gate networks differ: train NEW from BASE's networks")
    differ = [k for k in gates if not np.array_equal(base[k], new[k])]
    gate_columns = [c for c in range(base["thresholds"].shape[1]) if c not in KEEP_COLUMNS]
    if differ or not np.array_equal(base["thresholds"][:, gate_columns], new["thresholds"][:, gate_columns]):
        where = differ or "thresholds"
        raise ValueError(f"the two heads' gates differ ({where}): train NEW from BASE's networks")


def own_keeps(
    base_path: str, new_path: str, langs: Sequence[str], out: str, version: str | None = None
) -> dict[str, object]:
    """Write ``out``: ``base_path``'s head with ``new_path``'s keep network and keep rows for ``langs`` only
    (the module's docstring says which arrays), as head ``version`` (default: the base's). Returns the report
    stored in its meta."""
    base, new = read_arrays(base_path), read_arrays(new_path)
    _check(base, new, langs)
    arrays = dict(base)
    for lang in langs:
        at = LANGUAGES.index(lang)
        for part in PARTS:
            arrays[f"keep_{lang}_{part}"] = new[f"keep_{part}"]
        for name in ROWS:
            if (name in base) != (name in new):
                raise ValueError(f"{name} is in one head file only")
            if name in base:
                rows = np.array(arrays[name], copy=True)
                rows[at] = new[name][at]
                arrays[name] = rows
        thresholds = np.array(arrays["thresholds"], copy=True)
        thresholds[at, list(KEEP_COLUMNS)] = new["thresholds"][at, list(KEEP_COLUMNS)]
        arrays["thresholds"] = thresholds
        arrays.pop(f"grams_{lang}", None)
        if f"grams_{lang}" in new:
            arrays[f"grams_{lang}"] = new[f"grams_{lang}"]
    for name in [k for k in arrays if k.startswith("keep_") and k.endswith("_w1")]:
        arrays[name] = np.asarray(arrays[name], dtype=np.float16)
    meta = json.loads(str(base["meta"]))
    fresh = json.loads(str(new["meta"]))
    report: dict[str, object] = {"languages": list(langs), "base": base_path, "keep_from": new_path}
    report["keep_from_version"] = fresh.get("version", "")
    meta["report"] = {**meta.get("report", {}), "keep_languages": report}
    meta["version"] = version or meta.get("version", "")
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    save_head(out, arrays)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the head whose gates, category and other languages' keep are kept")
    parser.add_argument("new", help="a head trained from BASE's networks (train --only keep, --only grams)")
    parser.add_argument("--languages", required=True, help="comma-separated, e.g. 'zh'")
    parser.add_argument("--version", default=None, help="the version written into OUT's meta")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        report = own_keeps(args.base, args.new, args.languages.split(","), args.out, args.version)
    except (ValueError, KeyError, OSError) as error:
        raise SystemExit(f"language_keep: {error}") from error
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
