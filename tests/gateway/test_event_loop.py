"""The event loop tierclaw runs on (gateway/event_loop.py): uvloop's when it imports, else asyncio's own,
said once at INFO — and ``tierclaw chat`` answers either way."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

import pytest

from gateway.event_loop import loop_name, run
from tests.gateway.cli.test_cli_chat import _run_chat
from tests.support import REPO


async def _kind() -> str:
    return loop_name(asyncio.get_running_loop())


def test_the_gateway_runs_on_uvloop_when_it_is_installed() -> None:
    pytest.importorskip("uvloop", reason="uvloop is a dependency (pyproject.toml); this machine lacks it")

    assert run(_kind()) == "uvloop"


def test_without_uvloop_it_runs_on_asyncios_loop_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # the import fails, as where it is not installed
    with caplog.at_level(logging.INFO, logger="tierclaw.gateway"):
        assert run(_kind()) == "asyncio"
    said = [r for r in caplog.records if "uvloop" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.INFO


def test_the_runner_hands_back_the_result_and_raises_what_main_raised() -> None:
    async def fails() -> None:
        raise LookupError("from main")

    assert run(asyncio.sleep(0, result=42)) == 42
    with pytest.raises(LookupError, match="from main"):
        run(fails())


def test_tierclaw_chat_answers_where_uvloop_cannot_be_imported(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked" / "uvloop"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text('raise ImportError("uvloop is not installed here")\n')
    path = os.pathsep.join([str(blocked.parent), str(REPO)])
    done = _run_chat(tmp_path, "hello there\n", {"PYTHONPATH": path})
    assert done.returncode == 0, done.stderr
    assert "[offline model]" in done.stdout
