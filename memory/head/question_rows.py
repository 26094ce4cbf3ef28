"""The head's gate rows as rows of the question classifier (issue 35, round 32).

Why: the question classifier (``asking.py``, round 12) was trained once, on the chat corpora, the persona
turns and ``question_written.json``. Every question the head's gate learned from later — own questions
said without 我/my and in regional registers (rounds 14, 18, 26, 27), questions about the world typed the
same way — was never shown to it, and on the dev sets about one Chinese ask in twenty is refused because
the classifier reads no question in it (``…了没``, ``X还是Y``, ``…伐``) while the gate reads it as about the
person's own life (96 of the 25 dev sets' 1,959; DATA_CARD "Round 32").

The rows are the gate's training rows as ``python -m memory.head.train`` builds them with the flags it is
given (``--head-flags``: the shipped head's round flags), labelled by their form
(``label``): an own question asks, whatever its ending, and so does any row that held a question mark; a
statement about one's life without a mark does not ask unless the rule reads a question in it (then it is
left out); any other row without a mark is left out. The chat corpora's rows are left to ``asking_training``
(it samples them itself). ``round_flags`` sets the row modules' switches for the rest of the process, as in
``train``: call this from a trainer's own process.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from memory.head.arguments import arguments, round_flags
from memory.head.corpus import Example
from memory.head.dialogues import ROUND2, ROUND10
from memory.head.gate_training import gate_rows, parse_table
from memory.head.train import training_examples
from memory.retrieval.gate import asks

# Sources ``asking_training`` reads itself (the chat corpora's training halves).
CORPUS_PREFIXES = ("dailydialog-", "lccc-")
# The source name a row is counted under: ``head-<its gate source>``.
PREFIX = "head-"


def label(example: Example, marked: bool) -> int | None:
    """1 asks, 0 does not, None left out (``marked``: the text held a question mark). Only a statement
    about one's life ("tell") is a clean "does not ask": an "other" row without a mark may be a question
    about the world written without one ("北京明天冷不冷"), a request or chatter, so it is left out."""
    if example.asks == "own" or marked:
        return 1
    return 0 if example.asks == "tell" and not asks(example.text) else None


def head_question_rows(
    root: Path, cache: Path | None, flags: str, marked: Callable[[str], bool]
) -> list[tuple[str, int, str, str]]:
    """(text, asks, language, source) of the gate rows ``train`` builds with ``flags`` (its round flags, as
    one string); ``marked(text)``: whether a text held a question mark. Evaluation items are refused by
    ``training_examples`` as for the head."""
    defaults: dict[str, object] = {"seed": 0, "l2": 0, "hidden": 0, "iterations": 0, "tell_false_rate": 0}
    args = arguments([*shlex.split(flags), "--data", str(root)], "head rows", defaults)
    round_flags(args)  # the rows' modules switched on as ``train`` would
    mining = ROUND10 if args.round10 else ROUND2
    world = (int(args.world), tuple(args.world_languages.split(",")))  # as ``train._prepare`` reads them
    examples, _, _ = training_examples(root, cache, bool(args.chat8), mining, world)
    used = gate_rows(examples, parse_table(args.gate_rows, int))
    rows = []
    for example, in_gate in zip(examples, used, strict=True):
        if not in_gate or example.source.startswith(CORPUS_PREFIXES):
            continue
        asked = label(example, marked(example.text))
        if asked is not None:
            rows.append((example.text, asked, example.lang, PREFIX + example.source))
    return rows
