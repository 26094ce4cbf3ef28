"""bench/retrieval_misses.py end to end on a tiny set (keyword-only, SQLite): every question is either
shown first or given the step that lost it, and the counts add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.retrieval_misses import _counts, main

KINDS = {"order", "budget", "k", "floor", "not_candidate", "gate"}
TINY = {
    "name": "tiny",
    "pairs": [
        {
            "id": "e1",
            "lang": "en",
            "kind": "health",
            "tell": "I'm allergic to peanuts.",
            "ask": "Am I allergic to anything?",
        },
        {
            "id": "e2",
            "lang": "en",
            "kind": "pets",
            "tell": "My dog is called Biscuit.",
            "ask": "What's my dog's name?",
        },
        # nothing of the question is in the statement: keyword-only retrieval cannot find it
        {"id": "e3", "lang": "en", "kind": "work", "tell": "I work night shifts.", "ask": "When do I sleep?"},
        {"id": "z1", "lang": "zh", "kind": "health", "tell": "我对芒果过敏。", "ask": "我对什么过敏？"},
    ],
    "chitchat": [],
}


def test_each_question_is_first_or_has_the_step_that_lost_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY, ensure_ascii=False), encoding="utf-8")
    assert main(["--data", str(data), "--embedding", "none", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = {r["ask"]: r for r in result["rows"]}
    assert len(rows) == 4
    for row in rows.values():
        assert row["top1"] == ("why" not in row)
        assert "why" not in row or row["why"] in KINDS
    assert rows["Am I allergic to anything?"]["top1"]
    assert rows["When do I sleep?"].get("why") in {"not_candidate", "gate", "floor"}
    counts = result["counts"]
    assert counts["en"]["n"] == 3 and counts["zh"]["n"] == 1
    assert sum(v for k, v in counts["en"].items() if k in KINDS | {"top1"}) == 3


def test_order_misses_with_no_signal_for_the_answer_are_counted() -> None:
    rows = [
        {"kind": "en/people", "why": "order", "reranked": False, "no_signal": True},
        {"kind": "en/people", "why": "order", "reranked": True, "no_signal": False},
        {"kind": "en/people", "top1": True},
        {"kind": "zh/people", "why": "floor"},
    ]
    counts = _counts(rows)
    assert counts["en"]["order"] == 2 and counts["en"]["order_no_signal"] == 1
    assert counts["en"]["reranked_away"] == 1 and counts["zh"]["order_no_signal"] == 0


def test_chitchat_lines_that_got_memories_are_put_down_to_the_floor_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each person's chit-chat lines follow their questions; one that got a memory names the rule of the
    floor that admitted it (keyword-only: the match) and the gate's reading; a greeting gets none."""
    chat = [
        {"lang": "en", "text": "good morning!"},
        {"lang": "en", "text": "what do you think about peanuts?"},
        {"lang": "zh", "text": "芒果好吃吗？"},
    ]
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps({**TINY, "chitchat": chat}, ensure_ascii=False), encoding="utf-8")
    assert main(["--data", str(data), "--embedding", "none", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    counts = result["chitchat_counts"]
    assert counts["en"]["n"] == 2 and counts["zh"]["n"] == 1
    shown = {r["chitchat"]: r for r in result["chitchat_rows"]}
    assert "good morning!" not in shown
    assert shown["芒果好吃吗？"]["rule"] == "match" and shown["芒果好吃吗？"]["first"] == "我对芒果过敏。"
    assert counts["zh"]["shown"] == counts["zh"]["match"] == 1
    assert len(result["rows"]) == 4  # the questions alone
