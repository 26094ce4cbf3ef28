"""The memory page's attachments: a person's voice notes, photos and files, newest first or found by what
they held (``?q=``), with image thumbnails; each file served to the page's session only (the guard checks
the session as for every page), and forgotten for good — the row and its bytes — after a POST.

Only common image types are shown inline (PNG, JPEG, GIF, WebP: never SVG, which could carry script);
every other file is a download (``Content-Disposition: attachment``), never rendered by the browser.
"""

from __future__ import annotations

from aiohttp import web

from gateway.dashboard.context import CONTEXT, person_url, redirect, render, say
from gateway.dashboard.pages import known_owner

PER_PAGE = 50
INLINE_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def add_routes(router: web.UrlDispatcher) -> None:
    """The attachment routes (GET the list and a file; POST forget)."""
    router.add_get("/people/{owner}/attachments", attachments_page)
    router.add_get("/people/{owner}/attachments/{attachment_id}/file", attachment_file)
    router.add_post("/people/{owner}/attachments/{attachment_id}/forget", forget_attachment)


def _attachment_id(request: web.Request) -> int:
    raw = request.match_info["attachment_id"]
    if not raw.isdigit() or len(raw) > 18:
        raise web.HTTPNotFound(text="No such attachment.")
    return int(raw)


async def attachments_page(request: web.Request) -> web.Response:
    """The list (or a search) with thumbnails of the images whose bytes are kept."""
    log = request.app[CONTEXT].engine.attachments
    owner = await known_owner(request)
    query = request.query.get("q", "").strip()[:500]
    if query:
        rows = [hit.row for hit in await log.search(owner, query, k=PER_PAGE)]
    else:
        rows = await log.list(owner, limit=PER_PAGE)
    kept = await log.has_bytes(owner, [r.id for r in rows])
    return render(
        request,
        "attachments.html",
        owner=owner,
        rows=rows,
        kept=kept,
        query=query,
        inline=INLINE_IMAGES,
        total=await log.count(owner),
    )


async def attachment_file(request: web.Request) -> web.Response:
    """One kept file: an image inline, anything else as a download."""
    log = request.app[CONTEXT].engine.attachments
    owner = await known_owner(request)
    attachment_id = _attachment_id(request)
    row = await log.get(owner, attachment_id)
    data = await log.file_bytes(owner, attachment_id) if row is not None else None
    if row is None or data is None:
        raise web.HTTPNotFound(text="No such file kept.")
    if row.mime in INLINE_IMAGES:
        return web.Response(
            body=data, content_type=row.mime, headers={"Cache-Control": "private, max-age=3600"}
        )
    name = (row.file_name or f"attachment-{row.id}").replace('"', "")
    disposition = f"attachment; filename*=UTF-8''{_quote(name)}"
    return web.Response(
        body=data, content_type="application/octet-stream", headers={"Content-Disposition": disposition}
    )


async def forget_attachment(request: web.Request) -> web.StreamResponse:
    """Delete one attachment and its file for good."""
    owner = await known_owner(request)
    attachment_id = _attachment_id(request)
    if not await request.app[CONTEXT].engine.attachments.forget(owner, attachment_id):
        raise web.HTTPNotFound(text="This person has no such attachment.")
    say(request, f"Deleted attachment #{attachment_id} and its file for good.")
    raise redirect(person_url(owner, "attachments"))


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")
