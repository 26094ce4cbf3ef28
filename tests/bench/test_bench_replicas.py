"""bench/replicas.py: the smallest smoke case (one gateway process on SQLite behind the round-robin
forwarder, updates posted by the local Telegram server's webhook side) and the --database checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.replicas import main

RUN_KEYS = {
    "mode",
    "replicas",
    "messages",
    "answered",
    "lost",
    "answered_twice",
    "order_violations",
    "duplicate_memories",
    "memories",
    "job_runs_duplicated",
    "takeover_s",
    "in_flight_at_kill",
}


def test_one_replica_on_sqlite_answers_every_message_once_in_order_in_every_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--database", "sqlite", "--replicas", "1", "--chats", "2", "--messages", "3", "--latency", "0"]
    argv += ["--workdir", str(tmp_path)]
    assert main([*argv, "--no-kill", "--idle", "60", "--jobs-every", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(report) >= {"runs", "throughput", "throughput_one", "cache_staleness"}
    assert [run["mode"] for run in report["runs"]] == [
        "webhook",
        "polling",
        "feishu",
        "stall",
        "skew",
        "race",
    ]
    for run in report["runs"]:
        assert set(run) >= RUN_KEYS
        assert run["replicas"] == 1 and run["messages"] == 6
        assert (run["answered"], run["lost"], run["answered_twice"], run["order_violations"]) == (6, 0, 0, 0)
        assert run["duplicate_memories"] == 0 and run["memories"] > 0  # the notes were extracted
        assert run["job_runs_duplicated"] == 0 and run["job_periods"] > 0  # jobs fired every second
        assert run["takeover_s"] is None and run["in_flight_at_kill"] is None  # nobody was killed
    assert report["throughput"] is None  # two replicas need PostgreSQL
    posts = json.loads((tmp_path / "feishu" / "feishu_posts.json").read_text(encoding="utf-8"))
    replies = [p for p in posts if p["kind"] == "reply"]  # kept for a double's diagnosis: each with its uuid
    assert len(replies) == 6 and len({p["target"] for p in replies}) == 6 and all(p["uuid"] for p in replies)
    assert isinstance(report["throughput_one"], float) and report["throughput_one"] > 0


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--database", "sqlite", "--replicas", "2"], "--database sqlite runs one replica only"),
        (["--database", "mysql://h/db"], "--database must be a postgresql://"),
    ],
)
def test_a_database_that_cannot_run_the_trial_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bench.replicas: " + says) and err.count("\n") == 1
