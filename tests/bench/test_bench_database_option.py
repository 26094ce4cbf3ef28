"""``--database URL`` of the benches: the same run on PostgreSQL, in a scratch database that is dropped
afterwards, with ``store`` in the JSON (bench/database_option.py)."""

from __future__ import annotations

import json

import psycopg
import pytest

from bench.everyday import main as everyday_main
from bench.retrieval_latency import main as latency_main
from localservers import postgres_cluster as throwaway_pg


def _databases(cluster: throwaway_pg.Cluster) -> set[str]:
    with psycopg.connect(cluster.url) as conn:
        return {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}


def test_retrieval_latency_runs_on_postgres_and_leaves_no_database(
    postgres_cluster: throwaway_pg.Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _databases(postgres_cluster)
    argv = ["--memories", "60", "--queries", "6", "--json", "--embedding", "none"]
    assert latency_main([*argv, "--database", postgres_cluster.url]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["store"] == "postgresql" and result["memories"] == 60 and result["p95_ms"] > 0
    assert _databases(postgres_cluster) == before
    assert latency_main(argv) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["store"] == "sqlite"


def test_retrieval_latency_measures_a_copy_of_a_kept_load(
    postgres_cluster: throwaway_pg.Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _databases(postgres_cluster)
    argv = ["--memories", "40", "--json", "--embedding", "none", "--database", postgres_cluster.url]
    assert latency_main([*argv, "--keep-loaded", "rl_kept"]) == 0
    loaded = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert loaded["memories"] == 40 and loaded["inserts_per_s"] > 0
    assert _databases(postgres_cluster) == before | {"rl_kept"}
    assert latency_main([*argv, "--queries", "6", "--from-loaded", "rl_kept"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # Measured on the copy: nothing loaded again, the kept database untouched and the copy dropped.
    assert result["from_loaded"] == "rl_kept" and result["inserts_per_s"] == 0 and result["gate_fired"] == 6
    assert result["p50_ms"] > 0 and result["merged_on_write"] == 0
    assert _databases(postgres_cluster) == before | {"rl_kept"}
    with psycopg.connect(postgres_cluster.url, autocommit=True) as conn:
        conn.execute("DROP DATABASE rl_kept")
    with pytest.raises(SystemExit):
        latency_main(["--memories", "40", "--keep-loaded", "x"])  # needs --database
    assert "--database" in capsys.readouterr().err


def test_everyday_runs_on_postgres(
    postgres_cluster: throwaway_pg.Cluster, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "tiny.json"
    pair = {"id": "e1", "lang": "en", "kind": "work", "tell": "My boss is called Karen.", "ask": "My boss?"}
    data.write_text(json.dumps({"name": "tiny", "pairs": [pair], "chitchat": []}), encoding="utf-8")
    argv = ["--data", str(data), "--embedding", "none", "--json"]
    assert everyday_main([*argv, "--database", postgres_cluster.url]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["store"] == "postgresql" and result["recall"] == 1.0
