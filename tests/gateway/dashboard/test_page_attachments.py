"""The memory page's attachments (both stores): the list with an image thumbnail served only to a logged-in
session, a search by what a file held, a non-image file as a download, and deleting one for good."""

from __future__ import annotations

from urllib.parse import quote

import aiohttp
import pytest

from gateway.dashboard.server import RunningDashboard
from localservers.sample_media import described_png, pdf_bytes
from memory.attachments import Understanding
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.store.attachments import NewAttachment
from tests.gateway.dashboard.test_dashboard_server import base_of, csrf_of, fetch, logged_in, page

pytestmark = pytest.mark.both_stores
__all__ = ["page"]  # the fixture, used by the tests below
OWNER = "telegram:42"


async def _keep(
    engine: MemoryEngine, message_id: str, kind: str, name: str, mime: str, data: bytes, text: str
) -> int:
    log = engine.attachments
    aid, _ = await log.keep(
        OWNER, NewAttachment("in", "telegram", "42", message_id, 0, kind, mime, file_name=name)
    )
    row = await log.get(OWNER, aid)
    assert row is not None
    await log.understood(OWNER, row, Understanding("understood", description=text, mime=mime, data=data))
    return aid


async def test_attachments_are_listed_with_thumbnails_searched_downloaded_and_deleted(
    engine: MemoryEngine, page: RunningDashboard
) -> None:
    await engine.write(OWNER, Fact(content="My cat is called Miso", category="identity"))  # a known person
    png = described_png("a grey cat")
    photo = await _keep(engine, "1", "photo", "", "image/png", png, "a grey cat asleep on a windowsill")
    lease = await _keep(
        engine, "2", "document", "lease.pdf", "application/pdf", pdf_bytes("Lease"), "a lease"
    )
    base = f"{base_of(page)}/people/{quote(OWNER, safe='')}/attachments"
    async with aiohttp.ClientSession() as stranger:
        assert (await fetch(stranger, "GET", f"{base}/{photo}/file"))[0] == 401
    client = await logged_in(page)
    async with client:
        status, html = await fetch(client, "GET", base)
        assert status == 200 and f'{photo}/file"' in html and 'class="thumb"' in html and "lease.pdf" in html
        async with client.get(f"{base}/{photo}/file") as resp:
            assert resp.status == 200 and resp.content_type == "image/png" and await resp.read() == png
        async with client.get(f"{base}/{lease}/file") as resp:
            assert resp.content_type == "application/octet-stream"
            assert resp.headers["Content-Disposition"].startswith("attachment;")
        status, found = await fetch(client, "GET", f"{base}?q=cat")
        assert "windowsill" in found and "lease.pdf" not in found
        status, _ = await fetch(client, "POST", f"{base}/{lease}/forget", data={"csrf": csrf_of(html)})
        assert status == 200
        assert (await fetch(client, "GET", f"{base}/{lease}/file"))[0] == 404
        assert (
            await fetch(client, "GET", f"{base_of(page)}/people/{quote('feishu:x', safe='')}/attachments")
        )[0] == 404
    assert await engine.attachments.get(OWNER, lease) is None
