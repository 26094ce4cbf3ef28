"""Tests for bench.datasets converters (format validation: test_dataset_format.py), on small synthetic inputs.

The inputs mimic the structure (and the known quirks) of the public files in ../shared/data without reading
them; one smoke test at the end uses the real data and is skipped when it is absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bench.dataset_format import load_dataset, read_jsonl, validate_dataset
from bench.datasets import (
    MissingInputError,
    clean_turn,
    convert_locomo,
    convert_madial,
    madial_query_text,
    main,
    parse_datetime,
    split_dia_ids,
)
from bench.gate_set import build_gate, dailydialog_negatives, lccc_negatives, normalise_dailydialog
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

PROJECT_ROOT = REPO
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


# ------------------------------------------------------------------------------------------ fixtures


def locomo_sample() -> dict[str, Any]:
    """One LoCoMo-shaped conversation with the quirks of the real file."""
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"}],
            "session_2_date_time": "12:09 am on 13 September, 2023",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "hey"}],
            # A dated session without turns, as in conv-26: must not move the question time.
            "session_3_date_time": "9:55 am on 22 October, 2024",
        },
        "observation": {
            "session_1_observation": {
                "Ann": [["Ann likes tea.", "D1:3"], ["Ann drinks tea daily.", "D1:3"], ["Ann runs.", "D1:5"]],
                "Bob": [["Bob has a dog.", "D1:4"]],
            },
            "session_2_observation": {
                "Bob": [
                    ["Bob moved to Oslo.", "D2:4"],
                    ["Bob likes hiking and skiing.", ["D2:6", "D2:8"]],
                    ["Bob paints.", "D2:10, D2:12"],
                ],
            },
        },
        "qa": [
            {"question": "What does Ann drink?", "answer": "tea", "evidence": ["D1:3; D2:4"], "category": 4},
            {"question": "What does Ann do?", "answer": "x", "evidence": ["D1:3 D1:5"], "category": 1},
            {"question": "Trick question?", "adversarial_answer": "x", "evidence": ["D1:4"], "category": 5},
            {"question": "Is Bob an ally?", "answer": "yes", "evidence": [], "category": 3},
            {"question": "Where is the cat?", "answer": "x", "evidence": ["D1:9"], "category": 2},
            {"question": "Does Bob ski?", "answer": "yes", "evidence": ["D:2:8", "D"], "category": 2},
            {"question": "Does Bob paint?", "answer": "yes", "evidence": ["D2:12"], "category": 4},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    """locomo10.json-shaped file with the one sample above."""
    path = tmp_path / "locomo" / "locomo10.json"
    path.parent.mkdir()
    path.write_text(json.dumps([locomo_sample()]), encoding="utf-8")
    return path


def _dialogue(*turns: str) -> list[str]:
    """A MADial dialogue list with its <BOD>/<EOD> markers and trailing newlines."""
    return ["<BOD>\n", *(turn + "\n" for turn in turns), "<EOD>\n"]


ZH_DIALOGUES = [
    {
        "dialogue": _dialogue(
            '<Bart>:"我要表演魔术！"',
            '<Assistant>:"太棒了！"',
            '<Bart>: "我有点紧张。"',
            '<Assistant>:"深呼吸。"',
            '<Bart>:"我想让它很特别！"',
            '<Assistant>:"你记得去年圣诞节晚会上你跳舞吗？"',
            '<Bart>:"记得！"',
            '<Assistant>:"再跳一次吧。"',
        ),
        "test-turn": [8, 6],
        "relevant-id": [1, 3, 2],
        "user-id": 1,
        "id": 0,
    },
    {
        "dialogue": _dialogue('<Lisa>:"我得了一等奖！"', '<Assistant>:"你记得科学展览吗？"'),
        "test-turn": [2],
        "relevant-id": [1],
        "user-id": 2,
        "id": 1,
    },
    {
        "dialogue": _dialogue('<Lisa>:"我今天很开心"', '<Assistant>:"你记得那次吗？"'),
        "test-turn": [2],
        "relevant-id": [2],
        "user-id": 2,
        "id": 2,
    },
]
EN_DIALOGUES = [
    {
        "dialogue": _dialogue(
            '<Bart>: "I will do a magic trick!"',
            '"That is great!"',
            '<Bart>: "I am a bit nervous."',
            '<Assistant>: "Remember your Christmas dance?"',
        ),
        "test-turn": [4],
        "relevant-id": [1],
        "user-id": 1,
    },
    {
        "dialogue": _dialogue(
            '<Lisa>: "Look at my kite!"', '<Assistant>: "Like the one you flew last spring?"'
        ),
        "test-turn": [2],
        "relevant-id": [9],
        "user-id": 2,
    },
]
ZH_MEMORIES = [
    {
        "1": {
            "time": "2023-12-25",
            "scene": "活动类",
            "emotion": "开心",
            "event": "Bart在圣诞节晚会上跳舞。",
            "user-id": 1,
            "id": "1",
        }
    },
    {
        "2": {
            "time": "2023-03-07",
            "scene": "活动类",
            "emotion": "开心",
            "event": "Lisa参加科学展览。",
            "user-id": 2,
            "id": "2",
        }
    },
    {
        "3": {
            "time": "2023-05-15",
            "scene": "喜好类",
            "emotion": "开心",
            "event": "Bart吃了冰淇淋。",
            "user-id": 1,
            "id": "3",
        }
    },
]
EN_MEMORIES = [
    {
        "1": {
            "time": "2023-12-25",
            "scene": "Activity",
            "emotion": "Happy",
            "event": "Bart danced at the party.",
        }
    },
    {
        "2": {
            "time": "2023-03-07",
            "scene": "Activity",
            "emotion": "Happy",
            "event": "Lisa went to a science fair.",
        }
    },
    {"9": {"time": "2023-05-15", "scene": "Activity", "emotion": "Happy", "event": "Lisa flew a kite."}},
]


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    """One JSON object per line, as the MADial files are."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def madial_dir(tmp_path: Path) -> Path:
    """A MADial-Bench folder with zh and en files."""
    folder = tmp_path / "madial"
    folder.mkdir()
    _write_lines(folder / "MADial-Bench-zh-memory.json", ZH_MEMORIES)
    _write_lines(folder / "MADial-Bench-zh-dialogue.json", ZH_DIALOGUES)
    _write_lines(folder / "MADial-Bench-en-memory.json", EN_MEMORIES)
    _write_lines(folder / "MADial-Bench-en-dialogue.json", EN_DIALOGUES)
    return folder


