"""``bench.cache_staleness``: B sees each of A's writes (the numbers themselves are the bench's to report),
on both stores, and the command line keeps its ``--json`` keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import cache_staleness
from tests.support.hash_embedder import HashEmbedder

KEYS = {"session_s", "projects_s", "vectors_s", "terms_s", "max_s", "interval_s", "rounds"}


@pytest.mark.both_stores
async def test_every_write_of_a_is_seen_by_b(tmp_path: Path, memory_url: str) -> None:
    result = await cache_staleness.measure_staleness(
        memory_url or str(tmp_path / "m.db"), rounds=1, embedder=HashEmbedder()
    )
    assert set(result) == KEYS
    assert all(result[k] is not None for k in KEYS)
    assert result["max_s"] == max(result[f"{k}_s"] for k in cache_staleness.KINDS)


def test_the_command_prints_its_json_keys(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_staleness, "_local_embedder", HashEmbedder)
    assert cache_staleness.main(["--rounds", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(result) == KEYS | {"store"} and result["store"] == "sqlite"
