"""bench.first_person: LoCoMo questions and observations in the voice of the speaker they are about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.datasets import main
from bench.first_person import convert_locomo_first_person, to_first_person
from tests.bench.test_bench_datasets import locomo_sample

SPEAKERS = ("Caroline", "Melanie")


@pytest.mark.parametrize(
    ("third", "first"),
    [
        ("What did Caroline research?", "What did I research?"),
        ("What is Caroline's identity?", "What is my identity?"),
        ("What activities does Caroline partake in?", "What activities do I partake in?"),
        ("Is Caroline a member of the community?", "Am I a member of the community?"),
        ("What career path has Caroline decided to pursue?", "What career path have I decided to pursue?"),
        ("Does Caroline live close to a beach?", "Do I live close to a beach?"),
        ("What does Caroline do to keep herself busy?", "What do I do to keep myself busy?"),
        (
            "How often does Caroline go to the beach with her kids?",
            "How often do I go to the beach with my kids?",
        ),
        ("Who supports Caroline?", "Who supports me?"),
        ("Caroline likes hiking and her dog.", "I like hiking and my dog."),
        ("Caroline is planning to continue her education.", "I am planning to continue my education."),
        (
            "The support group has made Caroline feel accepted.",
            "The support group has made me feel accepted.",
        ),
        ("Caroline painted a lake which means a lot to her.", "I painted a lake which means a lot to me."),
    ],
)
def test_questions_and_facts_take_the_speakers_voice(third: str, first: str) -> None:
    assert to_first_person(third, "Caroline", SPEAKERS) == first


def test_her_stays_when_the_other_speaker_is_named_too() -> None:
    assert to_first_person("What did Caroline give Melanie for her birthday?", "Caroline", SPEAKERS) == (
        "What did I give Melanie for her birthday?"
    )


def test_one_owner_per_speaker_with_their_own_first_person_memories_and_questions(tmp_path: Path) -> None:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([locomo_sample()]), encoding="utf-8")
    data = convert_locomo_first_person(path)
    owners = {o["owner"]: o for o in data["owners"]}
    assert list(owners) == ["conv-x:Ann", "conv-x:Bob"]
    ann, bob = owners["conv-x:Ann"], owners["conv-x:Bob"]
    assert [m["content"] for m in ann["memories"]] == ["I like tea.", "I drink tea daily.", "I run."]
    assert [m["content"] for m in bob["memories"]] == [
        "I have a dog.",
        "I moved to Oslo.",
        "I like hiking and skiing.",
        "I paint.",
    ]
    assert [(q["text"], q["relevant"], q["kind"]) for q in ann["queries"]] == [
        ("What do I drink?", ["D1:3#0", "D1:3#1"], "single-hop"),
        ("What do I do?", ["D1:3#0", "D1:3#1", "D1:5#0"], "multi-hop"),
    ]
    # "Is Bob an ally?" has no evidence (not a recall question); the others are Bob's own.
    assert [(q["text"], q["relevant"]) for q in bob["queries"]] == [
        ("Do I ski?", ["D2:6#0"]),
        ("Do I paint?", ["D2:10#0"]),
    ]
    assert data["dropped_no_evidence"] == 0


def test_a_question_whose_evidence_is_the_other_speakers_is_dropped(tmp_path: Path) -> None:
    sample = locomo_sample()
    sample["qa"] = [{"question": "What does Ann know about Bob's dog?", "evidence": ["D1:4"], "category": 1}]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    data = convert_locomo_first_person(path)
    assert data["dropped_no_evidence"] == 1
    assert all(not o["queries"] for o in data["owners"])


def test_cli_first_person_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([locomo_sample()]), encoding="utf-8")
    out = tmp_path / "fp.json"
    assert main(["locomo", str(path), "--first-person", "-o", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["name"] == "locomo10-first-person" and len(data["owners"]) == 2
    assert "4 queries" in capsys.readouterr().err