LCCC = {
    "train": [["你 好 ， 在 吗 ？", "在 的", "哈 哈"], ["哈 哈", "我 用 S E E D . 2 4 小 时"]],
    "valid": [["好 吧", " "]],
}
DAILYDIALOG = (
    "Hello , how are you ? __eou__ I ’ m fine , thanks . __eou__ Thank you . __eou__\n"
    "Thank you . __eou__  __eou__ It's $ 20 ( or so ) . __eou__\n"
)


@pytest.fixture
def data_root(tmp_path: Path, locomo_file: Path, madial_dir: Path) -> Path:
    """A complete synthetic ../shared/data tree."""
    chat = tmp_path / "chat"
    chat.mkdir()
    (chat / "lccc_toy_data.json").write_text(json.dumps(LCCC, ensure_ascii=False), encoding="utf-8")
    (chat / "dailydialog_dialogues_test.txt").write_text(DAILYDIALOG, encoding="utf-8")
    return tmp_path


# -------------------------------------------------------------------------------------------- LoCoMo


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], (["D1:3"], 0)),
        (["D1:3; D2:4"], (["D1:3", "D2:4"], 0)),
        (["D1:3 D1:5"], (["D1:3", "D1:5"], 0)),
        ("D26:14, D26:34", (["D26:14", "D26:34"], 0)),
        (["D:11:26", "D", "d01:03"], (["D11:26", "D1:3"], 1)),
        (["D1:3", "D1:3"], (["D1:3"], 0)),
        ([], ([], 0)),
    ],
)
def test_split_dia_ids_splits_and_normalises(raw: Any, expected: tuple[list[str], int]) -> None:
    assert split_dia_ids(raw) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 Jan, 2024", datetime(2024, 1, 1, 12, 30)),
        ("10:04  AM on 19 December 2023", datetime(2023, 12, 19, 10, 4)),
        ("May 8, 2023", datetime(2023, 5, 8)),
        ("2023-12-25", datetime(2023, 12, 25)),
    ],
)
def test_parse_datetime_accepts_locomo_and_iso(text: str, expected: datetime) -> None:
    assert parse_datetime(text) == expected


