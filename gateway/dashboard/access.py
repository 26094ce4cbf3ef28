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

Sessions live in this process only: restarting the page asks for the URL with the token again.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from memory.files.private import private_dir, write_private

TOKEN_FILE = "dashboard_token"
SESSION_COOKIE = "tierclaw_session"
CSRF_FIELD = "csrf"
SESSION_SECONDS = 12 * 3600  # a session idle this long must open the URL with the token again
MAX_SESSIONS = 1000  # oldest dropped beyond this (each holds two short strings)
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


@dataclass(slots=True)
class Session:
    """One browser that showed the token: its CSRF token and when it was last used (monotonic)."""

    csrf: str
    seen: float = field(default_factory=time.monotonic)
    flash: list[str] = field(default_factory=list)  # one-time messages for the next page it opens


class Sessions:
    """The token check and the sessions it opens (in this process)."""

    def __init__(self, token: str) -> None:
        self._token = token
        self._sessions: dict[str, Session] = {}

    def token_matches(self, offered: str) -> bool:
        """Constant-time comparison with the access token."""
        return hmac.compare_digest(offered.encode(), self._token.encode())

    def open(self) -> tuple[str, Session]:
        """A new session (after the token was shown): its cookie value and the session."""
        self._expire()
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        sid = secrets.token_urlsafe(32)
        session = Session(csrf=secrets.token_urlsafe(32))
        self._sessions[sid] = session
        return sid, session

    def get(self, sid: str | None) -> Session | None:
        """The live session of cookie value ``sid``, refreshed; None when unknown or expired."""
        if not sid:
            return None
        self._expire()
        session = self._sessions.get(sid)
        if session is not None:
            session.seen = time.monotonic()
        return session

    def _expire(self) -> None:
        cutoff = time.monotonic() - SESSION_SECONDS
        for sid in [s for s, v in self._sessions.items() if v.seen < cutoff]:
            del self._sessions[sid]


def csrf_matches(session: Session, offered: str) -> bool:
    """Whether a form's CSRF field is the session's (constant time)."""
    return bool(offered) and hmac.compare_digest(offered.encode(), session.csrf.encode())
