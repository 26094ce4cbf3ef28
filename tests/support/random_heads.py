"""A head file of random networks and rows, for tests of the trainer's modes that rewrite part of a head file
(``--only gate-point``, ``--only grams``): what they must keep bit for bit needs arrays that differ."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.head.model import CATEGORIES, Classifier
from memory.head.outputs import write_head


def random_head(path: Path, seed: int = 7) -> None:
    """Write a head file of small random keep, category and gate ensembles (5 members, 16 → 8 units), random
    ``thresholds`` and ``combined`` rows, version "old" and a report ``{"gate": "kept"}``."""
    rng = np.random.default_rng(seed)

    def net(classes: int) -> Classifier:
        shapes = [(16,), (16,), (16, 8), (8,), (8, classes), (classes,)]
        members = [rng.normal(size=(5, *s)).astype(np.float32) for s in shapes]
        members[1] = (np.abs(members[1]) + 0.5).astype(np.float32)  # scale
        return Classifier(*members)

    models = {"keep": net(2), "category": net(len(CATEGORIES)), "gate": net(3)}
    rows = {"thresholds": rng.normal(size=(2, 4)), "combined": rng.normal(size=(2, 4))}
    write_head(str(path), models, rows, {"version": "old", "sources": {}, "report": {"gate": "kept"}})