def test_parse_datetime_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="unrecognised date"):
        parse_datetime("sometime last spring")


def test_locomo_memories_have_unique_ids_and_session_dates(locomo_file: Path) -> None:
    data = convert_locomo(locomo_file)
    (owner,) = data["owners"]
    assert owner["owner"] == "conv-x"
    ids = [memory["id"] for memory in owner["memories"]]
    assert ids == ["D1:3#0", "D1:3#1", "D1:5#0", "D1:4#0", "D2:4#0", "D2:6#0", "D2:10#0"]
    dates = {memory["id"]: memory["created_at"] for memory in owner["memories"]}
    assert dates["D1:3#0"] == "2023-05-08T13:56:00"
    assert dates["D2:4#0"] == "2023-09-13T00:09:00"
    assert all("category" not in memory for memory in owner["memories"])


def test_locomo_queries_relevant_kinds_and_drops(locomo_file: Path) -> None:
    data = convert_locomo(locomo_file)
    queries = {query["text"]: query for query in data["owners"][0]["queries"]}
    assert queries["What does Ann drink?"]["relevant"] == ["D1:3#0", "D1:3#1", "D2:4#0"]
    assert queries["What does Ann drink?"]["kind"] == "single-hop"
    assert queries["What does Ann do?"]["relevant"] == ["D1:3#0", "D1:3#1", "D1:5#0"]
    assert queries["What does Ann do?"]["kind"] == "multi-hop"
    # "D:2:8" is normalised and matched against a multi-source observation; "D" is ignored.
    assert queries["Does Bob ski?"]["relevant"] == ["D2:6#0"]
    # Source ids given as one comma-separated string are split too.
    assert queries["Does Bob paint?"]["relevant"] == ["D2:10#0"]
    assert "Trick question?" not in queries  # category 5 left out, not counted as dropped
    # Empty evidence is not a recall question (skipped); evidence without any observation is dropped, counted.
    assert "Is Bob an ally?" not in queries
    assert "Where is the cat?" not in queries
    assert data["dropped_no_evidence"] == 1


def test_locomo_at_is_day_after_last_session_with_turns(locomo_file: Path) -> None:
    data = convert_locomo(locomo_file)
    assert {query["at"] for query in data["owners"][0]["queries"]} == {"2023-09-14T00:09:00"}


