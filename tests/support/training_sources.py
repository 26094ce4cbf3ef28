"""Every source of ``memory.head.train.training_examples`` stubbed empty but the written gate rows of the
rounds a test turns on (rounds 26 and 27: ``zh_told``'s regional and fast rows, ``own_asked``'s how-to rows):
a test of one round's rows then sees only those, without ../shared/data."""

from __future__ import annotations

import pytest

from memory.head import train


def stub_other_sources(monkeypatch: pytest.MonkeyPatch, evaluation: set[str] | None = None) -> None:
    """Stub the corpora, dialogues, weak labels and the other rounds' rows; ``evaluation``: the screen's."""
    monkeypatch.setattr(train, "evaluation_texts", lambda root, repo: set(evaluation or ()))
    monkeypatch.setattr(train, "build", lambda root, chat8=False: [])
    monkeypatch.setattr(train, "dialogue_clauses", lambda root, mining: [])
    monkeypatch.setattr(train, "weak_labels", lambda clauses, embed, mining: ([], {}))
    monkeypatch.setattr(train, "round14_examples", lambda rows: [])
    monkeypatch.setattr(train, "dated_examples", lambda: [])
    monkeypatch.setattr(train, "passing_examples", lambda evaluation: [])
    monkeypatch.setattr(train, "chitchat_split", lambda root, name, held_out: [])
    monkeypatch.setattr(train, "own_asked_examples", lambda **_: [])
