"""The composed statements about one's people and things the head is trained on (memory/head/people.py),
and the filter that leaves the chit-chat corpora's real self-statements out of training (train.py)."""

from __future__ import annotations

import numpy as np

from memory.head import people
from memory.head.corpus import Example
from memory.head.model import CATEGORIES
from memory.head.train import self_statements


def test_the_same_seed_gives_the_same_sentences_with_a_category() -> None:
    for lang in ("zh", "en"):
        first = people.statements(3, lang)
        assert first == people.statements(3, lang)
        assert len(first) > 100 and all(category in CATEGORIES for _, category in first)
        assert all("{" not in text and "}" not in text for text, _ in first)
        assert people.small_talk(lang=lang) == people.small_talk(lang=lang)


def test_every_slot_of_every_template_is_filled_from_its_word_list() -> None:
    chinese = {text for text, _ in people.statements(2, "zh")}
    assert sum(any(r in text for r in people.RELATIONS) for text in chinese) > len(chinese) / 4
    assert all(len(text) >= 3 for text in chinese)
    english = {text for text, _ in people.statements(2, "en")}
    assert all(text == text.strip() and "  " not in text for text in english)


def _rows(n: int, source: str, keep: int, lang: str = "en") -> list[Example]:
    return [Example(f"{source} {i}", lang, source, keep) for i in range(n)]


def test_a_chitchat_row_that_reads_like_a_statement_is_left_out_of_training() -> None:
    rng = np.random.default_rng(0)
    statements, chatter = _rows(60, "written", 1), _rows(60, "written", 0)
    lines = _rows(40, "dailydialog-train", 0)
    examples = statements + chatter + lines
    stated, chatted = rng.normal(1.0, 0.1, (1, 384)), rng.normal(-1.0, 0.1, (1, 384))
    # Half of the chit-chat lines are vectors of statements (a real self-statement), half of chatter.
    vectors = np.concatenate(
        [
            stated + rng.normal(0, 0.05, (60, 384)),
            chatted + rng.normal(0, 0.05, (60, 384)),
            stated + rng.normal(0, 0.05, (20, 384)),
            chatted + rng.normal(0, 0.05, (20, 384)),
        ]
    ).astype(np.float32)
    validation = np.zeros(len(examples), dtype=bool)
    validation[::5] = True
    validation[120:] = False
    chit = np.array([e.source.endswith("-train") for e in examples])
    noisy, report = self_statements(examples, vectors, validation, chit)
    # Scored in log-odds (round 6), a statement-like row reaches the median statement's score about half
    # the time (in probabilities every one scored 1.0, a tie); no chatter row and no statement row does.
    assert noisy[120:140].sum() >= 5 and not noisy[140:].any() and not noisy[:120].any()
    assert report["en"]["left_out"] == noisy[120:140].sum()  # type: ignore[index]
