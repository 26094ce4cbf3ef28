"""The persona dialogues' weak labels (memory/head/dialogues.py): round 10's casual typing and whole turns."""

from __future__ import annotations

import numpy as np

from memory.head.dialogues import ROUND2, DialogueClause, Mining, turn_examples, weak_labels

PERSONA = ("i have two dogs.", "i work as a nurse.")
STRANGER = ("i love jazz.", "my car is red.")


def _clauses() -> list[DialogueClause]:
    said = [
        ("i just got back from walking my two dogs", "hi! i just got back from walking my two dogs", PERSONA),
        ("night shifts at the hospital again", "night shifts at the hospital again lol", PERSONA),
        ("that sounds fun", "that sounds fun. what else do you do?", PERSONA),
        ("wow", "wow", PERSONA),
        ("jazz is the best", "jazz is the best", STRANGER),
        ("red cars are fast", "red cars are fast", STRANGER),
        ("sounds good", "sounds good", STRANGER),
        ("nice", "nice", STRANGER),
    ]
    return [DialogueClause(text, "en", "dialogue-en-xpersona", persona, turn) for text, turn, persona in said]


def _embed(texts: list[str]) -> np.ndarray:
    """Toy unit vectors: a text about dogs or nursing near the first persona, jazz or cars the second."""
    out = []
    for text in texts:
        v = np.array([0.1, 0.1, 1.0])
        if any(w in text for w in ("dog", "nurse", "hospital")):
            v = np.array([1.0, 0.0, 0.0])
        elif any(w in text for w in ("jazz", "car")):
            v = np.array([0.0, 1.0, 0.0])
        out.append(v / np.linalg.norm(v))
    return np.array(out)


def test_the_round_2_mining_keeps_the_texts_as_said_and_adds_no_turn() -> None:
    examples, report = weak_labels(_clauses(), _embed, ROUND2)
    said = {c.text for c in _clauses()}
    assert examples and all(e.text in said for e in examples)
    assert not any(e.source.endswith(("-turns", "-turns-chat")) for e in examples)
    assert report["en"]["turns_telling"] == 0


def test_round_10_adds_whole_turns_for_the_gate_only_and_types_some_clauses_casually() -> None:
    mining = Mining(clauses_en=7000, positive_percentile_en=97.0, casual=True, turns=10)
    examples, _ = weak_labels(_clauses(), _embed, mining)
    turns = [e for e in examples if "-turns" in e.source]
    assert turns and all(e.keep is None for e in turns)
    telling = {e.text for e in turns if e.asks == "tell"}
    assert "hi! i just got back from walking my two dogs" in telling
    assert all(e.asks == "other" for e in turns if e.text not in telling)
    again, _ = weak_labels(_clauses(), _embed, mining)
    assert [e.text for e in again] == [e.text for e in examples]


def test_a_turn_with_a_clause_not_judged_chatter_is_not_a_chatter_turn() -> None:
    clauses = [
        DialogueClause("sounds fun", "en", "s", PERSONA, "sounds fun. i'm just hiking"),
        DialogueClause("nice", "en", "s", PERSONA, "nice"),
    ]
    out = turn_examples(clauses, [0, 1], [], [0, 1], per_label=5)
    assert [e.text for e in out] == ["nice"]
