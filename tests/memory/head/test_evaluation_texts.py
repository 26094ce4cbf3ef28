"""What the trainers refuse as evaluation items (memory/head/corpus.py ``evaluation_texts``): MADial-Bench's
utterances and memories as a person typed them, not the files' raw JSON lines (which no training text can
equal, so banning those banned nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.head.corpus import evaluation_texts, madial_texts

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"


def test_a_madial_file_gives_its_turns_without_speaker_or_quotes_and_its_events(tmp_path: Path) -> None:
    # Written for this test in the benchmark's layout: one JSON object a line.
    turns = ["<BOD>\n", '<Kim>:"我下周要去面试了。"\n', "<Assistant>:“Good luck!”\n"]
    dialogue = {"dialogue": turns, "id": 1}
    memories = {"7": {"event": "Kim passed the driving test.", "emotion": "happy", "id": "7"}}
    path = tmp_path / "MADial-Bench-xx.json"
    path.write_text(json.dumps(dialogue, ensure_ascii=False) + "\n\n" + json.dumps(memories) + "\n", "utf-8")
    assert madial_texts(path) == ["我下周要去面试了。", "Good luck!", "Kim passed the driving test."]


@pytest.mark.skipif(not (DATA / "madial").is_dir(), reason="the shared data folder is not here")
def test_the_trainers_refuse_madial_utterances_not_its_raw_lines() -> None:
    path = DATA / "madial" / "MADial-Bench-zh-dialogue.json"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    said = madial_texts(path)[0]
    banned = evaluation_texts(DATA, REPO)
    assert said in banned and not said.startswith("<")
    assert first.strip() not in banned
