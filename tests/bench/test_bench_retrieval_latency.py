"""bench/retrieval_latency.py end to end at a tiny size: the --json contract, vector cache, arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.retrieval_latency import main

CONTRACT_KEYS = ("p50_ms", "p95_ms", "p99_ms", "inserts_per_s", "tool_search_p95_ms")
TINY = ["--memories", "120", "--queries", "12", "--json"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out.strip().splitlines()[-1]), out


def test_tiny_keyword_only_run_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    result, out = _run([*TINY, "--embedding", "none"], capsys)
    for key in CONTRACT_KEYS:
        assert isinstance(result[key], float) and result[key] > 0, key
    assert result["p99_ms"] >= result["p95_ms"] >= result["p50_ms"]
    assert result["memories"] == 120 and result["noise_memories"] == 30
    assert result["queries"] == 12 and result["distinct_queries"] == 12
    assert result["embedding"] == "none" and result["embedded"] == 0
    assert result["query_embed_p50_ms"] is None and result["query_embeds"] == 0
    assert result["rest_p50_ms"] == result["p50_ms"]  # nothing to subtract without query embeddings
    assert "should_retrieve + retrieve (FTS only)" in out


def test_tiny_local_run_times_query_embeddings_and_reuses_the_vector_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cache = tmp_path / "vectors.npz"
    first, out = _run([*TINY, "--embedding", "local", "--vector-cache", str(cache)], capsys)
    assert first["embedding"] == "local" and "(hybrid)" in out
    assert first["embedded"] == 150 and first["embed_per_s"] > 0 and cache.exists()  # 120 + 30 noise
    # Each query the gate lets through is embedded once (how many it lets through is bench.gate's measure).
    assert first["query_embeds"] == first["gate_fired"] > 0 and first["query_embed_failed"] == 0
    assert first["query_cache_hits"] == 0  # distinct texts: every timed query paid for its vector
    assert first["p50_ms"] >= first["rest_p50_ms"] > 0
    assert first["query_embed_p95_ms"] >= first["query_embed_p50_ms"] > 0

    again, out = _run([*TINY, "--embedding", "local", "--vector-cache", str(cache)], capsys)
    assert again["embedded"] == 0 and again["vector_cache_hits"] == 150 and again["embed_per_s"] is None
    for key in CONTRACT_KEYS:
        assert isinstance(again[key], float) and again[key] > 0, key


@pytest.mark.parametrize("argv", [["--memories", "0"], ["--memories", "10", "--queries", "0"]])
def test_non_positive_sizes_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "must be positive" in capsys.readouterr().err
