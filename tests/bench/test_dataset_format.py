"""bench.dataset_format: what a benchmark data file must hold (``load_dataset`` refuses the rest with a clear
message), and the JSON / JSONL round trips.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bench.dataset_format import load_dataset, read_jsonl, validate_dataset, write_dataset, write_jsonl

# ------------------------------------------------------------------------------------- dataset format


def valid_dataset() -> dict[str, Any]:
    """A minimal valid dataset to mutate in the validation tests."""
    return {
        "name": "t",
        "dropped_no_evidence": 0,
        "owners": [
            {
                "owner": "alice",
                "memories": [
                    {"id": "m1", "content": "Alice likes tea.", "created_at": "2023-05-08T13:56:00"},
                    {
                        "id": "m2",
                        "content": "Alice lives in Oslo.",
                        "created_at": "2023-05-09T00:00:00",
                        "topic": "home",
                        "importance": 0.7,
                    },
                ],
                "queries": [{"id": "q1", "text": "What does Alice drink?", "relevant": ["m1"], "kind": "x"}],
            }
        ],
    }


def _set(path: list[Any], value: Any) -> Any:
    """Mutation: set data[path...] = value."""

    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(path: list[Any]) -> Any:
    """Mutation: delete data[path...]."""

    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


MEMORY = ["owners", 0, "memories"]
QUERY = ["owners", 0, "queries", 0]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set([*QUERY, "relevant"], ["m1", "m9"]), r"owner 'alice' query #0 \(id 'q1'\).*'m9'.*not a memory"),
        (_set([*MEMORY, 1, "id"], "m1"), r"owner 'alice' memory #1: duplicate memory id 'm1'"),
        (_delete([*MEMORY, 0, "content"]), r"owner 'alice' memory #0 \(id 'm1'\): missing field 'content'"),
        (_set([*MEMORY, 0, "content"], "  "), r"memory #0 \(id 'm1'\): field 'content' is empty"),
        (_set([*MEMORY, 0, "created_at"], "2023-05-08"), r"memory #0 \(id 'm1'\): field 'created_at'"),
        (_set([*MEMORY, 1, "importance"], "high"), r"memory #1 \(id 'm2'\): field 'importance'"),
        (_set([*MEMORY, 1, "topic"], 3), r"memory #1 \(id 'm2'\): field 'topic' must be a string"),
        (_set([*QUERY, "relevant"], []), r"query #0 \(id 'q1'\): field 'relevant' is empty"),
        (_set([*QUERY, "at"], "yesterday"), r"query #0 \(id 'q1'\): field 'at'"),
        (_delete([*QUERY, "kind"]), r"query #0 \(id 'q1'\): missing field 'kind'"),
        (_delete(["owners", 0, "owner"]), r"dataset owner #0: missing field 'owner'"),
        (_delete(["name"]), r"dataset: missing field 'name'"),
    ],
)
def test_load_dataset_rejects_bad_input(tmp_path: Path, mutate: Any, message: str) -> None:
    data = copy.deepcopy(valid_dataset())
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_dataset(path)


def test_load_dataset_rejects_duplicate_owner_and_bad_json(tmp_path: Path) -> None:
    data = valid_dataset()
    data["owners"].append(copy.deepcopy(data["owners"][0]))
    with pytest.raises(ValueError, match="duplicate owner 'alice'"):
        validate_dataset(data)
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_dataset(path)


def test_write_then_load_dataset_round_trips_unicode(tmp_path: Path) -> None:
    data = valid_dataset()
    data["owners"][0]["memories"][0]["content"] = "爱丽丝喜欢茶。"
    path = tmp_path / "deep" / "ds.json"
    write_dataset(path, data)
    assert "爱丽丝喜欢茶" in path.read_text(encoding="utf-8")
    assert load_dataset(path) == data


def test_write_dataset_refuses_invalid_data(tmp_path: Path) -> None:
    data = valid_dataset()
    data["owners"][0]["queries"][0]["relevant"] = ["nope"]
    with pytest.raises(ValueError, match="not a memory"):
        write_dataset(tmp_path / "ds.json", data)
    assert not (tmp_path / "ds.json").exists()


def test_jsonl_round_trip(tmp_path: Path) -> None:
    rows = [{"text": "哈哈", "needs_memory": False}, {"text": "Hi", "needs_memory": True}]
    path = tmp_path / "sub" / "rows.jsonl"
    write_jsonl(path, rows)
    assert path.read_text(encoding="utf-8").splitlines()[0] == '{"text": "哈哈", "needs_memory": false}'
    assert read_jsonl(path) == rows
    path.write_text('{"a": 1}\n\n[1]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"rows.jsonl:3: expected a JSON object"):
        read_jsonl(path)
