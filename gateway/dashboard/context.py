"""What every page handler reaches: the running parts (``DashboardContext``) and ``render``.

Handlers live in ``pages.py`` (what a person reads) and ``actions.py`` (what changes memory); both get
the context from the request's app and render Jinja2 templates from ``templates/`` with autoescaping on,
so memory text is always shown as text (a memory saying ``<script>`` is not run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web
from multidict import MultiDictProxy

from gateway.dashboard.access import Session
from memory.text.wording import plural

if TYPE_CHECKING:
    import jinja2

    from gateway.assistant import MemoryTiming
    from memory.engine import MemoryEngine
    from memory.pipeline.buffer import ExtractionBuffer
    from memory.pipeline.extraction import ExtractionService


@dataclass(slots=True)
class DashboardContext:
    """The parts the page works with: the engine, and the gateway's extraction and reply timings when it
    is served by ``tierclaw gateway`` (a standalone ``tierclaw dashboard`` builds its own extraction)."""

    engine: MemoryEngine
    buffer: ExtractionBuffer  # the extraction buffer (on the store's ``buffer``): counts, dead letters
    extraction: ExtractionService | None = None
    timing: MemoryTiming | None = None
    search_mode: str = "keyword"  # "keyword", or "hybrid (<embedder>)" when an embedder is attached
    extract_wait: float = 120.0  # "extract now" waits this long at most (seconds)
    templates: jinja2.Environment | None = field(default=None, repr=False)


CONTEXT: web.AppKey[DashboardContext] = web.AppKey("dashboard", DashboardContext)
# Set by the guard (server.py) before a handler runs: the caller's session, and a POST's form.
SESSION: web.RequestKey[Session] = web.RequestKey("session", Session)
FORM: web.RequestKey[MultiDictProxy] = web.RequestKey("form", MultiDictProxy)


def person_url(owner: str, *parts: str | int) -> str:
    """The page of ``owner`` (quoted: owners hold ``:`` and may hold anything else), and below it."""
    tail = "".join(f"/{quote(str(p), safe='')}" for p in parts)
    return f"/people/{quote(owner, safe='')}{tail}"


def templates() -> jinja2.Environment:
    """The Jinja2 environment of ``templates/`` (autoescaped)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gateway.dashboard", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["person_url"] = person_url
    env.filters["plural"] = plural  # {{ n|plural("memory") }}: the one plural helper (memory/text/wording.py)
    return env


def render(request: web.Request, name: str, status: int = 200, **values: Any) -> web.Response:
    """Template ``name`` with ``values``, the session's CSRF token and its one-time messages."""
    ctx = request.app[CONTEXT]
    assert ctx.templates is not None
    session = request.get(SESSION)
    flash = list(session.flash) if session is not None else []
    if session is not None:
        session.flash.clear()
    html = ctx.templates.get_template(name).render(
        csrf=session.csrf if session is not None else "",
        flash=flash,
        search_mode=ctx.search_mode,
        **values,
    )
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")


def say(request: web.Request, message: str) -> None:
    """A one-time message shown on the next page this session opens (after a redirect)."""
    session = request.get(SESSION)
    if session is not None:
        session.flash.append(message)


def redirect(location: str) -> web.HTTPSeeOther:
    """After a POST: go to ``location`` with GET (a reload does not repeat the action)."""
    return web.HTTPSeeOther(location)
