"""Written training pairs for the re-ranker (issue 35, rank13): what people ask an assistant about themselves.

The persona-mined pairs (``rerank_pairs.py``) are small talk between strangers ("what do you do for fun?");
the questions an assistant gets are about one's own relatives, dates, money, health and plans, asked in
other words than the memory ("Am I ok to take amoxicillin?" of "I'm allergic to penicillin."), yes/no,
"how much now" after a change, in casual registers. ``rerank_written.json`` holds imaginary people written
for this purpose — each a list of 17–24 memories across topics and questions pointing at the memory that
answers them — so the candidates of a question are that person's other memories: the same topic, the same
words, the older value (hard negatives, as in ``bench.everyday --mode ask``). No sentence is taken from an
evaluation set, and the trainer drops any question that is one (``DATA_CARD_RERANK.md``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from memory.retrieval.rerank_pairs import Pair

WRITTEN_FILE = Path(__file__).with_name("rerank_written.json")
SOURCE_PREFIX = "written-"


def written_pairs(path: Path = WRITTEN_FILE, excluded: Collection[str] = ()) -> list[Pair]:
    """One ``Pair`` per written question: the answering memory, the same person's other memories as the
    negatives, ``source`` ``written-en``/``written-zh``, ``persona_key`` the person (the validation split)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    pairs: list[Pair] = []
    for person in data["people"]:
        memories = list(person["memories"])
        for question, index in person["asks"]:
            if question in excluded:
                continue
            negatives = tuple(m for i, m in enumerate(memories) if i != index)
            pairs.append(
                Pair(
                    question=question,
                    line=memories[index],
                    negatives=negatives,
                    lang=person["lang"],
                    source=f"{SOURCE_PREFIX}{person['lang']}",
                    persona_key=person["id"],
                )
            )
    return pairs


def is_written(pair: Pair) -> bool:
    """Whether a pair comes from the written file (its candidates are its person's memories, no filler)."""
    return pair.source.startswith(SOURCE_PREFIX)
