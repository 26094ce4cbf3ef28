"""The load-balancer stand-in (localservers/round_robin.py) in front of two real aiohttp backends: turns,
what is preserved, a stopped backend skipped without losing a request, 502 when none is up, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from localservers.round_robin import RoundRobin
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING


class Backend:
    """An aiohttp server that answers with what it received, and says who it is."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.received: list[dict] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def _echo(self, request: web.Request) -> web.Response:
        seen = {
            "backend": self.name,
            "method": request.method,
            "path_qs": request.rel_url.raw_path_qs,
            "secret": request.headers.get("X-Telegram-Bot-Api-Secret-Token"),
            "content_type": request.headers.get("Content-Type"),
            "body": (await request.read()).decode(),
        }
        self.received.append(seen)
        return web.json_response(seen, status=201, headers={"X-Backend": self.name})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._echo)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def backends() -> AsyncIterator[tuple[Backend, Backend]]:
    a, b = Backend("a"), Backend("b")
    await a.start()
    await b.start()
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()


async def _post(url: str, body: str) -> tuple[int, dict, str]:
    headers = {"X-Telegram-Bot-Api-Secret-Token": "s3cret", "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as answer:
        return answer.status, json.loads(await answer.text()), answer.headers.get("X-Backend", "")


async def test_requests_take_turns_and_arrive_as_sent(backends: tuple[Backend, Backend]) -> None:
    a, b = backends
    with RoundRobin([a.url, b.url]) as lb:
        answers = [await _post(f"{lb.url}/telegram?x=1", json.dumps({"update_id": n})) for n in range(4)]
    assert [who for _, _, who in answers] == ["a", "b", "a", "b"]
    status, seen, _ = answers[0]
    assert status == 201  # the backend's own status comes back
    assert seen == {
        "backend": "a",
        "method": "POST",
        "path_qs": "/telegram?x=1",
        "secret": "s3cret",
        "content_type": "application/json",
        "body": '{"update_id": 0}',
    }
    assert [json.loads(r["body"])["update_id"] for r in b.received] == [1, 3]
    assert lb.forwarded == [(a.url, 201), (b.url, 201), (a.url, 201), (b.url, 201)]


async def test_a_stopped_backend_is_skipped_and_no_request_is_lost(backends: tuple[Backend, Backend]) -> None:
    a, b = backends
    with RoundRobin([a.url, b.url]) as lb:
        await b.stop()  # a replica killed: its port now refuses connections
        answers = [await _post(lb.url + "/telegram", json.dumps({"update_id": n})) for n in range(4)]
        assert [(status, who) for status, _, who in answers] == [(201, "a")] * 4
        assert [json.loads(r["body"])["update_id"] for r in a.received] == [0, 1, 2, 3]
        assert lb.refused == [b.url, b.url]  # its turns went to the next backend

        await a.stop()  # nobody left: the sender is told to try again later
        async with aiohttp.ClientSession() as http, http.post(lb.url + "/telegram", data="{}") as answer:
            assert answer.status == 502


def test_the_command_line_forwards_and_refuses_a_bad_backend() -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "localservers", "round-robin", "--to", "127.0.0.1:1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
    )
    assert bad.returncode == 2
    assert "a backend must be an http(s) URL" in bad.stdout

    proc = subprocess.Popen(
        [sys.executable, "-m", "localservers", "round-robin", "--to", "http://127.0.0.1:9"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with pytest.raises(urllib.error.HTTPError) as refused:  # port 9 refuses: 502, not a hang
            urllib.request.urlopen(url + "/x", timeout=30)
        assert refused.value.code == 502
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
