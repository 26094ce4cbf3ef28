"""The memory page's reminders of one person (README "Reminders"): waiting ones with their next time in
the person's zone and a Cancel button, those not delivered (refused for good, given up on, or missed while
everything was down) with the reason, and the latest delivered and cancelled ones."""

from __future__ import annotations

from aiohttp import web

from gateway.dashboard.context import CONTEXT, person_url, redirect, render, say
from gateway.dashboard.pages import known_owner
from gateway.reminders.book import ReminderBook, local_of

DONE_SHOWN = 30


def add_routes(router: web.UrlDispatcher) -> None:
    """The reminders page and its one action."""
    router.add_get("/people/{owner}/reminders", reminders_page)
    router.add_post("/people/{owner}/reminders/{reminder_id}/cancel", cancel)


async def reminders_page(request: web.Request) -> web.Response:
    owner = await known_owner(request)
    rows = request.app[CONTEXT].engine.store.reminders
    zone = await rows.zone(owner)
    waiting = await rows.of_owner(owner, ("pending",))
    failed = await rows.of_owner(owner, ("failed", "missed"), limit=DONE_SHOWN)
    done = await rows.of_owner(owner, ("delivered", "cancelled"), limit=DONE_SHOWN)
    return render(
        request,
        "reminders.html",
        owner=owner,
        zone=zone or "the default (not set by the person)",
        waiting=[(r, local_of(r)) for r in waiting],
        failed=[(r, local_of(r)) for r in failed],
        done=[(r, local_of(r)) for r in done],
    )


async def cancel(request: web.Request) -> web.StreamResponse:
    owner = await known_owner(request)
    raw = request.match_info["reminder_id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise web.HTTPNotFound(text="No such reminder.")
    row = await ReminderBook(request.app[CONTEXT].engine.store).cancel(owner, int(raw))
    if row is None:
        raise web.HTTPNotFound(text="This person has no such waiting reminder.")
    say(request, f"Cancelled reminder #{row.id}: {row.text}")
    raise redirect(person_url(owner, "reminders"))
