"""The generic retrieval-benchmark format shared by converters and benchmarks.

One JSON file::

    {"name": str,
     "owners": [{"owner": str,
                 "memories": [{"id", "content", "created_at", "category"?, "project"?, "topic"?,
                               "importance"?}],
                 "queries": [{"id", "text", "relevant": [memory ids], "kind", "at"?}]}]}

Extra top-level keys (for example ``dropped_no_evidence``) are allowed, so converters can record what they
left out. Validation is strict and names the owner/memory/query and field at fault, because a silently
malformed benchmark file gives silently wrong recall numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"
OPTIONAL_MEMORY_TEXT_FIELDS = ("category", "project", "topic")


def format_timestamp(moment: datetime) -> str:
    """Render a datetime the one way the format accepts (ISO, seconds, no zone)."""
    return moment.strftime(TIMESTAMP_FORMAT)


def _fail(where: str, message: str) -> NoReturn:
    """Raise the single error type callers catch, always prefixed with the location."""
    raise ValueError(f"{where}: {message}")


def _require_str(obj: dict[str, Any], field: str, where: str, *, non_empty: bool = True) -> str:
    """Return ``obj[field]`` if it is a (non-empty) string, else fail naming the field."""
    if field not in obj:
        _fail(where, f"missing field {field!r}")
    value = obj[field]
    if not isinstance(value, str):
        _fail(where, f"field {field!r} must be a string, got {type(value).__name__}")
    if non_empty and not value.strip():
        _fail(where, f"field {field!r} is empty")
    return value


def _require_timestamp(obj: dict[str, Any], field: str, where: str) -> None:
    """Check the exact timestamp shape; engines compare these as strings, so no variants allowed."""
    value = _require_str(obj, field, where)
    try:
        datetime.strptime(value, TIMESTAMP_FORMAT)
    except ValueError:
        _fail(where, f"field {field!r} is {value!r}, expected YYYY-MM-DDTHH:MM:SS")


def _require_list(obj: dict[str, Any], field: str, where: str) -> list[Any]:
    """Return ``obj[field]`` if it is a list, else fail naming the field."""
    if field not in obj:
        _fail(where, f"missing field {field!r}")
    value = obj[field]
    if not isinstance(value, list):
        _fail(where, f"field {field!r} must be a list, got {type(value).__name__}")
    return value


def _require_dict(value: Any, where: str) -> dict[str, Any]:
    """Fail unless ``value`` is a JSON object."""
    if not isinstance(value, dict):
        _fail(where, f"must be an object, got {type(value).__name__}")
    return value


def _validate_memory(raw: Any, where: str) -> str:
    """Validate one memory and return its id."""
    memory = _require_dict(raw, where)
    memory_id = _require_str(memory, "id", where)
    where = f"{where} (id {memory_id!r})"
    _require_str(memory, "content", where)
    _require_timestamp(memory, "created_at", where)
    for field in OPTIONAL_MEMORY_TEXT_FIELDS:
        if field in memory:
            _require_str(memory, field, where)
    if "importance" in memory:
        importance = memory["importance"]
        if (
            isinstance(importance, bool)
            or not isinstance(importance, int | float)
            or not math.isfinite(importance)
        ):
            _fail(where, f"field 'importance' must be a finite number, got {importance!r}")
    return memory_id


def _validate_query(raw: Any, where: str, memory_ids: set[str]) -> str:
    """Validate one query against its owner's memory ids and return its id."""
    query = _require_dict(raw, where)
    query_id = _require_str(query, "id", where)
    where = f"{where} (id {query_id!r})"
    _require_str(query, "text", where)
    _require_str(query, "kind", where)
    relevant = _require_list(query, "relevant", where)
    if not relevant:
        _fail(where, "field 'relevant' is empty (recall is undefined without a relevant memory)")
    for memory_id in relevant:
        if not isinstance(memory_id, str):
            _fail(where, f"field 'relevant' holds {memory_id!r}, expected memory id strings")
        if memory_id not in memory_ids:
            _fail(where, f"field 'relevant' names {memory_id!r}, which is not a memory of this owner")
    if "at" in query:
        _require_timestamp(query, "at", where)
    return query_id


def _validate_owner(raw: Any, where: str) -> str:
    """Validate one owner block (unique memory and query ids) and return the owner name."""
    block = _require_dict(raw, where)
    owner = _require_str(block, "owner", where)
    where = f"owner {owner!r}"
    memory_ids: set[str] = set()
    for index, memory in enumerate(_require_list(block, "memories", where)):
        memory_id = _validate_memory(memory, f"{where} memory #{index}")
        if memory_id in memory_ids:
            _fail(f"{where} memory #{index}", f"duplicate memory id {memory_id!r}")
        memory_ids.add(memory_id)
    query_ids: set[str] = set()
    for index, query in enumerate(_require_list(block, "queries", where)):
        query_id = _validate_query(query, f"{where} query #{index}", memory_ids)
        if query_id in query_ids:
            _fail(f"{where} query #{index}", f"duplicate query id {query_id!r}")
        query_ids.add(query_id)
    return owner


def validate_dataset(data: Any) -> dict[str, Any]:
    """Check ``data`` against the format and return it unchanged; raise ValueError on the first problem."""
    dataset = _require_dict(data, "dataset")
    _require_str(dataset, "name", "dataset")
    owners: set[str] = set()
    for index, block in enumerate(_require_list(dataset, "owners", "dataset")):
        owner = _validate_owner(block, f"dataset owner #{index}")
        if owner in owners:
            _fail(f"dataset owner #{index}", f"duplicate owner {owner!r}")
        owners.add(owner)
    return dataset


def load_dataset(path: str | Path) -> dict[str, Any]:
    """Read and validate a dataset file, so benchmarks never score against a malformed one."""
    with Path(path).open(encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    return validate_dataset(data)


def write_dataset(path: str | Path, data: dict[str, Any]) -> None:
    """Validate, then write readable UTF-8 JSON (parent dirs created), so a converter bug fails early."""
    validate_dataset(data)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read JSON lines (blank lines skipped); the line number is named when one is not an object."""
    rows: list[dict[str, Any]] = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON: {exc}") from exc
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            rows.append(row)
    return rows


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write one JSON object per line, UTF-8 without escaping, parent dirs created."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
