"""The memory page lists a person's reminders — waiting with a Cancel button, those not delivered with
why — and cancels one only with the session's CSRF token (README "Reminders"); both stores."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gateway.dashboard.context import DashboardContext
from gateway.dashboard.server import RunningDashboard, start_dashboard
from memory.clock import to_db_fine, utcnow
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.records import Fact
from tests.gateway.dashboard.test_dashboard_server import base_of, csrf_of, fetch, logged_in
from tests.gateway.reminders.support import add, ago, due_row

pytestmark = pytest.mark.both_stores
TOKEN = "test-token-reminders-0123"
ALICE = "telegram:42"


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


async def test_waiting_and_failed_reminders_are_listed_and_one_is_cancelled(
    page: RunningDashboard, engine: MemoryEngine
) -> None:
    await engine.write(ALICE, Fact(content="I live in Leeds"))
    waiting = await add(
        engine, due_row(ALICE, "telegram", "42", "call <the> dentist", ago(-3600), zone="Europe/London")
    )
    failed = await add(engine, due_row(ALICE, "telegram", "42", "water the plants", ago(60)))
    rows = engine.store.reminders
    claimed, _ = await rows.claim_due("r1", ["telegram"], to_db_fine(utcnow()), to_db_fine(ago(-30)), 30)
    assert [r.id for r in claimed] == [failed]
    await rows.give_up(
        failed, "r1", "failed", "Telegram refused for good (403): bot was blocked", "2026-01-01 00:00:00"
    )
    client = await logged_in(page)
    try:
        url = f"{base_of(page)}/people/telegram%3A42/reminders"
        status, html = await fetch(client, "GET", url)
        assert status == 200
        assert "call &lt;the&gt; dentist" in html and "Europe/London" in html  # escaped, in its zone
        assert "Not delivered (1)" in html and "bot was blocked" in html
        cancel = f"{base_of(page)}/people/telegram%3A42/reminders/{waiting}/cancel"
        assert (await fetch(client, "POST", cancel, data={}))[0] == 403  # no CSRF: nothing changes
        assert (await rows.get(ALICE, waiting)).status == "pending"  # type: ignore[union-attr]
        csrf = csrf_of(html)
        status, html = await fetch(client, "POST", cancel, data={"csrf": csrf})
        assert status == 200 and f"Cancelled reminder #{waiting}" in html
        assert (await rows.get(ALICE, waiting)).status == "cancelled"  # type: ignore[union-attr]
        other = f"{base_of(page)}/people/user%3Abob/reminders/{waiting}/cancel"
        assert (await fetch(client, "POST", other, data={"csrf": csrf}))[0] == 404
    finally:
        await client.close()
