"""The memory page's web server: routes, the access guard in front of every one of them, start and stop.

``start_for`` serves it over a running ``Runtime``'s memory: what ``tierclaw dashboard`` and ``tierclaw
gateway`` (``dashboard.enabled``) call; ``start_dashboard`` returns the running server and the ready URL
with the access token. The guard
(``gateway/dashboard/access.py`` explains each rule) runs before any handler: Host check, token
exchange, session cookie, CSRF on POST; every response gets headers that forbid scripts, framing,
sniffing, caching and referrers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from gateway.dashboard import actions, attachments, pages, reminders_page
from gateway.dashboard.access import (
    CSRF_FIELD,
    SESSION_COOKIE,
    Session,
    Sessions,
    access_token,
    check_bind,
    csrf_matches,
    host_header_allowed,
)
from gateway.dashboard.context import CONTEXT, FORM, SESSION, DashboardContext, render, templates
from gateway.dashboard.finding import PAGE_HEADER, forget_page, page_id, record_page
from memory.pipeline.buffer import ExtractionBuffer

if TYPE_CHECKING:
    from gateway.app import Runtime

log = logging.getLogger("tierclaw.dashboard")

STATIC_DIR = Path(__file__).parent / "static"
SESSIONS: web.AppKey[Sessions] = web.AppKey("sessions", Sessions)
BOUND_HOST: web.AppKey[str] = web.AppKey("bound_host", str)
PAGE_ID: web.AppKey[str] = web.AppKey("page_id", str)
# No script runs on these pages and nothing is loaded from elsewhere; forms post only to this server.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Let a request through only with a valid session (and on POST its CSRF token)."""
    if not host_header_allowed(request.host, request.app[BOUND_HOST]):
        log.warning("[dashboard] refused a request for host %r", request.host)
        return web.Response(status=400, text="unexpected Host header\n")
    if request.path.startswith("/static/"):
        return await handler(request)
    sessions = request.app[SESSIONS]
    token = request.query.get("token")
    if token is not None:
        if not sessions.token_matches(token):
            log.warning("[dashboard] wrong access token from %s", request.remote)
            return _unauthorized(request, "That access token is not this server's.")
        sid, request[SESSION] = await sessions.open()
        clean = request.rel_url.with_query([(k, v) for k, v in request.query.items() if k != "token"])
        redirect = web.Response(status=303, headers={"Location": str(clean)})
        redirect.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="Strict", path="/")
        return redirect
    session = await sessions.get(request.cookies.get(SESSION_COOKIE))
    if session is None:
        return _unauthorized(request, "This page needs the access token.")
    request[SESSION] = session
    try:
        return await _serve(request, handler, session)
    finally:
        await sessions.save(session)  # its one-time messages, when the page added or showed some


async def _serve(request: web.Request, handler: Handler, session: Session) -> web.StreamResponse:
    """The handler behind the guard: a POST's CSRF check, errors as a plain page, ``Server-Timing``."""
    if request.method == "POST":
        form = await request.post()
        offered = form.get(CSRF_FIELD)
        if not isinstance(offered, str) or not csrf_matches(session, offered):
            log.warning("[dashboard] refused a POST without a valid CSRF token: %s", request.path)
            return render(
                request, "error.html", 403, title="Forbidden", message="The form's CSRF token is missing."
            )
        request[FORM] = form
    started = time.perf_counter()
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return render(request, "error.html", exc.status, title=exc.reason, message=exc.text or exc.reason)
    except Exception as exc:  # the database failing, a bug: one line (never memory text), a plain page
        log.warning("[dashboard] %s %s failed: %s", request.method, request.path, type(exc).__name__)
        log.debug("[dashboard] failure details", exc_info=True)
        message = "Something failed while making this page; the gateway's log has one line about it."
        return render(request, "error.html", 500, title="Server error", message=message)
    # How long the page took to make (bench/dashboard_page.py reads it; so can the browser's devtools).
    response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
    return response


def _unauthorized(request: web.Request, why: str) -> web.Response:
    return render(request, "unauthorized.html", 401, why=why)


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    # Which token this page takes (a fingerprint): `tierclaw dashboard` finds a running page by it.
    response.headers[PAGE_HEADER] = request.app[PAGE_ID]


def build_app(ctx: DashboardContext, token: str, bound_host: str) -> web.Application:
    """The page's aiohttp application (not yet listening)."""
    if ctx.templates is None:
        ctx.templates = templates()
    app = web.Application(middlewares=[guard], client_max_size=1024 * 1024)
    app[CONTEXT] = ctx
    app[SESSIONS] = Sessions(token, ctx.engine.store.page)
    app[BOUND_HOST] = bound_host
    app[PAGE_ID] = page_id(token)
    app.on_response_prepare.append(_security_headers)
    app.router.add_static("/static/", STATIC_DIR)
    pages.add_routes(app.router)
    actions.add_routes(app.router)
    attachments.add_routes(app.router)
    reminders_page.add_routes(app.router)
    return app


@dataclass(slots=True)
class RunningDashboard:
    """A listening page: its URL with the token, and how to stop it."""

    url: str
    runner: web.AppRunner
    note: Path | None = None  # where this process noted that it serves the page (``finding.record_page``)

    async def stop(self) -> None:
        forget_page(self.note)
        await self.runner.cleanup()


async def start_dashboard(
    ctx: DashboardContext, *, token: str, host: str, port: int, allow_remote: bool = False
) -> RunningDashboard:
    """Serve the page on ``host:port`` (0: any free port); raises ``DashboardAccessError`` for a remote
    address without ``allow_remote`` and OSError when the port cannot be taken."""
    check_bind(host, port, allow_remote)
    runner = web.AppRunner(build_app(ctx, token, host), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    actual = runner.addresses[0][1] if runner.addresses else port  # port 0: the one the system chose
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{actual}/?token={token}"
    log.info("[dashboard] serving on http://%s:%d/", shown, actual)
    return RunningDashboard(url, runner)


async def start_for(
    runtime: Runtime, *, host: str, port: int, allow_remote: bool, with_replies: bool
) -> RunningDashboard:
    """Serve the page over ``runtime``'s memory (``with_replies``: the gateway answers messages, so the
    page shows its reply timings)."""
    engine = runtime.engine
    ctx = DashboardContext(
        engine=engine,
        buffer=ExtractionBuffer(engine.store.buffer),
        extraction=runtime.assistant.extraction,
        timing=runtime.assistant.memory_timing if with_replies else None,
        search_mode="hybrid" if engine.embedder is not None else "keyword",
    )
    config = runtime.config
    token = await access_token(config.db_path().parent, engine.store.page, on_file=config.memory_on_file())
    page = await start_dashboard(ctx, token=token, host=host, port=port, allow_remote=allow_remote)
    page.note = record_page(config.db_path().parent, page.url.split("?")[0])
    return page
