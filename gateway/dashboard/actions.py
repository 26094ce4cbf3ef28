"""What changes memory from the page (POST): add, edit, forget, restore, purge, the scratchpad, dead-letter
retry and "extract now".

Each goes through the engine's own write path — the same dedup and supersede rules as chat and the CLI
(``memory/writes.py``) — and answers with a redirect to a page that shows the outcome (a one-time
message says what happened: inserted, merged into #id, superseded #id). The guard in ``server.py`` has
already checked the session and the CSRF token; a bad value is said on the page, never a traceback.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from gateway.dashboard.context import CONTEXT, FORM, person_url, redirect, say
from gateway.dashboard.pages import known_owner, memory_id_of
from memory.head.filing import file_category
from memory.records import GLOBAL_PROJECT, Fact, WriteResult
from memory.text.wording import plural

log = logging.getLogger("tierclaw.dashboard")

MAX_CONTENT_CHARS = 4000
# Extractions that outlived the request which started them (kept referenced until they finish).
_running: set[asyncio.Future] = set()


def add_routes(router: web.UrlDispatcher) -> None:
    """The POST routes."""
    router.add_post("/people/{owner}/memories", add)
    router.add_post("/people/{owner}/memories/{memory_id}/edit", edit)
    router.add_post("/people/{owner}/memories/{memory_id}/forget", forget)
    router.add_post("/people/{owner}/memories/{memory_id}/restore", restore)
    router.add_post("/people/{owner}/memories/{memory_id}/purge", purge)
    router.add_post("/people/{owner}/scratchpad", scratchpad)
    router.add_post("/people/{owner}/retry", retry)
    router.add_post("/people/{owner}/extract", extract)


def _text(request: web.Request, name: str) -> str:
    value = request[FORM].get(name, "")
    # Browsers send a textarea's line breaks as CRLF; memory text uses LF.
    return value.replace("\r\n", "\n").strip() if isinstance(value, str) else ""


async def _fields(request: web.Request) -> dict:
    """The memory form's fields as ``Fact`` values; HTTP 400 for a value the form never sends."""
    content = _text(request, "content")
    if not content:
        raise web.HTTPBadRequest(text="A memory needs some text.")
    if len(content) > MAX_CONTENT_CHARS:
        raise web.HTTPBadRequest(text=f"A memory is at most {MAX_CONTENT_CHARS} characters.")
    try:
        tier = int(_text(request, "tier") or 2)
        importance = float(_text(request, "importance") or 0.5)
    except ValueError:
        raise web.HTTPBadRequest(text="Tier is 1 or 2 and importance a number from 0 to 1.") from None
    return {
        "content": content,
        "tier": tier,
        "importance": importance,
        # Filed as extraction files it (memory/head/filing.py) when the form leaves the category out.
        "category": _text(request, "category")
        or await file_category(content, request.app[CONTEXT].engine.embedder),
        "project": _text(request, "project") or GLOBAL_PROJECT,
    }


def describe(result: WriteResult) -> str:
    """What a write did, in the words the person reads."""
    if result.action == "merged":
        return f"Already known: merged into #{result.id}."
    if result.action == "superseded":
        return f"Saved as #{result.id}; it supersedes #{result.replaced_id}."
    return f"Saved as #{result.id}."


async def add(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    try:
        fields = await _fields(request)
        result = await request.app[CONTEXT].engine.write(owner, Fact(source="dashboard", **fields))
    except ValueError as exc:
        raise web.HTTPBadRequest(text=f"Not saved: {exc}") from None
    say(request, describe(result))
    raise redirect(person_url(owner, "memories", result.id))


async def edit(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    memory_id = memory_id_of(request)
    fields = await _fields(request)
    try:
        await request.app[CONTEXT].engine.edit(owner, memory_id, **fields)
    except KeyError:
        raise web.HTTPNotFound(text="This person has no such live memory (restore it first).") from None
    except ValueError as exc:
        raise web.HTTPBadRequest(text=f"Not saved: {exc}") from None
    say(request, f"Saved #{memory_id}.")
    raise redirect(person_url(owner, "memories", memory_id))


async def forget(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    memory_id = memory_id_of(request)
    if not await request.app[CONTEXT].engine.archive(owner, memory_id):
        raise web.HTTPNotFound(text="This person has no such live memory.")
    say(request, f"Forgot #{memory_id}: it is archived and no longer recalled. Restore brings it back.")
    raise redirect(person_url(owner, "memories", memory_id))


async def restore(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    memory_id = memory_id_of(request)
    if not await request.app[CONTEXT].engine.restore(owner, memory_id):
        raise web.HTTPNotFound(text="This person has no such archived memory.")
    say(request, f"Restored #{memory_id}: it is recalled again.")
    raise redirect(person_url(owner, "memories", memory_id))


async def purge(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    memory_id = memory_id_of(request)
    if _text(request, "confirm") != "yes":
        raise redirect(person_url(owner, "memories", memory_id, "purge"))
    if not await request.app[CONTEXT].engine.purge(owner, memory_id):
        raise web.HTTPNotFound(text="This person has no such memory.")
    say(request, f"Deleted #{memory_id} for good.")
    raise redirect(person_url(owner))


async def scratchpad(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    pad = request.app[CONTEXT].engine.scratchpad
    if _text(request, "action") == "clear":
        await pad.clear(owner)
        say(request, "The scratchpad is empty.")
    else:
        wanted = _text(request, "content")
        saved = await pad.put(owner, wanted)
        if not saved.content:
            say(request, "The scratchpad is empty.")
        elif len(saved.content) < len(wanted):
            say(request, f"Scratchpad saved, shortened to {len(saved.content)} characters to fit.")
        else:
            say(request, f"Scratchpad saved ({len(saved.content)} characters).")
    raise redirect(person_url(owner, "time"))


async def _extract_now(request: web.Request, owner: str) -> None:
    """Extract the person's buffered turns now with the memory model, within ``extract_wait``."""
    ctx = request.app[CONTEXT]
    if ctx.extraction is None:
        say(request, "Extraction is off (memory.enabled is false): nothing to extract with.")
        return
    task = asyncio.ensure_future(ctx.extraction.flush(owner, force=True))
    _running.add(task)
    task.add_done_callback(_running.discard)
    try:
        result = await asyncio.wait_for(asyncio.shield(task), ctx.extract_wait)
    except TimeoutError:
        say(request, f"Still extracting after {ctx.extract_wait:g} s; it goes on in the background.")
        return
    line = f"Extracted {plural(result.turns, 'message')} into {plural(result.facts, 'memory')}."
    if result.failed:
        line += " The memory model failed on a batch: it is retried later (see dead letters)."
    say(request, line)


async def retry(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    count = await request.app[CONTEXT].buffer.requeue_dead(owner)
    say(
        request,
        f"Re-queued {plural(count, 'dead-letter message')}." if count else "There were no dead letters.",
    )
    if count:
        await _extract_now(request, owner)
    raise redirect(person_url(owner, "operations"))


async def extract(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    await _extract_now(request, owner)
    raise redirect(person_url(owner, "operations"))
