"""bench/everyday.py end to end on a tiny set (keyword-only): the --json contract in both modes, what
counts as recalled, kept and acknowledged, the repo's data files, missing or bad data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.everyday import ACKNOWLEDGEMENT, DEFAULT_DATA, load_everyday, main

CONTRACT_KEYS = (
    "recall",
    "top1",
    "kept",
    "kept_fading",
    "false_acknowledged",
    "chitchat_injection",
    "chitchat_acknowledged",
    "by_lang",
    "by_kind",
    "n",
)

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
        {"id": "e2", "lang": "en", "kind": "work", "tell": "My boss is called Karen.", "ask": "My boss?"},
        {"id": "z1", "lang": "zh", "kind": "health", "tell": "我对芒果过敏。", "ask": "我对什么过敏？"},
        {"id": "z2", "lang": "zh", "kind": "work", "tell": "我的领导姓赵。", "ask": "我老板是谁？"},
    ],
    "chitchat": [{"lang": "en", "text": "Good morning!"}, {"lang": "zh", "text": "哈哈哈"}],
}


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, data_set: dict = TINY) -> dict:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(data_set, ensure_ascii=False), encoding="utf-8")
    assert main(["--data", str(data), "--mode", mode, "--embedding", "none", "--json"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_ask_mode_keys_and_recall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(tmp_path, capsys, "ask")
    assert set(CONTRACT_KEYS) <= set(result)
    assert result["n"] == 4 and set(result["by_lang"]) == {"en", "zh"}
    assert set(result["by_kind"]) == {"health", "work"}
    assert result["recall"] == 1.0  # each fact is asked in other words, and found
    assert result["kept"] is None and result["false_acknowledged"] is None
    assert result["chitchat_injection"] == 0.0


def test_tell_mode_keys_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(tmp_path, capsys, "tell")
    assert set(CONTRACT_KEYS) <= set(result)
    assert 0.0 <= result["kept"] <= 1.0
    assert isinstance(result["kept_fading"], int) and isinstance(result["false_acknowledged"], int)
    assert isinstance(result["chitchat_acknowledged"], int) and isinstance(result["kept_slow_decay"], int)
    assert result["recall"] <= result["kept"]  # a fact not kept cannot be recalled


@pytest.mark.parametrize("mode", ["ask", "tell"])
def test_pairs_that_name_their_forms_are_split_by_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    assert "by_tell_form" not in _run(tmp_path, capsys, mode)  # a set without forms: no split
    forms = [("plain:I", "direct"), ("passing", "yesno"), ("plain:I", "yesno"), ("answer", "direct")]
    pairs = [dict(pair, tell_form=t, ask_form=a) for pair, (t, a) in zip(TINY["pairs"], forms, strict=True)]
    result = _run(tmp_path, capsys, mode, dict(TINY, pairs=pairs))
    assert {k: v["n"] for k, v in result["by_tell_form"].items()} == {
        "en/plain:I": 1,
        "en/passing": 1,
        "zh/plain:I": 1,
        "zh/answer": 1,
    }
    assert {k: v["n"] for k, v in result["by_ask_form"].items()} == {
        "en/direct": 1,
        "en/yesno": 1,
        "zh/yesno": 1,
        "zh/direct": 1,
    }
    recalled = sum(v["recall"] * v["n"] for v in result["by_tell_form"].values())
    assert recalled == result["recall"] * result["n"]  # the split covers every pair once
    if mode == "tell":
        assert all(v["kept"] is not None for v in result["by_tell_form"].values())


def test_acknowledgements_old_and_new_wording_are_detected() -> None:
    for reply in (
        "[offline model] I don't recall anything about that yet. Noted.",
        "I'll remember: x",
        "已记下。",
        "记住了：x",
    ):
        assert ACKNOWLEDGEMENT.search(reply)
    assert not ACKNOWLEDGEMENT.search("[offline model] Here is what I remember that seems relevant:")


def test_the_repo_sets_have_the_sizes_the_issue_asks_for() -> None:
    for path, pairs, chat in (
        (DEFAULT_DATA, 150, 50),
        (DEFAULT_DATA.with_name("everyday_dev.json"), 60, 20),
        (DEFAULT_DATA.with_name("everyday_blind.json"), 60, 20),
    ):
        data = load_everyday(path)
        for lang in ("en", "zh"):
            assert sum(p["lang"] == lang for p in data["pairs"]) >= pairs
            assert sum(c["lang"] == lang for c in data["chitchat"]) >= chat


def test_missing_data_exits_non_zero(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(tmp_path / "absent.json"), "--embedding", "none"])
    assert exit_info.value.code != 0


def test_a_pair_without_its_question_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"pairs": [{"id": "x", "lang": "en", "kind": "k", "tell": "t"}]}), encoding="utf-8"
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(bad), "--embedding", "none"])
    assert exit_info.value.code == 2
