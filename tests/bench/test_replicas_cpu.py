"""bench/replicas/cpu.py: CPU seconds per part of a run, read from /proc."""

from __future__ import annotations

import os
import sys

import pytest

from bench.replicas.cpu import matching, process_cpu, spent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


def test_a_run_costs_the_difference_and_a_missing_figure_stays_null() -> None:
    before = {"gateways": 1.0, "postgres": None, "bench": 2.0}
    after = {"gateways": 3.456, "postgres": 1.0, "bench": 2.5}
    assert spent(before, after) == {"gateways": 2.46, "postgres": None, "bench": 0.5}


def test_this_process_is_found_and_its_cpu_grows_with_work() -> None:
    start = process_cpu(os.getpid())
    deadline = (start or 0.0) + 0.05
    while (process_cpu(os.getpid()) or 0.0) < deadline:
        sum(i * i for i in range(10_000))
    assert start is not None and os.getpid() in matching("pytest")
    assert process_cpu(2**31 - 1) is None  # no such process
