"""The pages a person reads (GET): everyone, one person's memory, one memory, time, operations, export.

Every page of a person first checks that the person exists in this database (404 otherwise); a memory id
is looked up with the person as owner, so another person's id is a 404 too — the same rule as every
engine call (docs/architecture.md, "Who owns what").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from aiohttp import web

from gateway.dashboard import charts
from gateway.dashboard.context import CONTEXT, DashboardContext, render
from gateway.memory_export import export_memory
from memory.browse import SORTS, BrowseFilter
from memory.clock import utcnow
from memory.retrieval.decay import CATEGORIES
from memory.store.browse_queries import ARCHIVED_CHOICES

DAYS_PER_TIME_PAGE = 30
EVENTS_PER_TIME_PAGE = 500
TURN_HITS = 10  # conversation turns a "what was said" search shows, each with its neighbours


@dataclass(slots=True)
class OwnerRow:
    """One person on the first page."""

    owner: str
    profile: int
    memories: int
    archived: int
    events: int
    turns: int
    buffered: int
    dead: int
    last_activity: str


def add_routes(router: web.UrlDispatcher) -> None:
    """The GET routes."""
    router.add_get("/", owners)
    router.add_get("/people/{owner}", person)
    router.add_get("/people/{owner}/memories/{memory_id}", memory)
    router.add_get("/people/{owner}/memories/{memory_id}/purge", purge_confirm)
    router.add_get("/people/{owner}/time", time_page)
    router.add_get("/people/{owner}/operations", operations)
    router.add_get("/people/{owner}/export.{fmt:json|md}", export)


async def known_owner(request: web.Request) -> str:
    """The person the URL names; 404 when this database holds nothing of theirs."""
    owner = request.match_info["owner"]
    if owner not in await request.app[CONTEXT].engine.owner_activity():
        raise web.HTTPNotFound(text=f"There is no person {owner!r} in this memory.")
    return owner


def memory_id_of(request: web.Request) -> int:
    """The memory id in the URL; 404 when it is not a number."""
    raw = request.match_info["memory_id"]
    if not raw.isdigit() or len(raw) > 18:
        raise web.HTTPNotFound(text="No such memory.")
    return int(raw)


async def owners(request: web.Request) -> web.Response:
    """Everyone this memory holds, with counts by tier, last activity, buffered turns, dead letters."""
    engine = request.app[CONTEXT].engine
    rows = []
    for owner, last in sorted((await engine.owner_activity()).items(), key=lambda kv: kv[1], reverse=True):
        stats = await engine.stats(owner)  # the counts every view shows (memory/counts.py)
        rows.append(
            OwnerRow(
                owner=owner,
                profile=stats["tier1"],
                memories=stats["tier2"],
                archived=stats["archived"],
                events=stats["tier3_events"],
                turns=stats["conversation_turns"],
                buffered=stats["buffered_turns"],
                dead=stats["dead_letters"],
                last_activity=(last or "")[:16],
            )
        )
    return render(request, "owners.html", owners=rows, db_path=str(engine.path))


def _filter_from(query: dict[str, str]) -> BrowseFilter:
    """The page's query string as a ``BrowseFilter``; HTTP 400 naming a bad value."""
    try:
        wanted = BrowseFilter(
            query=query.get("q", "")[:500],
            tier=int(query["tier"]) if query.get("tier") else None,
            category=query.get("category") or None,
            project=query.get("project") or None,
            archived=query.get("archived") or "live",
            sort=query.get("sort") or "score",
            page=int(query.get("page") or 1),
        )
        wanted.check()
    except ValueError as exc:
        raise web.HTTPBadRequest(text=f"Bad filter: {exc}") from None
    return wanted


async def person(request: web.Request) -> web.Response:
    """One person: profile, the memory list (search, filters, sort, pages), the add form."""
    ctx = request.app[CONTEXT]
    owner = await known_owner(request)
    wanted = _filter_from(dict(request.query))
    page = await ctx.engine.browse.page(owner, wanted)
    categories, projects = await ctx.engine.browse.choices(owner)
    base = {k: v for k, v in request.query.items() if k != "page" and v}
    return render(
        request,
        "person.html",
        owner=owner,
        profile=await ctx.engine.profile(owner),
        stats=await ctx.engine.stats(owner),
        page=page,
        wanted=wanted,
        query_without_page=base,
        categories=sorted(set(categories) | set(CATEGORIES)),
        projects=projects,
        sorts=SORTS,
        archived_choices=ARCHIVED_CHOICES,
    )


