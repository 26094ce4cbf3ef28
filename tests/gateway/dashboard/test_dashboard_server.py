"""The memory page's server over real HTTP on 127.0.0.1: who gets in, what a request must carry, and that
every action reaches the engine's write path for the right person only."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from gateway.app import Runtime
from gateway.cli.run import start_page
from gateway.config import load_config
from gateway.dashboard.access import (
    TOKEN_FILE,
    DashboardAccessError,
    check_bind,
    host_header_allowed,
    load_or_create_token,
)
from gateway.dashboard.context import DashboardContext
from gateway.dashboard.server import RunningDashboard, start_dashboard
from localservers.openai_server import OpenAIStub
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.records import Fact
from tests.support.typed_channel import ChatChannel
from tests.support.waiting import PROCESS_CEILING

ALICE, BOB = "telegram:42", "user:bob"
TOKEN = "test-token-0123456789"

# The page reads and writes through the store: every test runs on SQLite and PostgreSQL.
pytestmark = pytest.mark.both_stores


@pytest.fixture
async def page(engine: MemoryEngine) -> AsyncIterator[RunningDashboard]:
    running = await start_dashboard(
        DashboardContext(engine=engine, buffer=ExtractionBuffer(engine.store.buffer)),
        token=TOKEN,
        host="127.0.0.1",
        port=0,
    )
    try:
        yield running
    finally:
        await running.stop()


def base_of(page: RunningDashboard) -> str:
    return page.url.split("/?")[0]


async def logged_in(page: RunningDashboard) -> aiohttp.ClientSession:
    """A client that opened the printed URL (cookies kept for the IP address)."""
    client = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    async with client.get(page.url) as resp:
        assert resp.status == 200
    return client


async def fetch(client: aiohttp.ClientSession, method: str, url: str, **kw: object) -> tuple[int, str]:
    """(status, body) of one request."""
    async with client.request(method, url, **kw) as resp:
        return resp.status, await resp.text()


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


async def test_the_printed_url_carries_the_token_and_exchanges_it_for_a_strict_httponly_cookie(
    page: RunningDashboard,
) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=" + TOKEN, page.url)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as client:
        async with client.get(page.url, allow_redirects=False) as resp:
            assert resp.status == 303
            assert resp.headers["Location"] == "/"  # the token leaves the address bar
            cookie = resp.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        async with client.get(base_of(page) + "/") as resp:
            assert resp.status == 200
            assert resp.headers["Content-Security-Policy"].startswith("default-src 'none'")
            assert resp.headers["X-Frame-Options"] == "DENY"
            assert resp.headers["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize("query", ["", "?token=wrong", "?token=", f"?token={TOKEN}x"])
async def test_no_token_or_a_wrong_one_is_401(page: RunningDashboard, query: str) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as client:
        status, body = await fetch(client, "GET", base_of(page) + "/" + query, allow_redirects=False)
        assert status == 401 and "access token" in body.lower()
        assert not list(client.cookie_jar)  # no session was opened


async def test_a_forged_session_cookie_is_401(page: RunningDashboard) -> None:
    async with aiohttp.ClientSession(cookies={"tierclaw_session": "guess"}) as client:
        assert (await fetch(client, "GET", base_of(page) + "/"))[0] == 401


async def test_another_owners_memory_id_is_404_on_every_page_and_action(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    await engine.write(ALICE, Fact("Alice lives in Berlin"))
    bobs = (await engine.write(BOB, Fact("Bob's bank PIN hint is his dog"))).id
    base = base_of(page) + "/people/telegram%3A42/memories"
    async with await logged_in(page) as client:
        async with client.get(base_of(page) + "/people/telegram%3A42") as resp:
            csrf = csrf_of(await resp.text())
        for path in (f"/{bobs}", f"/{bobs}/purge"):
            async with client.get(base + path) as resp:
                assert resp.status == 404
                assert "dog" not in await resp.text()
        for action in ("forget", "restore", "purge", "edit"):
            form = {"csrf": csrf, "confirm": "yes", "content": "hijacked"}
            async with client.post(f"{base}/{bobs}/{action}", data=form) as resp:
                assert resp.status == 404, action
        async with client.get(base_of(page) + "/people/nobody%3A1") as resp:
            assert resp.status == 404
    mem = await engine.get(BOB, bobs)
    assert mem is not None and not mem.is_archived and mem.content == "Bob's bank PIN hint is his dog"


async def test_a_post_without_the_csrf_token_is_403_and_changes_nothing(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    mem = (await engine.write(ALICE, Fact("Alice lives in Berlin"))).id
    base = base_of(page) + "/people/telegram%3A42"
    async with await logged_in(page) as client:
        for form in ({}, {"csrf": "wrong"}, {"csrf": ""}):
            async with client.post(f"{base}/memories", data={**form, "content": "injected"}) as resp:
                assert resp.status == 403
            async with client.post(f"{base}/memories/{mem}/forget", data=form) as resp:
                assert resp.status == 403
    assert [m.content for m in await engine.list(ALICE)] == ["Alice lives in Berlin"]
    # Without a session at all, a POST is 401 before anything else.
    async with aiohttp.ClientSession() as stranger:
        status, _ = await fetch(stranger, "POST", f"{base}/memories", data={"content": "x", "csrf": "x"})
        assert status == 401


async def test_actions_go_through_the_write_path_and_say_what_happened(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    await engine.write(ALICE, Fact("Alice lives in Berlin", subject="alice", predicate="lives_in"))
    base = base_of(page) + "/people/telegram%3A42"
    async with await logged_in(page) as client:
        async with client.get(base) as resp:
            csrf = csrf_of(await resp.text())
        fields = {
            "csrf": csrf,
            "category": "decision",
            "project": "tierclaw",
            "tier": "2",
            "importance": "0.7",
        }
        async with client.post(
            f"{base}/memories", data={**fields, "content": "We deploy with blue-green"}
        ) as r:
            assert r.status == 200
            assert re.search(r"Saved as #\d+\.", await r.text())
        async with client.post(
            f"{base}/memories", data={**fields, "content": "We deploy with blue-green"}
        ) as r:
            assert "merged into #" in await r.text()  # the same fact again: the clean path's dedup
        async with client.post(f"{base}/memories", data={**fields, "content": " ", "tier": "2"}) as r:
            assert r.status == 400
        async with client.post(f"{base}/memories", data={**fields, "content": "x", "tier": "7"}) as r:
            assert r.status == 400 and "tier" in (await r.text()).lower()
    deploy = [m for m in await engine.list(ALICE) if "blue-green" in m.content]
    assert len(deploy) == 1 and deploy[0].category == "decision" and deploy[0].project == "tierclaw"
    assert deploy[0].source == "dashboard"


async def test_bad_filters_are_400_and_searching_finds_chinese(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    await engine.write(ALICE, Fact("我在杭州工作，每天骑车上班"))
    await engine.write(ALICE, Fact("Alice likes green tea"))
    base = base_of(page) + "/people/telegram%3A42"
    async with await logged_in(page) as client:
        for bad in ("?sort=evil", "?tier=3", "?archived=maybe", "?page=0", "?page=x"):
            async with client.get(base + bad) as resp:
                assert resp.status == 400, bad
        async with client.get(base, params={"q": "杭州"}) as resp:
            html = await resp.text()
            assert "骑车" in html and "green tea" not in html


async def test_memory_text_is_escaped(page: RunningDashboard, engine: MemoryEngine) -> None:
    await engine.write(ALICE, Fact('<script>alert("x")</script><img src=x onerror=alert(1)> my note'))
    async with await logged_in(page) as client:
        _, html = await fetch(client, "GET", base_of(page) + "/people/telegram%3A42")
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html


async def test_a_request_for_another_host_name_is_refused(page: RunningDashboard) -> None:
    async with aiohttp.ClientSession() as client:
        assert (await fetch(client, "GET", page.url, headers={"Host": "attacker.example:80"}))[0] == 400
    assert host_header_allowed("localhost:8765", "127.0.0.1")
    assert not host_header_allowed("evil.example", "::1")
    assert host_header_allowed("evil.example", "0.0.0.0")  # remote access was allowed explicitly


async def test_dead_letters_are_listed_and_retried(page: RunningDashboard, engine: MemoryEngine) -> None:
    buffer = ExtractionBuffer(engine.store.buffer)
    await buffer.append(ALICE, channel="telegram", chat_id="42", sender_id="42", role="user", content="hi")
    ids = [t[0] for t in await engine.store.buffer.oldest(ALICE, due_only=False)]
    await engine.store.buffer.mark_failed(ids, 5, 60.0, True, "model said 500")
    base = base_of(page) + "/people/telegram%3A42"
    async with await logged_in(page) as client:
        async with client.get(base + "/operations") as resp:
            html = await resp.text()
            assert "Dead letters (1)" in html and "model said 500" in html
        async with client.post(base + "/retry", data={"csrf": csrf_of(html)}) as resp:
            assert "Re-queued 1 dead-letter message." in await resp.text()
    assert await buffer.dead_letters(ALICE) == 0 and await buffer.pending_turns(ALICE) == 1


def test_a_non_loopback_address_needs_the_explicit_flag() -> None:
    for host in ("0.0.0.0", "192.168.1.5", "example.com", "::"):
        with pytest.raises(DashboardAccessError, match="allow-remote") as caught:
            check_bind(host, 8765, allow_remote=False)
        assert "plain HTTP" in str(caught.value)
        check_bind(host, 8765, allow_remote=True)
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_bind(host, 8765, allow_remote=False)


def test_the_command_refuses_a_remote_address_without_the_flag(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    db.touch()
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "dashboard", "--db", str(db), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 2
    assert "refusing to serve the memory page on 0.0.0.0" in done.stderr and "--allow-remote" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_refuses_a_missing_database(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "dashboard", "--db", str(tmp_path / "none.db")],
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 2 and "no memory database" in done.stderr
    assert not (tmp_path / "none.db").exists()


async def test_a_remote_address_is_served_with_the_flag(engine: MemoryEngine) -> None:
    running = await start_dashboard(
        DashboardContext(engine=engine, buffer=ExtractionBuffer(engine.store.buffer)),
        token=TOKEN,
        host="0.0.0.0",
        port=0,
        allow_remote=True,
    )
    try:
        port = running.url.split(":")[2].split("/")[0]
        async with aiohttp.ClientSession() as client, client.get(f"http://127.0.0.1:{port}/") as resp:
            assert resp.status == 401  # still locked
    finally:
        await running.stop()


def test_the_token_file_is_private_and_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = load_or_create_token(data)
    mode = stat.S_IMODE((data / TOKEN_FILE).stat().st_mode)
    assert mode == 0o600 and stat.S_IMODE(data.stat().st_mode) == 0o700
    assert len(first) >= 40 and load_or_create_token(data) == first


async def test_the_gateway_serves_the_page_with_its_reply_timings(
    tmp_path: Path, model: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = {
        "provider": {"apiKey": "sk-test-000000", "baseUrl": model.base_url, "maxRetries": 0},
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {"dbPath": str(tmp_path / "data" / "memory.db"), "embedding": {"provider": "none"}},
        "dashboard": {"enabled": True, "port": 0},
    }
    (tmp_path / "config.json").write_text(json.dumps(raw), encoding="utf-8")
    channel = ChatChannel()
    runtime = await Runtime.open(load_config(tmp_path / "config.json", env={}), [channel])
    try:
        await runtime.start(schedule=False)
        running = await start_page(runtime)
        try:
            printed = capsys.readouterr().err
            token = load_or_create_token(tmp_path / "data")
            assert "memory page: http://127.0.0.1:" in printed and token not in printed
            for n in range(3):
                await channel.say(f"hello {n}")
            assert len(channel.replies) == 3
            async with await logged_in(running) as client:
                status, html = await fetch(client, "GET", base_of(running) + "/people/test%3Au1/operations")
            assert status == 200
            assert re.search(r"Last 3 messages: p50 [\d.]+ ms · p95 [\d.]+ ms", html)
        finally:
            await running.stop()
    finally:
        await runtime.close()


async def test_the_scratchpad_form_keeps_lf_line_breaks_and_says_when_it_shortened(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    await engine.write(ALICE, Fact("Alice lives in Berlin"))
    base = base_of(page) + "/people/telegram%3A42"
    async with await logged_in(page) as client:
        _, html = await fetch(client, "GET", base + "/time")
        csrf = csrf_of(html)
        _, html = await fetch(client, "POST", base + "/scratchpad", data={"csrf": csrf, "content": "a\r\nb"})
        assert "Scratchpad saved (3 characters)." in html
        assert (await engine.scratchpad.get(ALICE)).content == "a\nb"
        long_note = "\n".join(f"- line {n:04d} " + "x" * 40 for n in range(100))
        _, html = await fetch(client, "POST", base + "/scratchpad", data={"csrf": csrf, "content": long_note})
        assert "shortened to" in html
        _, html = await fetch(client, "POST", base + "/scratchpad", data={"csrf": csrf, "action": "clear"})
        assert "The scratchpad is empty." in html
    assert (await engine.scratchpad.get(ALICE)).content == ""


async def refuse_memory_writes(engine: MemoryEngine) -> None:
    """From now on every write to memories fails inside the database (whichever store)."""
    if engine.store.db.kind == "sqlite":  # type: ignore[attr-defined]
        await engine.store.db.write("PRAGMA query_only = ON")  # type: ignore[attr-defined]
        return
    await engine.store.db.write(  # type: ignore[attr-defined]
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'writes refused'; END $$"
    )
    await engine.store.db.write(  # type: ignore[attr-defined]
        "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON memories EXECUTE FUNCTION refuse()"
    )


async def test_a_failing_database_is_one_log_line_and_a_plain_500(
    page: RunningDashboard, engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await engine.write(ALICE, Fact("Alice's secret recipe uses saffron"))
    async with await logged_in(page) as client:
        await refuse_memory_writes(engine)
        _, html = await fetch(client, "GET", base_of(page) + "/people/telegram%3A42")
        status, body = await fetch(
            client,
            "POST",
            base_of(page) + "/people/telegram%3A42/memories",
            data={"csrf": csrf_of(html), "content": "x"},
        )
    assert status == 500 and "Something failed" in body and "Traceback" not in body
    lines = [r for r in caplog.records if r.name == "tierclaw.dashboard" and r.levelname == "WARNING"]
    assert len(lines) == 1 and "POST" in lines[0].getMessage() and "saffron" not in caplog.text


async def test_a_memory_added_without_a_category_is_classified(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    await engine.write(ALICE, Fact("Alice lives in Berlin", subject="alice", predicate="lives_in"))
    base = base_of(page) + "/people/telegram%3A42"
    async with await logged_in(page) as client:
        async with client.get(base) as resp:
            html = await resp.text()
        assert '<option value="" selected>automatic</option>' in html  # the form's default for a new one
        for content in ("My dog is called Biscuit", "我女儿叫小雨"):
            fields = {"csrf": csrf_of(html), "category": "", "tier": "2", "content": content}
            async with client.post(f"{base}/memories", data=fields) as r:
                assert r.status == 200
    categories = {m.content: m.category for m in await engine.list(ALICE)}
    # The category guide (memory/text/category.py): the people and pets around the person are events.
    assert categories["My dog is called Biscuit"] == categories["我女儿叫小雨"] == "event"
