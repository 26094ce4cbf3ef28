"""Gate rows of round 43 (issue 35): the persona dialogues' questions to the listener, asked back of oneself.

Why (DATA_CARD "Round 43"): the Chinese gate reads plain Chinese questions about one's own life as asking
about it far less often than its training rows promise (out of fold 0.925, while the shipped head reads
"我有宠物吗？"-shaped questions as own-life questions only about half the time). Every own-life row it has was
written for this project from templates (``prodrop.py``, ``zh_told.py``); the questions people really type
about a life are in XPersona's human-corrected Chinese dialogues, asked of the other speaker ("你有宠物吗？",
"你的孩子几岁？"). ``corpus.build`` already gives them to the gate as "other" (``persona-questions-zh``: a
question about the listener). Asked back of oneself they are the own-life question the gate misses: "你" as
the subject becomes "我" ("我有宠物吗？"), "你的" becomes "我的" or, for half of them, nothing ("孩子几岁？":
the pronoun-less own question of ``prodrop.py``, written by a person). The pairs across the two labels
differ in the person alone, so the gate learns the person, not the topic.

Left out: greetings and questions about the listener's mind or abilities, which asked back are not about a
life ("你好吗", "你呢", "你觉得…", "你知道…", "你想…", "你能/会…"), and questions naming "你" twice. Gate
rows only (``keep`` and ``category`` unknown), source ``gate-asked-back-zh``, so ``calibrate.trusted`` leaves
them out and the thresholds are still chosen on the rows a person labelled. Screened against the evaluation
texts (``passing.screened``). Deterministic; off unless ``ON`` (``train --asked-back``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from pathlib import Path

from memory.head.corpus import SEED, Example
from memory.head.dialogues import xpersona_pairs
from memory.head.passing import screened

SOURCE = "gate-asked-back-zh"
# Round 43's rows in a training run (``train.training_examples``); ``train --asked-back`` sets it.
ON = False
# The question is the dialogue turn's last clause, this long in characters.
SHORTEST, LONGEST = 5, 30
# Of the "你的" questions, the share asked without any pronoun ("孩子几岁？").
PRONOUNLESS_SHARE = 0.5
# And of every row, the share typed without its question mark.
UNMARKED_SHARE = 0.3

_LAST_CLAUSE = re.compile(r"(?<=[。！!，,；;])")
_NOT_A_LIFE = re.compile(
    r"你好|你呢|好吗|怎么样|在做什么|在干什么|干嘛|认识你|你觉得|你认为|你知道|你想|你能|你会|你听说|你是谁"
)


def listener_questions(root: Path) -> list[str]:
    """The last clause of each dialogue turn that asks the listener something ("…。你有宠物吗？")."""
    out: dict[str, None] = {}
    for _, first, second in xpersona_pairs(root, "zh"):  # the valid and test splits
        for text in (first, second):
            last = _LAST_CLAUSE.split(text.strip())[-1].replace(" ", "")
            if "你" in last and last.endswith(("？", "?")) and SHORTEST <= len(last) < LONGEST:
                out[last] = None
    return list(out)


def asked_back(question: str, rng: random.Random) -> str | None:
    """The question about oneself ("你有宠物吗？" → "我有宠物吗？", "你的孩子几岁？" → "我的孩子几岁？" or
    "孩子几岁？"), or None when asked back it is not about a life (a greeting, the listener's mind)."""
    if _NOT_A_LIFE.search(question) or question.count("你") != 1:
        return None
    if "你的" in question:
        mine = "" if rng.random() < PRONOUNLESS_SHARE else "我的"
        text = question.replace("你的", mine)
    elif question.startswith("你"):
        text = "我" + question[1:]
    else:
        return None
    return text.rstrip("？?") if rng.random() < UNMARKED_SHARE else text


def asked_back_examples(
    root: Path, evaluation: Iterable[str] | None = None, on: bool | None = None, seed: int = SEED
) -> list[Example]:
    """Round 43's own-life rows (none unless ``on``, default ``ON``), distinct, screened against
    ``evaluation``."""
    if not (ON if on is None else on):
        return []
    rng = random.Random(f"{seed}-{SOURCE}")
    texts = dict.fromkeys(t for q in listener_questions(root) if (t := asked_back(q, rng)) and len(t) > 2)
    rows = [Example(t, "zh", SOURCE, None, None, "own") for t in texts]
    return rows if evaluation is None else screened(rows, evaluation)
