"""bench/gateway_throughput.py end to end at a tiny size: the --json contract and argument checks."""

from __future__ import annotations

import json

import pytest

from bench.gateway_throughput import main

CONTRACT_KEYS = ("msgs_per_s_on", "msgs_per_s_off", "ratio", "p95_memory_ms", "startup_s")


def test_tiny_run_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--chats", "2", "--messages", "3", "--json", "--memories", "20", "--startup-runs", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    for key in CONTRACT_KEYS:
        assert isinstance(result[key], float) and result[key] > 0, key
    assert result["ratio"] == pytest.approx(result["msgs_per_s_on"] / result["msgs_per_s_off"])
    assert result["messages"] == 6 and result["chats"] == 2
    # every message was buffered (user + assistant turn) and none was extracted inside the timed window
    assert result["buffered_turns"] >= 12
    assert "ratio on/off" in out and "startup s" in out


@pytest.mark.parametrize(
    "argv",
    [["--chats", "0"], ["--messages", "0"], ["--chats", "-3"], ["--messages", "x"], ["--rounds", "0"]],
)
def test_bad_arguments_exit_non_zero(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code not in (0, None)
    assert "error" in capsys.readouterr().err
