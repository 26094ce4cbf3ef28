"""bench/keep_screen.py on a tiny set with the local embedder: each head file is put the same messages, a
head whose Chinese cut no clause reaches keeps no Chinese tell while English is judged as by the shipped
head, and missing inputs exit non-zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.keep_screen import main
from memory.head.model import HEAD_FILE
from memory.head.outputs import read_arrays, save_head

SHIPPED = Path(__file__).parents[2] / "memory" / "head" / HEAD_FILE
TINY = {
    "name": "tiny",
    "pairs": [
        {"id": "e1", "lang": "en", "kind": "health", "tell": "I'm allergic to peanuts.", "ask": "Allergies?"},
        {"id": "e2", "lang": "en", "kind": "family", "tell": "My daughter Mia is six.", "ask": "Mia's age?"},
        {"id": "z1", "lang": "zh", "kind": "health", "tell": "我对芒果过敏。", "ask": "我对什么过敏？"},
        {"id": "z2", "lang": "zh", "kind": "family", "tell": "我女儿叫小雨，六岁。", "ask": "女儿几岁？"},
    ],
    "chitchat": [{"lang": "en", "text": "Good morning!"}, {"lang": "zh", "text": "哈哈哈"}],
}


def test_each_head_is_put_the_same_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY, ensure_ascii=False), encoding="utf-8")
    arrays = read_arrays(str(SHIPPED))
    arrays["combined"] = arrays["combined"].copy()
    arrays["combined"][1, 3] = 1e6  # the Chinese cut: nothing reaches it
    strict = tmp_path / "strict.npz"
    save_head(str(strict), arrays)
    assert main(["--head", str(SHIPPED), "--head", str(strict), "--data", str(data), "--json"]) == 0
    heads = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["heads"]
    shipped, other = heads[str(SHIPPED)], heads[str(strict)]
    assert shipped["tell"]["zh"] == [2, 2] and other["tell"]["zh"] == [0, 2]
    assert other["tell"]["en"] == shipped["tell"]["en"] and shipped["tell"]["en"][1] == 2
    assert shipped["chitchat"] == {"en": [0, 1], "zh": [0, 1]}


def test_missing_inputs_exit_non_zero(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as missing_head:
        main(["--head", str(tmp_path / "absent.npz"), "--data", str(tmp_path / "absent.json")])
    assert missing_head.value.code != 0
    with pytest.raises(SystemExit) as missing_data:
        main(["--head", str(SHIPPED), "--data", str(tmp_path / "absent.json")])
    assert missing_data.value.code != 0


def test_the_held_out_lines_need_the_shared_folder(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(SystemExit) as missing:
        main(["--head", str(SHIPPED), "--data", str(data), "--corpora", str(tmp_path / "no-shared")])
    assert missing.value.code != 0


def test_a_judged_corpus_line_also_counts_under_its_label() -> None:
    from bench.keep_screen import judged_group
    from memory.head.corpus import chitchat_split

    assert judged_group("tell", "I'm allergic to peanuts.") == []
    assert judged_group("lccc", "一句谁也没读过的话 zq93") == []
    data = Path(__file__).parents[2] / ".." / "shared" / "data"
    if not data.is_dir():
        pytest.skip("the shared data folder is not here")
    first = chitchat_split(data, "dailydialog", held_out=True)[0]
    assert judged_group("dailydialog", first) in (
        ["dailydialog/fact"],
        ["dailydialog/unsure"],
        ["dailydialog/no"],
    )