async def memory(request: web.Request) -> web.Response:
    """One memory: content, source, supersede chain, access count, decay score; edit and remove."""
    ctx = request.app[CONTEXT]
    owner = await known_owner(request)
    history = await ctx.engine.browse.history(owner, memory_id_of(request))
    if history is None:
        raise web.HTTPNotFound(text="This person has no such memory.")
    categories, projects = await ctx.engine.browse.choices(owner)
    return render(
        request,
        "memory.html",
        owner=owner,
        history=history,
        m=history.memory,
        categories=sorted(set(categories) | set(CATEGORIES)),
        projects=projects,
    )


async def purge_confirm(request: web.Request) -> web.Response:
    """Ask before deleting a memory for good."""
    ctx = request.app[CONTEXT]
    owner = await known_owner(request)
    mem = await ctx.engine.get(owner, memory_id_of(request))
    if mem is None:
        raise web.HTTPNotFound(text="This person has no such memory.")
    return render(request, "purge.html", owner=owner, m=mem)


def _day(value: str | None, default: date) -> date:
    if not value:
        return default
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise web.HTTPBadRequest(text="Dates are written YYYY-MM-DD.")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{value} is not a date.") from None


async def time_page(request: web.Request) -> web.Response:
    """Episodes by day, 30 days a page (newest first), the scratchpad to read and edit, and a search of
    what was said (every kept conversation turn, with the turns around each hit)."""
    ctx = request.app[CONTEXT]
    owner = await known_owner(request)
    until = _day(request.query.get("until"), utcnow().date())
    since = until - timedelta(days=DAYS_PER_TIME_PAGE - 1)
    events = await ctx.engine.events.find(
        owner, since=since.isoformat(), until=until.isoformat(), limit=EVENTS_PER_TIME_PAGE
    )
    days: dict[str, list] = {}
    for event in events:
        days.setdefault(event.event_date, []).append(event)
    said = request.query.get("said", "").strip()[:500]
    hits = await ctx.engine.conversation.search(owner, said, limit=TURN_HITS) if said else []
    return render(
        request,
        "time.html",
        owner=owner,
        days=sorted(days.items(), reverse=True),
        since=since,
        until=until,
        older=(since - timedelta(days=1)).isoformat(),
        newer=(until + timedelta(days=DAYS_PER_TIME_PAGE)).isoformat() if until < utcnow().date() else "",
        scratchpad=await ctx.engine.scratchpad.get(owner),
        said=said,
        hits=hits,
        kept_turns=await ctx.engine.conversation.count(owner),
    )


async def operations(request: web.Request) -> web.Response:
    """Buffered turns (extract now), dead letters (retry), export, and the two charts."""
    ctx: DashboardContext = request.app[CONTEXT]
    owner = await known_owner(request)
    counts = await ctx.engine.stats(owner)  # the counts every view shows (memory/counts.py)
    samples = list(ctx.timing.samples_ms) if ctx.timing is not None else []
    return render(
        request,
        "operations.html",
        owner=owner,
        buffered=await ctx.engine.browse.buffered(owner),
        buffered_count=counts["buffered_turns"],
        dead=await ctx.engine.browse.dead_letters(owner),
        dead_count=counts["dead_letters"],
        can_extract=ctx.extraction is not None,
        growth_chart=charts.growth_svg(await ctx.engine.browse.growth(owner)),
        latency=charts.latency_summary(samples),
        latency_chart=charts.latency_svg(samples),
        serving_replies=ctx.timing is not None,
    )


async def export(request: web.Request) -> web.Response:
    """The person's whole memory as a JSON or Markdown download."""
    ctx = request.app[CONTEXT]
    owner = await known_owner(request)
    fmt = request.match_info["fmt"]
    done = await export_memory(ctx.engine, owner, fmt)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", owner).strip("_") or "owner"
    return web.Response(
        text=done.text,
        content_type="application/json" if fmt == "json" else "text/markdown",
        charset="utf-8",
        headers={"Content-Disposition": f'attachment; filename="tierclaw-memory-{safe}.{fmt}"'},
    )
