"""``Head.verdict``: the gateway's two questions of a message's query vector (is memory worth looking
for, does it ask about the person's own life) from one pass of the gate network, the same answers as
``wants_memory`` and ``asks_own`` asked one by one (memory/head/verdict.py)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

from memory.head.model import HEAD_FILE, Head, load_head, read_head

TEXTS = ("where does my sister work these days", "我妹妹现在在哪里上班")


def _queries(count: int) -> np.ndarray:
    vectors = np.random.default_rng(38).standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _shifted(shift: float) -> Head:
    """The shipped head with its gate leaning toward "own" (shift > 0) or "other" (< 0), so that the
    random queries below land on both sides of each threshold."""
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        arrays = {name: np.array(data[name]) for name in data.files}
    for name in [n for n in arrays if n.startswith("gate") and n.endswith("_b2")]:
        arrays[name] = arrays[name] + np.array([shift, 0.0, -shift], dtype=np.float32)
    return read_head(arrays)


def test_one_pass_answers_both_questions_as_each_alone() -> None:
    answers: set[tuple[bool, bool]] = set()
    for head in (load_head(), _shifted(-6.0), _shifted(-2.0), _shifted(2.0), _shifted(6.0)):
        for query in _queries(40):
            for text in TEXTS:
                verdict = head.verdict(query, text)
                assert verdict == (head.wants_memory(query, text), head.asks_own(query, text))
                answers.add(verdict)
    assert (True, True) in answers and (False, False) in answers  # both sides of the thresholds


@dataclass(frozen=True, slots=True)
class _Counting(Head):
    """A head that counts its gate passes (a list, since the dataclass is frozen)."""

    passes: list[str] | None = None

    def gate(self, query: np.ndarray, lang: str | None = None) -> tuple[float, float]:
        assert self.passes is not None
        self.passes.append(lang or "")
        return Head.gate(self, query, lang)


def test_the_verdict_runs_the_gate_once_in_the_messages_language() -> None:
    shipped = load_head()
    passes: list[str] = []
    head = _Counting(
        shipped.keep_w,
        shipped.category_w,
        shipped.gate_w,
        shipped.thresholds,
        shipped.meta,
        shipped.combined,
        shipped.gate_by_language,
        shipped.grams_w,
        passes=passes,
    )
    query = _queries(1)[0]
    head.verdict(query, TEXTS[0])
    head.verdict(query, TEXTS[1])
    assert passes == ["en", "zh"]
