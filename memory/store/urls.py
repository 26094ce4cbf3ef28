"""Database URLs: telling a PostgreSQL URL from a file path, and showing one without its password.

``memory.databaseUrl`` (or ``--db``) holds either a path to the SQLite file or a ``postgresql://`` URL
(docs/architecture.md, "Storage"). A URL may carry a password: anything shown or logged goes through
``masked`` first.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

URL_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(target: str) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a SQLite file."""
    return target.strip().lower().startswith(URL_SCHEMES)


def masked(url: str) -> str:
    """The URL with its password (if any) shown as ``***``; a path is returned unchanged."""
    if not is_database_url(url):
        return url
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    except ValueError:
        return url.split("://", 1)[0] + "://***"