def test_locomo_output_is_valid_and_cli_reports(locomo_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out" / "locomo.json"
    assert main(["locomo", str(locomo_file), "-o", str(out)]) == 0
    data = load_dataset(out)
    assert data["dropped_no_evidence"] == 1
    err = capsys.readouterr().err
    assert "dropped 1 queries with no evidence observation" in err
    assert "1 owners, 7 memories, 4 queries" in err


# -------------------------------------------------------------------------------------------- MADial


def test_clean_turn_strips_prefix_and_quotes() -> None:
    assert clean_turn('<Bart>: "I am a bit nervous."\n') == "I am a bit nervous."
    assert clean_turn('<Lisa>:"不过最后你还是鼓足勇气！\n') == "不过最后你还是鼓足勇气！"


def test_madial_query_text_uses_user_turns_before_first_test_turn() -> None:
    dialogue = ZH_DIALOGUES[0]["dialogue"]
    assert dialogue[6].startswith("<Assistant>")  # the recall turn the index points at
    text = madial_query_text(dialogue, [8, 6])
    assert text == "我要表演魔术！\n我有点紧张。\n我想让它很特别！"


def test_madial_query_text_skips_assistant_turns_without_prefix() -> None:
    assert (
        madial_query_text(EN_DIALOGUES[0]["dialogue"], [4]) == "I will do a magic trick!\nI am a bit nervous."
    )


def test_convert_madial_zh(madial_dir: Path) -> None:
    data = convert_madial(madial_dir, "zh")
    assert data["name"] == "madial-zh"
    owners = {block["owner"]: block for block in data["owners"]}
    assert list(owners) == ["madial-user-1", "madial-user-2"]
    assert [memory["id"] for memory in owners["madial-user-1"]["memories"]] == ["1", "3"]
    assert owners["madial-user-1"]["memories"][0] == {
        "id": "1",
        "content": "Bart在圣诞节晚会上跳舞。",
        "created_at": "2023-12-25T00:00:00",
    }
    (query,) = owners["madial-user-1"]["queries"]
    # Relevant id 2 belongs to the other user and is filtered out.
    assert query == {
        "id": "d0",
        "text": "我要表演魔术！\n我有点紧张。\n我想让它很特别！",
        "relevant": ["1", "3"],
        "kind": "implicit",
    }
    # Dialogue 1 only names user 1's memory for user 2: dropped and counted.
    assert [q["id"] for q in owners["madial-user-2"]["queries"]] == ["d2"]
    assert data["dropped_no_evidence"] == 1
    validate_dataset(data)


def test_convert_madial_en_recovers_missing_user_ids(madial_dir: Path) -> None:
    data = convert_madial(madial_dir, "en")
    owners = {block["owner"]: [m["id"] for m in block["memories"]] for block in data["owners"]}
    # Ids 1 and 2 via the parallel zh file; id 9 (not in zh) via the user's name in the event.
    assert owners == {"madial-user-1": ["1"], "madial-user-2": ["2", "9"]}
    (query,) = data["owners"][0]["queries"]
    assert query["id"] == "d0" and "at" not in query


# ---------------------------------------------------------------------------------------------- gate


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Hello , how are you ? ", "Hello, how are you?"),
        ("I ’ m fine . It ' s ok !", "I’m fine. It's ok!"),
        ("You ‘ re welcome .", "You‘re welcome."),
        ("We don ' t know ; maybe ...", "We don't know; maybe..."),
        ("It costs $ 20 ( or 10 % less ) .", "It costs $20 (or 10% less)."),
        ('It says " as is " .', 'It says "as is".'),
        ("the students ’ books", "the students’ books"),
    ],
)
def test_normalise_dailydialog(raw: str, expected: str) -> None:
    assert normalise_dailydialog(raw) == expected


def test_lccc_and_dailydialog_negatives(data_root: Path) -> None:
    assert lccc_negatives(data_root / "chat" / "lccc_toy_data.json") == [
        "你好，在吗？",
        "在的",
        "哈哈",
        "哈哈",
        "我用SEED.24小时",
        "好吧",
    ]
    assert dailydialog_negatives(data_root / "chat" / "dailydialog_dialogues_test.txt") == [
        "Hello, how are you?",
        "I’m fine, thanks.",
        "Thank you.",
        "Thank you.",
        "It's $20 (or so).",
    ]


