"""The memory page's sessions live in the memory database (both stores): a session opened on one page is
good on another page over the same database (another gateway, or this one after a restart), and on
PostgreSQL every gateway shares the one access token kept there (gateway/dashboard/access.py)."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from gateway.dashboard.access import SESSION_COOKIE, TOKEN_FILE, access_token
from gateway.dashboard.context import DashboardContext
from gateway.dashboard.server import RunningDashboard, start_dashboard
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer

TOKEN = "test-token-0123456789"
pytestmark = pytest.mark.both_stores


async def _page(engine: MemoryEngine, token: str = TOKEN) -> RunningDashboard:
    ctx = DashboardContext(engine=engine, buffer=ExtractionBuffer(engine.store.buffer))
    return await start_dashboard(ctx, token=token, host="127.0.0.1", port=0)


def _base(page: RunningDashboard) -> str:
    return page.url.split("/?")[0]


async def test_a_session_opened_on_one_page_is_good_on_another_over_the_same_database(
    tmp_path: Path, memory_url: str
) -> None:
    target = memory_url or str(tmp_path / "memory.db")
    first_engine = await MemoryEngine.open(target)
    second_engine = await MemoryEngine.open(target)  # another gateway on the same database
    first, second = await _page(first_engine), await _page(second_engine)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.get(first.url, allow_redirects=False) as resp:
                assert resp.status == 303
                sid = resp.cookies[SESSION_COOKIE].value
            cookie = {"Cookie": f"{SESSION_COOKIE}={sid}"}
            async with client.get(_base(second) + "/", headers=cookie) as resp:
                assert resp.status == 200
            async with client.get(_base(second) + "/", headers={"Cookie": f"{SESSION_COOKIE}=forged"}) as r:
                assert r.status == 401
        rows = await first_engine.store.page.count()
        assert rows == 1 and sid not in str(
            await first_engine.store.db.read("SELECT sid_hash FROM page_sessions")
        )
    finally:
        await first.stop()
        await second.stop()
        await first_engine.close()
        await second_engine.close()


async def test_the_token_is_the_file_on_sqlite_and_the_database_on_postgresql(
    tmp_path: Path, engine: MemoryEngine, memory_store: str
) -> None:
    on_file = memory_store == "sqlite"
    token = await access_token(tmp_path / "data", engine.store.page, on_file=on_file)
    assert len(token) >= 40
    assert await access_token(tmp_path / "data", engine.store.page, on_file=on_file) == token  # kept
    assert (tmp_path / "data" / TOKEN_FILE).exists() == on_file
    if not on_file:  # any gateway on the database, whatever its directory, has this token
        assert await access_token(tmp_path / "elsewhere", engine.store.page, on_file=False) == token
