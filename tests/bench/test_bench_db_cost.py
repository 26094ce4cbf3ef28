"""``bench.db_cost``: what a message costs the PostgreSQL server, from the server's own counters around
real messages through the gateway (bench/db_cost.py)."""

from __future__ import annotations

import json

import psycopg
import pytest

from bench.db_cost import Snapshot, main, per_message
from localservers import postgres_cluster as throwaway_pg


def _snapshot(calls: dict[str, int], inserted: int, cpu: float) -> Snapshot:
    database = {
        "xact_commit": inserted,
        "xact_rollback": 0,
        "tup_inserted": inserted,
        "tup_updated": 0,
        "tup_deleted": 0,
        "tup_fetched": 0,
        "tup_returned": 0,
    }
    return Snapshot(database, {q: (c, c, 0.1 * c) for q, c in calls.items()}, 1000, 10, cpu)


def test_per_message_counts_only_what_ran_in_the_window() -> None:
    before = _snapshot({"SELECT 1": 5, "INSERT INTO t VALUES ($1)": 2}, inserted=2, cpu=1.0)
    after = _snapshot(
        {"SELECT 1": 9, "INSERT INTO t VALUES ($1)": 10, "UPDATE t SET a = $1": 2}, inserted=10, cpu=1.02
    )
    result = per_message(before, after, messages=2, top=2)
    assert result["statements_per_msg"] == 7.0  # (4 + 8 + 2) / 2
    assert result["statement_kinds"] == {"INSERT": 4.0, "SELECT": 2.0, "UPDATE": 1.0}
    assert [s["query"] for s in result["top_statements"]] == ["INSERT INTO t VALUES ($1)", "SELECT 1"]
    assert result["rows_written_per_msg"] == 4.0
    assert result["server_cpu_ms_per_msg"] == pytest.approx(10.0)
    assert result["msgs_per_s_per_core"] == pytest.approx(100.0)


def test_a_chat_lock_sent_with_its_statement_is_no_round_trip_of_its_own() -> None:
    lock, claim = "SELECT pg_advisory_xact_lock($1, hashtext($2))", "UPDATE inbox SET claimed_by = $1"
    before = _snapshot({lock: 0, claim: 0}, inserted=0, cpu=1.0)
    after = _snapshot({lock: 4, claim: 4, "SELECT 1": 2}, inserted=0, cpu=1.0)
    result = per_message(before, after, messages=2, top=3)
    assert result["statements_per_msg"] == 5.0 and result["round_trips_per_msg"] == 3.0


def test_db_cost_measures_real_messages_and_drops_its_database(
    postgres_cluster: throwaway_pg.Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(postgres_cluster.url) as conn:
        before = {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}
    argv = ["--database", postgres_cluster.url, "--chats", "2", "--messages", "3", "--memories", "10"]
    assert main([*argv, "--warmup", "5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["store"] == "postgresql" and result["messages"] == 6
    assert result["warmup_messages"] == 5  # in warm0…warm3, before the window
    # Every message stores its inbox row and two conversation turns (the extraction buffer too: the owner's
    # turns past its watermark; and the chat's session: the turns carry its number).
    assert result["rows_inserted_per_msg"] >= 3
    assert result["transactions_per_msg"] >= 1
    # Read from /proc in 10 ms clock ticks per backend: six messages' few ms each may add no tick at all;
    # the scheduler's nanoseconds (/proc/<pid>/schedstat) are exact: the backends ran, so more than 0.
    assert result["server_cpu_ms_per_msg"] is not None and result["server_cpu_ms_per_msg"] >= 0
    assert result["server_cpu_exact_ms_per_msg"] > 0 and result["backend_cpu_exact_ms_per_msg"] > 0
    assert result["server_cpu_exact_ms_by_process"]["backend"] == result["backend_cpu_exact_ms_per_msg"]
    # The test server does not preload pg_stat_statements: the statement keys say so instead of guessing.
    assert result["pg_stat_statements"] is False and result["statements_per_msg"] is None
    assert any("shared_preload_libraries" in note for note in result["notes"])
    with psycopg.connect(postgres_cluster.url) as conn:
        assert {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()} == before


def test_db_cost_refuses_to_run_without_a_server() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--chats", "1"])
    assert exit_info.value.code == 2


def test_each_busy_statement_says_how_often_it_was_planned_in_the_window() -> None:
    query = "SELECT 1"
    before = _snapshot({query: 4}, inserted=0, cpu=1.0)
    after = _snapshot({query: 14}, inserted=0, cpu=1.0)
    before.plans, after.plans = {query: (3, 0.6)}, {query: (5, 1.0)}  # 2 plans in 10 runs, 0.4 ms
    [busiest] = per_message(before, after, messages=2, top=1)["top_statements"]
    assert busiest["plans_per_call"] == pytest.approx(0.2)
    assert busiest["plan_ms_per_call"] == pytest.approx(0.04)


def test_the_reply_path_is_counted_apart_from_background_work() -> None:
    lock = "SELECT pg_advisory_xact_lock($1, hashtext($2))"
    intake = (
        "WITH lk AS (SELECT NOT EXISTS (SELECT next_id FROM tierclaw_chat_next($1, $2, $3)) AS idle), "
        "stored AS (INSERT INTO inbox (channel) SELECT $4 FROM lk) SELECT 1"
    )
    answered = "WITH done AS (UPDATE inbox SET answered_at = $1 WHERE id = $2 RETURNING id) SELECT 1"
    candidates = "SELECT m.id FROM memories m CROSS JOIN LATERAL (SELECT $1) x WHERE m.owner = $2"
    touch = "UPDATE memories SET last_accessed = $1 WHERE id IN ($2, $3)"
    sweep = "SELECT h.channel, h.chat_id, h.holder FROM chat_holds h WHERE h.channel IN ($1)"
    ran = {lock: 0, intake: 0, answered: 0, candidates: 0, touch: 0, sweep: 0}
    before = _snapshot(ran, inserted=0, cpu=1.0)
    after = _snapshot(
        {lock: 2, intake: 4, answered: 4, candidates: 6, touch: 1, sweep: 3}, inserted=0, cpu=1.0
    )
    before.next_xid, after.next_xid = 100, 109
    result = per_message(before, after, messages=4, top=3)
    assert result["reply_path_statements_per_msg"] == 4.0  # (2 + 4 + 4 + 6) / 4
    assert result["reply_path_round_trips_per_msg"] == 3.5  # a chat lock goes with its statement
    assert result["reply_path_commits_per_msg"] == 2.0  # the intake and the answered step write
    assert result["background_statements_per_msg"] == 1.0  # the access mark and the sweeps
    assert result["write_transactions_per_msg"] == 2.25  # transaction ids assigned, either side
    assert result["statements_by_family"] == {
        "retrieval": 1.5,
        "intake": 1.0,
        "answered step": 1.0,
        "background": 1.0,
        "chat lock": 0.5,
    }
    # ``_snapshot``'s statements ran 0.1 ms a call: the reply path's time apart from background work's
    assert result["reply_path_statement_ms_per_msg"] == pytest.approx(0.4)
    assert result["background_statement_ms_per_msg"] == pytest.approx(0.1)
