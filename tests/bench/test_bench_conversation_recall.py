"""bench/conversation_recall.py end to end on a small hand-made set: the --json contract, what counts as
recalled and as injected, the chit-chat language, the sweep, missing files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.conversation_recall import main

CONTRACT_KEYS = (
    "recall",
    "n",
    "by_kind",
    "chitchat_injection_rate",
    "chitchat_n",
    "mean_injected_chars",
    "p95_ms",
)

DATA = {
    "name": "tiny",
    "owners": [
        {
            "owner": "alice",
            "memories": [
                {"id": "m1", "content": "I am allergic to peanuts", "created_at": "2026-01-05T10:00:00"},
                {"id": "m2", "content": "My sister Anna lives in Porto", "created_at": "2026-01-06T10:00:00"},
                {"id": "m3", "content": "I play the cello on Sundays", "created_at": "2026-01-07T10:00:00"},
            ],
            "queries": [
                {"id": "q1", "text": "What am I allergic to?", "relevant": ["m1"], "kind": "single-hop"},
                {
                    "id": "q2",
                    "text": "Where does my sister Anna live?",
                    "relevant": ["m2"],
                    "kind": "single-hop",
                },
                # The gate lets this one through, but nothing relevant is about cooking: a miss.
                {
                    "id": "q3",
                    "text": "What recipe did I cook for the party?",
                    "relevant": ["m3"],
                    "kind": "multi-hop",
                },
            ],
        },
        {
            "owner": "li",
            "memories": [{"id": "z1", "content": "我对花生过敏", "created_at": "2026-01-05T10:00:00"}],
            "queries": [{"id": "zq", "text": "我对什么过敏？", "relevant": ["z1"], "kind": "single-hop"}],
        },
    ],
}
CHITCHAT = [
    {"text": "Nice weather today, isn't it?", "lang": "en"},
    {"text": "How are you doing?", "lang": "en"},
    {"text": "Did you sleep well?", "lang": "en"},
    {"text": "今天天气不错", "lang": "zh"},
    {"text": "What am I allergic to?", "lang": "en", "needs_memory": True},  # a gate-set positive: skipped
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data.json"
    data.write_text(json.dumps(DATA), encoding="utf-8")
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in CHITCHAT), encoding="utf-8")
    return data, chat


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out.strip().splitlines()[-1]), out


def test_keyword_run_counts_recall_per_kind_and_chitchat_per_language(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, chat = files
    result, _ = _run(["--data", str(data), "--chitchat", str(chat), "--embedding", "none", "--json"], capsys)
    for key in CONTRACT_KEYS:
        assert key in result, key
    assert result["n"] == 4
    assert result["recall"] == 0.75  # the cooking question finds nothing relevant
    assert result["by_kind"] == {"multi-hop": {"recall": 0.0, "n": 1}, "single-hop": {"recall": 1.0, "n": 3}}
    # alice gets the three English lines, li the Chinese one; the gate-set positive is skipped
    assert result["chitchat_n"] == 4
    assert result["chitchat_injection_rate"] == 0.0 and result["mean_injected_chars"] == 0.0
    assert result["p95_ms"] > 0
    assert result["floor"]["keyword_match"] > 0  # the product's floor, not none


def test_per_owner_limits_the_chitchat_lines(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, chat = files
    result, _ = _run(
        ["--data", str(data), "--chitchat", str(chat), "--embedding", "none", "--per-owner", "1", "--json"],
        capsys,
    )
    assert result["chitchat_n"] == 2


def test_sweep_prints_the_floor_table(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    data, chat = files
    result, out = _run(
        ["--data", str(data), "--chitchat", str(chat), "--embedding", "none", "--sweep", "--json"], capsys
    )
    assert "match floor" in out and "chit-chat injection" in out
    assert result["floor"]["keyword_match"] == 0.0


def test_missing_data_exits_1_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--data", str(tmp_path / "nope.json"), "--chitchat", str(tmp_path / "c.jsonl")])
    assert stop.value.code == 1
    assert "not found" in capsys.readouterr().err


def test_per_question_writes_one_line_per_message_sent(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data, chat = files
    out = tmp_path / "each.jsonl"
    argv = ["--data", str(data), "--chitchat", str(chat), "--embedding", "none", "--json"]
    result, _ = _run([*argv, "--per-question", str(out)], capsys)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == result["n"] + result["chitchat_n"]
    by_id = {(r["owner"], r["id"]): r for r in rows}
    assert by_id[("o0", "q1")]["recalled"] is True and by_id[("o0", "q1")]["relevant"] == ["m1"]
    assert by_id[("o0", "q3")]["recalled"] is False and by_id[("o0", "q3")]["kind"] == "multi-hop"
    assert any("peanuts" in h["content"] for h in by_id[("o0", "q1")]["hits"])
    assert by_id[("o1", "zq")]["text"] == "我对什么过敏？"
    assert {r["id"] for r in rows if r["kind"] == "chitchat"} == {"chitchat-0", "chitchat-1", "chitchat-2"}
    assert all(r["recalled"] is None for r in rows if r["kind"] == "chitchat")
    assert sum(r["recalled"] for r in rows if r["kind"] != "chitchat") / result["n"] == result["recall"]
    # the summary is the same with or without the file
    again, _ = _run(argv, capsys)
    assert {k: again[k] for k in ("recall", "n", "by_kind")} == {
        k: result[k] for k in ("recall", "n", "by_kind")
    }
