"""The category classifier's training (issue 35): self-training on the written labels, the data it alone
sees, and ``train --only category`` (round 11), which retrains it and keeps every other array of a head.

The keep and gate classifiers and the category classifier share ``corpus.build``'s examples; this module
adds what is for the category alone, so that changing it leaves the keep and gate data as they were:

* ``category_written.json``: sentences written by kind where the guide's identity/event boundary runs
  through the same words (who one is said in the past tense — where one grew up, what one studied, an
  age just reached, whom one has worked for how long — is identity; the same of someone else is event;
  arrangements of money, one's doctor or accountant, where things are kept, medication one is on, teams
  followed — config, said as "I'm …" or with a date), and ``corrections``: written labels that
  contradict the guide (``memory/text/category.py``: origin and schooling are identity), applied by text;
* round 12 (``category_written.json``'s ``temp`` and ``decision`` lists, more ``event``): the temp
  category had ~27 written rows a language and ~24 pseudo labels, and the model filed a state of now by
  its topic (a phone's battery as config next to "my phone is a Huawei", a waiting room as identity next
  to "I work at the hospital"); sentences by kind of what is true only now, and on its boundaries what
  happened this morning (event), what is booked for a later day (decision) and a routine with a weekday
  (config), DATA_CARD "Round 12";
* with ``CHAT8`` (off) the identity statements typed casually of round 8 (``written.json``'s
  ``statements_chat8_*``, DATA_CARD "Round 8"), which the shipped keep/gate data do not hold.

Round 11's diagnosis (DATA_CARD "Round 11, category"): the persona lines "I studied chemistry in college",
"i grew up on a farm" were pseudo-labelled event by the first model (past tense), and one written label
said so too, so the final model filed an origin or a degree told in the past tense as an event.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memory.head.corpus import Example, read_written, written
from memory.head.model import CATEGORIES, VERSION, Classifier
from memory.head.outputs import save_head

# The category's self-training: persona statements get the first model's label when it is at least this
# sure (None: no pseudo labels). Round 8 tried None: on the validation part's written labels 0.951 right
# (identity 0.938) against 0.941 (0.928) with 0.8, but on `bench/data/categories.json` 0.901 either way
# (identity 0.81 either way): not taken (DATA_CARD, "Round 8").
PSEUDO_SURE: float | None = 0.8
# Members of the category ensemble, each fitted alike from its own seed (the run's seed + i), their
# probabilities averaged, for the first model (the pseudo labels) and the final one. 1 until round 11.
MEMBERS = 5
# A classifier fitted on (vectors, labels, classes, row weights, seed): ``train.train_mlp`` with its shape.
Fit = Callable[[np.ndarray, np.ndarray, int, np.ndarray, int], Classifier]

CATEGORY_WRITTEN = Path(__file__).with_name("category_written.json")
# Round 47 (DATA_CARD "Round 47, category"): sentences on the boundaries the category network confused on the
# dev sets — facts about one's people and pets (event) filed as identity or config, one's own arrangements
# (config) against what happened (event), routines against plans — in several registers; source
# ``written-category-boundary-<lang>``; off unless ``BOUNDARIES`` (``train --category-boundaries``), so
# the commands of earlier heads rebuild them.
BOUNDARIES_WRITTEN = Path(__file__).with_name("category_boundaries_written.json")
BOUNDARIES = False
# Round 8's casual identity statements in the category's data too (round 11 tried it: with a single
# network English identity on categories.json 0.81 with them, 0.94 without; DATA_CARD "Round 11, category").
CHAT8 = False
CATEGORY_ONLY = ("written-category-", "written-chat8-")


def category_written() -> dict[str, Any]:
    """The sentences and corrections written for the category classifier (``category_written.json``)."""
    return read_written(CATEGORY_WRITTEN)


def corrected(examples: list[Example], corrections: dict[str, str]) -> list[Example]:
    """``examples`` with the category of every text in ``corrections`` replaced (labelled rows only)."""
    return [
        Example(e.text, e.lang, e.source, e.keep, corrections[e.text], e.asks)
        if e.category is not None and e.text in corrections
        else e
        for e in examples
    ]


def extra_examples(mine: dict[str, Any], chat8: bool | None = None) -> list[Example]:
    """The category-only statements (source ``written-category-<lang>``; ``written-chat8-<lang>`` for
    round 8's identity statements when ``chat8``; ``written-category-boundary-<lang>`` when
    ``BOUNDARIES``, round 47)."""
    out: list[Example] = []
    boundaries = read_written(BOUNDARIES_WRITTEN) if BOUNDARIES else {}
    for lang in ("en", "zh"):
        for source, rows in (
            (f"written-category-{lang}", mine),
            (f"written-category-boundary-{lang}", boundaries),
        ):
            for category, texts in rows.get(f"statements_{lang}", {}).items():
                out += [Example(t, lang, source, 1, category, "tell") for t in texts]
        if CHAT8 if chat8 is None else chat8:
            for category, texts in written().get(f"statements_chat8_{lang}", {}).items():
                out += [Example(t, lang, f"written-chat8-{lang}", 1, category, "tell") for t in texts]
    return out


def category_inputs(
    examples: list[Example],
    passages: np.ndarray,
    validation: np.ndarray,
    embed_passages: Callable[[list[str]], np.ndarray],
    banned: set[str] | frozenset[str] = frozenset(),
) -> tuple[list[Example], np.ndarray, np.ndarray]:
    """(examples, passage vectors, validation rows) for ``train.train_category``: the shared examples
    with the corrections applied, then the category-only statements (never validation rows: the
    validation figure stays the one of the written labels it always was), less any that is an item of an
    evaluation set (``banned``) or already a training text."""
    mine = category_written()
    have = {e.text for e in examples}
    extra = [e for e in extra_examples(mine) if e.text.strip() not in banned and e.text not in have]
    extra = list({e.text: e for e in extra}.values())
    rows = corrected(examples, mine.get("corrections", {})) + extra
    vectors = np.concatenate([passages, embed_passages([e.text for e in extra])]) if extra else passages
    return rows, vectors, np.concatenate([validation, np.zeros(len(extra), dtype=bool)])


def balanced(y: np.ndarray, classes: int) -> np.ndarray:
    """Row weights that give every class the same total."""
    counts = np.bincount(y, minlength=classes).astype(np.float64)
    return (1.0 / np.maximum(counts, 1))[y]


def ensemble(fit: Fit, x: np.ndarray, y: np.ndarray, classes: int, seed: int) -> Classifier:
    """``MEMBERS`` classifiers of balanced classes from seeds ``seed``, ``seed + 1``, … (one member: as
    before round 11, a single network)."""
    members = [fit(x, y, classes, balanced(y, classes), seed + i) for i in range(MEMBERS)]
    return members[0] if MEMBERS == 1 else Classifier.stack(members)


def train_category(
    examples: list[Example], passages: np.ndarray, validation: np.ndarray, fit: Fit, seed: int
) -> tuple[Classifier, dict[str, object]]:
    """(b) the category: written labels first, then persona statements labelled by that
    first model when it is sure (``PSEUDO_SURE``), then the final model on both (each an ensemble of
    ``MEMBERS``: a single network's labels moved with its seed and with any row added — round 11)."""
    k = len(CATEGORIES)
    labelled = np.array([e.category is not None for e in examples])
    statements = np.array([e.keep == 1 for e in examples])
    y = np.array([CATEGORIES.index(e.category) if e.category else -1 for e in examples])
    pseudo = np.zeros(len(examples), dtype=bool)
    if PSEUDO_SURE is not None:
        first = labelled & ~validation
        model = ensemble(fit, passages[first], y[first], k, seed)
        p = model.probabilities(passages)
        pseudo = statements & ~labelled & (p.max(axis=1) >= PSEUDO_SURE)
        y = np.where(pseudo, p.argmax(axis=1), y)
    use = (labelled | pseudo) & ~validation
    weights = ensemble(fit, passages[use], y[use], k, seed)
    check = labelled & validation
    return weights, {
        "pseudo_labelled": int(pseudo.sum()),
        "pseudo_labels": dict(Counter(CATEGORIES[i] for i in y[pseudo])),
        "validation_accuracy_written": float(
            (weights.probabilities(passages).argmax(axis=1)[check] == y[check]).mean()
        ),
        "members": MEMBERS,
        "category_only_rows": int(sum(e.source.startswith(CATEGORY_ONLY) for e in examples)),
    }


def only_category(
    base: str, out: str, inputs: tuple[list[Example], np.ndarray, np.ndarray], fit: Fit, seed: int
) -> dict[str, object]:
    """``train --only category``: the category network trained on ``inputs`` (``category_inputs``),
    written to ``out`` with every other array of the head file ``base`` as it is (the keep and gate
    networks, thresholds, combined score); ``meta`` keeps ``base``'s but for the version and the category's
    report. What the report says of the category."""
    weights, report = train_category(*inputs, fit, seed)
    with np.load(base) as data:
        arrays = {name: data[name] for name in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta["version"] = VERSION
    meta["report"] = {**meta.get("report", {}), "category": report}
    meta["category_sources"] = dict(Counter(e.source for e in inputs[0] if e.category is not None))
    arrays.update(weights.arrays("category"))
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    save_head(out, arrays)
    return report
