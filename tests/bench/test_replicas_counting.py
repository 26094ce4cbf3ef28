"""bench/replicas: the pure parts — counting lost / answered twice / out of order from a recorded list of
answers, duplicated job runs and the poller from recorded logs, and the command line's checks."""

from __future__ import annotations

import argparse

import pytest

from bench.replicas.cli import database_problem, parse_args, run_failed, trial_list
from bench.replicas.counting import (
    Sent,
    answer_latencies,
    count,
    job_runs,
    job_runs_duplicated,
    lateness,
    order_causes,
    poller,
    spread,
)


def _sent(chats: dict[int, list[int]]) -> Sent:
    sent = Sent()
    for chat, messages in chats.items():
        for place, message in enumerate(messages):
            sent.add(message, chat, place)
    return sent


def test_a_recorded_run_counts_lost_twice_and_out_of_order() -> None:
    sent = _sent({0: [1, 2, 3], 1: [4, 5]})
    answers = [(0.1, 1), (0.2, 4), (0.3, 3), (0.4, 2), (0.5, 2), (0.6, 99)]  # 3 before 2; 2 twice; 5 never
    assert count(sent, answers) == {"answered": 4, "lost": 1, "answered_twice": 1, "order_violations": 1}


def test_a_second_answer_to_an_earlier_message_is_twice_not_out_of_order() -> None:
    sent = _sent({0: [1, 2]})
    answers = [(0.1, 1), (0.2, 2), (0.3, 1)]  # a replica that died re-answered 1 after 2 was answered
    assert count(sent, answers) == {"answered": 2, "lost": 0, "answered_twice": 1, "order_violations": 0}


T0, T2 = "2026-11-25T23:00:00+00:00", "2026-11-25T23:00:02+00:00"
GW = "INFO tierclaw.gateway: [gateway] job"
LOG_R0 = (
    f"[replica r0] {GW} extraction_sweep of {T0} ran here\n[replica r0] {GW} daily_compress of {T2} ran here"
)
LOG_R1 = (
    f"[replica r1] {GW} extraction_sweep of {T0}: claimed by another replica, skipped\n"
    f"[replica r1] {GW} daily_compress of {T2} ran here\n"
    "[replica r1] INFO tierclaw.channels: [telegram] another replica polls for this bot; standing by\n"
)


def test_the_database_tells_why_a_message_was_answered_out_of_order() -> None:
    t = "2026-01-01 00:00:{:06.3f}"
    timeline = [
        # chat a: 1 stored 1 s after 2, after 2 was answered — the window could not help
        ("telegram", "a", 1, t.format(5.0), t.format(8.0)),
        ("telegram", "a", 2, t.format(4.0), t.format(4.5)),
        # chat b: 3 stored 0.1 s after 4, inside the window, answered after it — an ordering bug
        ("telegram", "b", 3, t.format(4.1), t.format(6.0)),
        ("telegram", "b", 4, t.format(4.0), t.format(5.0)),
        ("telegram", "b", 5, t.format(4.0), None),
        # chat c: in order
        ("telegram", "c", 6, t.format(1.0), t.format(2.0)),
        ("telegram", "c", 7, t.format(1.0), t.format(3.0)),
    ]
    assert order_causes(timeline, 0.3) == {
        "answered_out_of_order_db": 2,
        "of_them_stored_past_window": 1,
        "of_them_stored_after_the_later_answer": 1,
    }


def test_how_late_each_delivery_stored_out_of_order_was() -> None:
    t = "2026-01-01 00:00:{:06.3f}"
    timeline = [
        ("telegram", "a", 1, t.format(5.0), None),  # stored 1 s after 2 (and 0.5 s after 3): 1 s
        ("telegram", "a", 2, t.format(4.0), None),
        ("telegram", "a", 3, t.format(4.5), None),
        ("telegram", "b", 4, t.format(1.0), None),  # in order
        ("telegram", "b", 5, t.format(1.25), None),
        ("telegram", "b", 6, t.format(1.0), None),  # 5 stored 0.25 s after 6
    ]
    assert sorted(lateness(timeline)) == pytest.approx([0.25, 1.0])
    assert spread([0.25, 0.5, 1.0]) == {"count": 3, "p50": 0.5, "p90": 1.0, "p99": 1.0, "max": 1.0}
    assert spread([]) == {"count": 0, "p50": None, "p90": None, "p99": None, "max": None}


def test_answer_latency_is_from_acceptance_to_the_first_answer() -> None:
    sent = _sent({0: [1, 2, 3]})
    sent.accepted_at.update({1: 10.0, 2: 10.5, 3: 11.0})  # 3 never answered: not counted
    answers = [(10.75, 1), (11.0, 2), (12.0, 1)]
    assert sorted(answer_latencies(sent, answers)) == pytest.approx([0.5, 0.75])


def test_job_runs_count_each_period_over_every_replicas_log() -> None:
    runs = job_runs([LOG_R0, LOG_R1])
    assert runs == {
        ("extraction_sweep", T0): 1,
        ("daily_compress", T2): 2,
    }
    assert job_runs_duplicated(runs) == 1


def test_the_poller_is_the_one_replica_that_never_stood_by() -> None:
    standing = "[telegram] another replica polls for this bot; standing by"
    assert poller({0: LOG_R0, 1: LOG_R1}) == 0
    assert poller({0: LOG_R0, 1: "", 2: standing}) is None  # two candidates: not known yet
    assert poller({0: standing, 1: standing}) is None


def test_trials_are_chosen_by_name_in_the_order_given() -> None:
    assert trial_list("polling, webhook,polling") == ["polling", "webhook"]
    with pytest.raises(argparse.ArgumentTypeError, match="expected some of webhook, polling, feishu"):
        trial_list("webhook,carrier-pigeon")
    assert parse_args(["--database", "auto", "--trials", "feishu"]).trials == ["feishu"]
    every = ["webhook", "polling", "feishu", "stall", "skew", "race"]
    assert parse_args(["--database", "auto"]).trials == every
    assert parse_args(["--database", "auto", "--trials", "none"]).trials == []  # throughput only


def test_a_run_fails_on_what_no_fault_excuses() -> None:
    clean = {"lost": 0, "order_violations": 0, "duplicate_memories": 0, "job_runs_duplicated": 0}
    telegram_kill = {**clean, "mode": "webhook", "answered_twice": 1, "in_flight_at_kill": 1}
    assert not run_failed(telegram_kill)  # its send was on the wire when it died: no key can drop it
    assert run_failed({**telegram_kill, "answered_twice": 2})  # beyond what was in flight
    assert run_failed({**telegram_kill, "mode": "feishu"})  # Feishu drops a repeated send key
    assert run_failed({**telegram_kill, "mode": "stall"})  # a stalled replica must send nothing
    assert run_failed({**clean, "mode": "race", "answered_twice": 0, "in_flight_at_kill": None, "lost": 1})
    assert not run_failed({**clean, "mode": "skew", "answered_twice": 0, "in_flight_at_kill": None})


def test_auto_names_a_throwaway_server_and_sqlite_one_replica() -> None:
    assert database_problem("auto", 3) is None
    assert database_problem("postgresql://u@h/db", 3) is None
    assert database_problem("sqlite", 1) is None
    assert "one replica only" in (database_problem("sqlite", 2) or "")
    assert "auto (a throwaway cluster)" in (database_problem("mysql://h/db", 3) or "")


@pytest.mark.parametrize("argv", [["--jobs-every", "-1"], ["--kill-at", "1"], ["--trials", ""]])
def test_bad_options_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--database", "auto", *argv])
    assert exit_.value.code == 2 and "error:" in capsys.readouterr().err
