"""bench/dashboard_page.py on a small store: the --json contract keys, all positive."""

from __future__ import annotations

import json

import pytest

from bench.dashboard_page import main

PAGES = ("owners_page", "owner_page", "owner_page_by_date", "search_page", "memory_page", "operations_page")


def test_a_small_run_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--memories", "120", "--requests", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["memories"] == 120 and result["requests"] == 2
    for page in PAGES:
        assert 0 < result[f"{page}_p50_ms"] <= result[f"{page}_p95_ms"], page
    assert result["owner_page_wall_p95_ms"] > 0


def test_counts_must_be_positive() -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--memories", "0"])
    assert stop.value.code == 2
