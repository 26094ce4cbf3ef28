"""A channel that loses its server says so once, in plain words, and once more when it is back.

Retries are silent: a server that is gone for an hour must not write a line a second (lark's websocket
client does, at ERROR). ``Outage`` keeps the state — down since when, already said — and
``plain_reason`` turns a library's exception chain (httpx, requests/urllib3, websockets, PTB) into what
a person can act on: refused, DNS, TLS, a refused credential, a timeout (channels/README.md).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

# (pattern over the exception chain's text, lower-case) -> what to say. Numbers and short words are
# matched whole, so a port such as 40153 or a host such as "tlsproxy" is not taken for a 401 or TLS.
_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), reason)
    for pattern, reason in (
        (r"name or service not known|nodename nor servname|name resolution|getaddrinfo failed|"
         r"no address associated", "DNS lookup failed"),
        (r"certificate|\bssl|sslerror|\btls\b", "TLS handshake failed"),
        (r"connection refused|errno 111\b|connectionrefused", "connection refused"),
        (r"(?<![\d.:])401(?!\d)|unauthorized|invalid ?token|rejected the token", "credentials refused (401)"),
        (r"timed out|timeout", "no answer (timed out)"),
        (r"reset by peer|connection closed|remote end closed|disconnected|broken pipe|no close frame|"
         r"remoteprotocolerror", "connection lost"),
    )
)  # fmt: skip


def _chain(exc: BaseException) -> str:
    """Every exception in ``exc``'s cause/context chain as "Type: text", lower-cased, joined."""
    parts, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return " | ".join(parts).casefold()


def plain_reason(exc: BaseException) -> str:
    """What went wrong, in words a person can act on ("connection refused", "DNS lookup failed", …);
    the exception's type and first line when it is none of those."""
    text = _chain(exc)
    for pattern, reason in _REASONS:
        if pattern.search(text):
            return reason
    first = (str(exc).splitlines() or [""])[0][:160]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class Outage:
    """One line when a connection goes (``failed``), one when it is back (``recovered``), none per retry.

    ``what`` names the server in the lines ("the Bot API at http://…"). ``backoff(n)`` is the wait
    before retry ``n`` (1, 2, 4 … up to ``max_seconds``).
    """

    def __init__(
        self,
        channel: str,
        what: str,
        log: logging.Logger,
        *,
        base_seconds: float = 1.0,
        max_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.channel = channel
        self.what = what
        self.log = log
        self.base_seconds = base_seconds
        self.max_seconds = max_seconds
        self.clock = clock
        self.since: float | None = None  # when the outage began (said), None while connected
        self.lost_at: float | None = None  # a connection dropped, not said yet (``lost``)
        self.failures = 0

    @property
    def down(self) -> bool:
        return self.since is not None

    def lost(self) -> None:
        """A connection dropped: nothing is said yet. A failed reconnect then says why it stays down; a
        reconnect that works at once says "reconnected after N s" alone."""
        if self.since is None and self.lost_at is None:
            self.lost_at = self.clock()

    def failed(self, exc: BaseException, detail: str = "") -> None:
        """A connection attempt failed: the first one of an outage is logged, the rest are counted."""
        self.failures += 1
        if self.since is not None:
            return
        self.since = self.lost_at if self.lost_at is not None else self.clock()
        self.lost_at = None
        reason = detail or plain_reason(exc)
        self.log.warning(
            "[%s] lost %s: %s; retrying with backoff (one line when it is back)", self.channel, self.what,
            reason,
        )  # fmt: skip

    def recovered(self) -> float | None:
        """Connected again: logs "reconnected after N s" once; returns the outage's length (None if
        there was none)."""
        began = self.since if self.since is not None else self.lost_at
        if began is None:
            return None
        lasted = self.clock() - began
        self.since, self.lost_at, self.failures = None, None, 0
        self.log.warning("[%s] reconnected to %s after %.0f s", self.channel, self.what, lasted)
        return lasted

    def backoff(self) -> float:
        """Seconds to wait before the next attempt: doubling from ``base_seconds`` per failure."""
        return min(self.max_seconds, self.base_seconds * 2 ** max(self.failures - 1, 0))
