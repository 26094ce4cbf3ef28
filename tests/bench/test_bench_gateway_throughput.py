"""bench/gateway_throughput.py end to end at a tiny size: the --json contract and argument checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench.gateway_throughput import main
from bench.throughput_data import write_config
from bench.throughput_embedding import STUB_EMBEDDING_DIM, Embedding
from bench.vector_cache import load_vector_cache, save_vector_cache
from gateway.config import load_config

CONTRACT_KEYS = ("msgs_per_s_on", "msgs_per_s_off", "ratio", "p95_memory_ms", "startup_s")
TINY = ["--chats", "2", "--messages", "3", "--json", "--memories", "20", "--startup-runs", "1"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out.strip().splitlines()[-1]), out


def test_tiny_run_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    result, out = _run([*TINY, "--embedding", "none"], capsys)
    for key in CONTRACT_KEYS:
        assert isinstance(result[key], float) and result[key] > 0, key
    assert result["ratio"] == pytest.approx(result["msgs_per_s_on"] / result["msgs_per_s_off"])
    assert result["messages"] == 6 and result["chats"] == 2
    # every message was buffered (user + assistant turn) and none was extracted inside the timed window
    assert result["buffered_turns"] >= 12
    assert "ratio on/off" in out and "startup s" in out
    assert result["embedding"] == "none" and result["p95_query_embed_ms"] is None
    assert result["preload_embed_s"] == 0.0 and result["query_embeds"] == 0
    # Linux: the CPU split by thread (the gateway's part of the process's)
    assert 0 < result["gateway_cpu_ms_per_msg_off"] <= result["cpu_ms_per_msg_off"]
    assert 0 < result["gateway_cpu_ms_per_msg_on"] <= result["cpu_ms_per_msg_on"]
    assert "gateway CPU ms/msg" in out
    # ... and by thread role (/proc's ticks: a tiny window can read 0 for a thread, so no lower bound)
    for mode in ("on", "off"):
        split = result[f"cpu_ms_per_msg_by_thread_{mode}"]
        assert set(split) == {"loop", "sqlite", "model", "other"} and min(split.values()) >= 0
    assert result["cpu_ms_per_msg_by_thread_on"]["model"] == result["embedder_cpu_ms_per_msg_on"] == 0


def test_tiny_local_run_embeds_the_preload_before_the_clock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cache = tmp_path / "vectors.npz"
    result, out = _run([*TINY, "--embedding", "local", "--vector-cache", str(cache)], capsys)
    for key in CONTRACT_KEYS:
        assert isinstance(result[key], float) and result[key] > 0, key
    assert result["embedding"] == "local" and result["embedding_model"].startswith("local:")
    assert result["preload_vectors_embedded"] == result["preload_texts"] > 0
    assert result["preload_embed_s"] > 0 and cache.exists()
    # nothing of the preload, the backfill or the warm-up ran inside the timed window ...
    assert result["passage_embeds_in_window"] == 0 and result["backfill_passes_in_window"] == 0
    # ... and every retrieving message embedded its query there (the LRU is off by default)
    assert result["query_embeds"] == result["gate_fired"] and result["query_embed_cache_hits"] == 0
    assert result["query_embed_failed"] == 0
    assert result["p95_query_embed_ms"] >= result["p50_query_embed_ms"] > 0
    assert "query embeddings in the timed window" in out
    # the model's threads worked in the window, and are not counted as the gateway's
    assert result["embedder_cpu_ms_per_msg_on"] > 0
    assert result["gateway_cpu_ms_per_msg_on"] == pytest.approx(
        result["cpu_ms_per_msg_on"] - result["embedder_cpu_ms_per_msg_on"]
    )
    # the vectors in the file are the preload's, for this model
    assert len(load_vector_cache(cache, result["embedding_model"])) == result["preload_texts"]


def test_openai_embedding_section_points_at_the_stub(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"
    config = load_config(write_config(tmp_path, url, memory=True, embedding=Embedding("openai")), env={})
    settings = config.memory.embedding
    assert settings.provider == "openai" and settings.base_url == url
    assert settings.dimensions == STUB_EMBEDDING_DIM and settings.model
    local = load_config(write_config(tmp_path, url, memory=True, embedding=Embedding("local")), env={})
    assert local.memory.embedding.provider == "local"


def test_vector_cache_round_trip_and_foreign_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v.npz"
    vectors = {"a" * 64: np.ones(4, dtype=np.float32), "b" * 64: np.zeros(4, dtype=np.float32)}
    save_vector_cache(path, "model-x", vectors)
    loaded = load_vector_cache(path, "model-x")
    assert sorted(loaded) == sorted(vectors) and np.array_equal(loaded["a" * 64], vectors["a" * 64])
    assert load_vector_cache(path, "model-y") == {}
    assert "model-x" in capsys.readouterr().err
    assert load_vector_cache(tmp_path / "absent.npz", "model-x") == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["--chats", "0"],
        ["--messages", "0"],
        ["--chats", "-3"],
        ["--messages", "x"],
        ["--rounds", "0"],
        ["--embedding", "bogus"],
        ["--embedding", "openai", "--embedding-base-url", "http://127.0.0.1:9/v1"],
    ],
)
def test_bad_arguments_exit_non_zero(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code not in (0, None)
    assert "error" in capsys.readouterr().err
