"""Who may open the memory page, and how a request proves it.

The page shows every person's memories, so it is locked the way Jupyter locks a notebook server:

1. A random access token lives in ``dashboard_token`` beside the memory database (0600, made once). The
   ready URL carries it: ``http://127.0.0.1:P/?token=…``.
2. Opening that URL exchanges the token for a session: a random id in an HttpOnly, SameSite=Strict
   cookie (scripts cannot read it, other sites cannot send it), and the browser is redirected to the same
   page without the token, so it does not stay in the address bar or the history.
3. Every state-changing request (POST) must carry the session's CSRF token in a form field.
4. Only loopback addresses are served unless the operator says otherwise (``REMOTE_RISK`` is what they
   are told), and on loopback the ``Host`` header must name loopback too: a web page cannot reach the
   server through a DNS name it controls (DNS rebinding).

Sessions live in the memory database (``page_sessions``, a cookie kept only as its SHA-256), on both stores:
one code path, they survive a restart, and several gateways on one PostgreSQL database share them. The
token stays in its file on SQLite (the operator reads it there) and is in the database on PostgreSQL,
where replicas share no directory (README.md, "Running on PostgreSQL").
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from memory.clock import from_db, to_db, utcnow
from memory.files.private import private_dir, write_private
from memory.store.protocol import PageAccessRowsAPI

TOKEN_FILE = "dashboard_token"
TOKEN_SECRET = "access_token"  # its name in the database (PostgreSQL)
SESSION_COOKIE = "tierclaw_session"
CSRF_FIELD = "csrf"
SESSION_SECONDS = 12 * 3600  # a session idle this long must open the URL with the token again
MAX_SESSIONS = 1000  # least recently used dropped beyond this
TOUCH_EVERY_SECONDS = 60  # a session's last use is written at most this often
REMOTE_RISK = (
    "it shows every person's memories to whoever can reach {host}:{port} and holds the token, and it "
    "speaks plain HTTP: the token and the session cookie cross the network unencrypted. Prefer an SSH "
    "tunnel (ssh -L {port}:127.0.0.1:{port} this-host) to the default 127.0.0.1"
)


class DashboardAccessError(Exception):
    """The page cannot be served as asked (a remote address without the flag, an unusable token file)."""


def is_loopback(host: str) -> bool:
    """True for localhost and the loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip().lower().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, port: int, allow_remote: bool) -> None:
    """Refuse a non-loopback address unless ``allow_remote``; the message says why it is risky."""
    if not is_loopback(host) and not allow_remote:
        raise DashboardAccessError(
            f"refusing to serve the memory page on {host}: "
            + REMOTE_RISK.format(host=host, port=port or "PORT")
            + ". Pass --allow-remote (dashboard.allowRemote) to serve it there anyway."
        )


def host_header_allowed(header: str, bound_host: str) -> bool:
    """Whether a request's ``Host`` header may reach a server bound to ``bound_host``.

    Bound to loopback, only loopback names are accepted (no DNS rebinding); bound elsewhere (the
    operator allowed remote access), any host is.
    """
    if not is_loopback(bound_host):
        return True
    try:
        name = urlsplit("//" + header).hostname or ""
    except ValueError:
        return False
    return is_loopback(name)


def load_or_create_token(data_dir: Path) -> str:
    """The access token in ``data_dir/dashboard_token``, made (0600, in a 0700 directory) when absent."""
    path = data_dir / TOKEN_FILE
    try:
        token = path.read_text(encoding="utf-8").strip() if path.exists() else ""
        if not token:
            private_dir(data_dir)
            token = secrets.token_urlsafe(32)
            write_private(path, token + "\n")
    except OSError as exc:
        raise DashboardAccessError(f"cannot read or create the access token {path}: {exc}") from exc
    return token


async def access_token(data_dir: Path, rows: PageAccessRowsAPI, *, on_file: bool) -> str:
    """The page's access token: on the SQLite file, ``data_dir/dashboard_token`` as always (the operator
    reads it there); on PostgreSQL the one in the database, which every gateway on it shares."""
    if on_file:
        return load_or_create_token(data_dir)
    return await rows.secret(TOKEN_SECRET, secrets.token_urlsafe(32))


@dataclass(slots=True)
class Session:
    """One browser that showed the token: its CSRF token and its one-time messages for the next page."""

    csrf: str
    sid_hash: str = ""
    flash: list[str] = field(default_factory=list)
    stored_flash: tuple[str, ...] = ()  # what the database holds, so only a change is written


class Sessions:
    """The token check and the sessions it opens, kept in the memory database (both stores): they
    survive a restart, and any gateway on one PostgreSQL database knows a session another opened."""

    def __init__(self, token: str, rows: PageAccessRowsAPI, clock: Callable[[], datetime] = utcnow) -> None:
        self._token = token
        self._rows = rows
        self._clock = clock

    def token_matches(self, offered: str) -> bool:
        """Constant-time comparison with the access token."""
        return hmac.compare_digest(offered.encode(), self._token.encode())

    async def open(self) -> tuple[str, Session]:
        """A new session (after the token was shown): its cookie value and the session."""
        sid = secrets.token_urlsafe(32)
        session = Session(csrf=secrets.token_urlsafe(32), sid_hash=_hashed(sid))
        now = self._clock()
        idle_since = to_db(now - timedelta(seconds=SESSION_SECONDS))
        await self._rows.open_session(session.sid_hash, session.csrf, to_db(now), MAX_SESSIONS, idle_since)
        return sid, session

    async def get(self, sid: str | None) -> Session | None:
        """The live session of cookie value ``sid``, refreshed; None when unknown or expired."""
        if not sid:
            return None
        now = self._clock()
        since = to_db(now - timedelta(seconds=SESSION_SECONDS))
        found = await self._rows.session(_hashed(sid), since)
        if found is None:
            return None
        if from_db(found[2]) < now - timedelta(seconds=TOUCH_EVERY_SECONDS):  # not a write per request
            await self._rows.touch(_hashed(sid), to_db(now))
        flash = [str(m) for m in json.loads(found[1])]
        return Session(csrf=found[0], sid_hash=_hashed(sid), flash=flash, stored_flash=tuple(flash))

    async def save(self, session: Session) -> None:
        """Write the session's one-time messages when a page added or showed some."""
        if tuple(session.flash) != session.stored_flash:
            await self._rows.set_flash(session.sid_hash, json.dumps(session.flash, ensure_ascii=False))
            session.stored_flash = tuple(session.flash)


def _hashed(sid: str) -> str:
    """What the database keeps of a cookie value: its SHA-256 (a stolen row opens nothing)."""
    return hashlib.sha256(sid.encode()).hexdigest()


def csrf_matches(session: Session, offered: str) -> bool:
    """Whether a form's CSRF field is the session's (constant time)."""
    return bool(offered) and hmac.compare_digest(offered.encode(), session.csrf.encode())
