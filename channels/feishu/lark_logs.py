"""lark-oapi's "Lark" logger, made to fit the gateway's log: on stderr through the application's
handlers, and without its line per reconnect attempt.

lark's websocket client logs ``connect failed, err: HTTPConnectionPool(…)`` at ERROR on every attempt —
once a second against a server that sets a short reconnect interval, forever. The channel reports an
outage itself, once when it goes and once when it is back (``channels/outage.py``), so those records are
dropped here; ``--log-level DEBUG --debug-libraries`` keeps them (gateway/README.md, "Logs").
"""

from __future__ import annotations

import logging

import lark_oapi as lark

LARK_LOGGER = "Lark"
# What lark logs per connection attempt or loss (lark_oapi/ws/client.py); the channel says it once instead.
RECONNECT_NOISE = (
    "connect failed",
    "receive message loop exit",
    "trying to reconnect",
    "disconnected to",
    "ping failed",
)


class QuietReconnects(logging.Filter):
    """Drops lark's per-attempt connection records unless the logger is at DEBUG (``--debug-libraries``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if logging.getLogger(LARK_LOGGER).getEffectiveLevel() <= logging.DEBUG:
            return True
        try:
            message = record.getMessage()
        except Exception:
            return True
        return not any(noise in message for noise in RECONNECT_NOISE)


def route_lark_logs_through_ours() -> None:
    """lark-oapi logs to *stdout* with its own handler (so every line also printed twice via the root
    logger); drop that handler so its records go through the application's logging, on stderr, and
    quiet its reconnect lines (module doc). Safe to call again."""
    lark_log = logging.getLogger(LARK_LOGGER)
    for handler in list(lark_log.handlers):
        lark_log.removeHandler(handler)
    if not any(isinstance(f, QuietReconnects) for f in lark_log.filters):
        lark_log.addFilter(QuietReconnects())


def lark_level() -> lark.LogLevel:
    """The level to give lark's constructors (each resets the shared "Lark" logger to it): DEBUG when the
    application set that logger to DEBUG (``--log-level DEBUG --debug-libraries``), else WARNING."""
    level = logging.getLogger(LARK_LOGGER).level
    return lark.LogLevel.DEBUG if logging.NOTSET < level <= logging.DEBUG else lark.LogLevel.WARNING
