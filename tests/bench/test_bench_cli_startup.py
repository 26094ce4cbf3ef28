"""bench/cli_startup.py with one run per command: the --json contract keys, all positive."""

from __future__ import annotations

import json

import pytest

from bench.cli_startup import main


def test_one_run_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--runs", "1", "--json"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    for key in ("help_s", "memory_stats_s", "startup_s", "startup_feishu_s", "lark_import_s"):
        assert isinstance(result[key], float) and result[key] > 0, key
    assert result["help_s"] < result["startup_feishu_s"]  # --help loads neither memory nor Feishu
    assert result["bytecode_compiled"] is True and result["runs"] == 1
    assert "tierclaw memory stats" in out


def test_runs_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--runs", "0"])
    assert stop.value.code == 2
