"""``tierclaw dashboard`` beside a gateway that already serves the memory page: it prints that page's
ready link (a token that works) instead of failing with "address already in use" (issue 37, item 3)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from gateway.app import Runtime
from gateway.cli.run import start_page
from gateway.config import load_config
from gateway.dashboard.finding import RECORD_FILE
from gateway.dashboard.server import RunningDashboard
from tests.support.typed_channel import ChatChannel
from tests.support.waiting import PROCESS_CEILING


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(tmp_path: Path, port: int) -> Path:
    raw = {
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "data" / "memory.db"), "embedding": {"provider": "none"}},
        "dashboard": {"enabled": True, "port": port},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


@pytest.fixture
async def gateway_page(tmp_path: Path) -> AsyncIterator[tuple[Path, RunningDashboard]]:
    """A gateway runtime serving the page on the configured port (as `tierclaw gateway` does)."""
    config = write_config(tmp_path, free_port())
    runtime = await Runtime.open(load_config(config, env={}), [ChatChannel()])
    try:
        page = await start_page(runtime)
        try:
            yield config, page
        finally:
            await page.stop()
    finally:
        await runtime.close()


async def tierclaw(home: Path, *argv: str) -> tuple[int, str, str]:
    """``tierclaw ARGV`` as a process (this test's loop keeps serving the page meanwhile)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env["HOME"] = str(home)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway.cli",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=PROCESS_CEILING)
    return proc.returncode or 0, out.decode(), err.decode()


async def opens(link: str) -> bool:
    """Whether the link's token is taken: the page swaps it for a session cookie (303)."""
    async with aiohttp.ClientSession() as client, client.get(link, allow_redirects=False) as resp:
        return resp.status == 303 and "tierclaw_session" in resp.cookies


async def test_the_command_prints_the_running_gateways_link(
    tmp_path: Path, gateway_page: tuple[Path, RunningDashboard]
) -> None:
    config, page = gateway_page
    code, out, err = await tierclaw(tmp_path, "dashboard", "--config", str(config))
    assert code == 0, err
    assert "address already in use" not in err and "already serves the memory page" in err
    link = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", out)
    assert link is not None and link.group(1).split("?")[0] == page.url.split("?")[0]
    assert await opens(link.group(1))


async def test_without_the_note_it_finds_the_page_on_the_configured_port(
    tmp_path: Path, gateway_page: tuple[Path, RunningDashboard]
) -> None:
    config, page = gateway_page
    (tmp_path / "data" / RECORD_FILE).unlink()  # a gateway of an older tierclaw left no note
    code, out, err = await tierclaw(tmp_path, "dashboard", "--config", str(config), "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["url"].split("?")[0] == page.url.split("?")[0] and await opens(found["url"])


async def test_the_note_is_removed_when_the_page_stops(tmp_path: Path) -> None:
    config = write_config(tmp_path, 0)
    runtime = await Runtime.open(load_config(config, env={}), [ChatChannel()])
    try:
        page = await start_page(runtime)
        note = tmp_path / "data" / RECORD_FILE
        assert json.loads(note.read_text())["url"] == page.url.split("?")[0]
        await page.stop()
        assert not note.exists()
    finally:
        await runtime.close()


async def test_a_port_taken_by_another_program_is_named_with_the_way_out(tmp_path: Path) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        config = write_config(tmp_path, port)
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "memory.db").touch()
        code, _, err = await tierclaw(tmp_path, "dashboard", "--config", str(config))
    assert code == 2
    assert f"127.0.0.1:{port}" in err and "in use by another program" in err and "--port 0" in err
    assert "Traceback" not in err