def test_build_gate_positives_negatives_and_dedup(data_root: Path) -> None:
    rows = build_gate(data_root)
    by_source: dict[str, list[str]] = {}
    for row in rows:
        assert list(row) == ["text", "needs_memory", "lang", "source"]
        by_source.setdefault(row["source"], []).append(row["text"])
        assert row["needs_memory"] is (row["source"] in {"locomo", "locomo-first-person", "madial-zh"})
        assert row["lang"] == (
            "en" if row["source"] in {"locomo", "locomo-first-person", "dailydialog"} else "zh"
        )
    # All category 1-4 questions, even those without evidence; category 5 left out.
    assert len(by_source["locomo"]) == 6 and "Trick question?" not in by_source["locomo"]
    # The same questions in the asker's voice, when they name a speaker ("What does Ann do?" -> "I").
    assert by_source["locomo-first-person"] == [
        "What do I drink?",
        "What do I do?",
        "Am I an ally?",
        "Do I ski?",
        "Do I paint?",
    ]
    assert by_source["madial-zh"] == ["我要表演魔术！\n我有点紧张。\n我想让它很特别！", "我今天很开心"]
    assert by_source["lccc"] == ["你好，在吗？", "在的", "哈哈", "我用SEED.24小时", "好吧"]
    assert by_source["dailydialog"] == [
        "Hello, how are you?",
        "I’m fine, thanks.",
        "Thank you.",
        "It's $20 (or so).",
    ]


def test_gate_cli_writes_utf8_jsonl(data_root: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "gate" / "gate.jsonl"
    assert main(["gate", str(data_root), "-o", str(out)]) == 0
    assert "你好，在吗？" in out.read_text(encoding="utf-8")
    assert len(read_jsonl(out)) == 22
    err = capsys.readouterr().err
    assert (
        "locomo=6" in err
        and "locomo-first-person=5" in err
        and "madial-zh=2" in err
        and "lccc=5" in err
        and "dailydialog=4" in err
    )


# ------------------------------------------------------------------------------------- missing input


@pytest.mark.parametrize(
    ("args", "missing"),
    [
        (["locomo", "{root}/nope/locomo10.json"], "nope/locomo10.json"),
        (["madial", "{root}/nope", "--lang", "zh"], "nope"),
        (["madial", "{root}/madial", "--lang", "en"], "MADial-Bench-en-memory.json"),
        (["gate", "{root}/nope"], "nope"),
        (["gate", "{root}"], "lccc_toy_data.json"),
    ],
)
def test_missing_input_exits_1_with_one_line(tmp_path: Path, args: list[str], missing: str) -> None:
    (tmp_path / "madial").mkdir()
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json").write_text("[]", encoding="utf-8")
    for lang in ("zh",):
        for kind in ("memory", "dialogue"):
            (tmp_path / "madial" / f"MADial-Bench-{lang}-{kind}.json").write_text("", encoding="utf-8")
    argv = [arg.format(root=tmp_path) for arg in args] + ["-o", str(tmp_path / "out.json")]
    result = subprocess.run(
        [sys.executable, "-m", "bench.datasets", *argv],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert missing in lines[0] and "../shared/data" in lines[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.json").exists()


def test_converter_functions_raise_missing_input(tmp_path: Path) -> None:
    with pytest.raises(MissingInputError, match=r"locomo10\.json"):
        convert_locomo(tmp_path / "locomo10.json")
    with pytest.raises(MissingInputError, match=r"MADial-Bench-zh-memory\.json"):
        convert_madial(tmp_path, "zh")


# ------------------------------------------------------------------------------------------ real data


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is absent")
def test_real_data_smoke() -> None:
    locomo = convert_locomo(SHARED_DATA / "locomo" / "locomo10.json")
    validate_dataset(locomo)
    assert len(locomo["owners"]) == 10
    assert 0 < locomo["dropped_no_evidence"] < 400
    madial = convert_madial(SHARED_DATA / "madial", "zh")
    validate_dataset(madial)
    assert sum(len(owner["queries"]) for owner in madial["owners"]) > 150
