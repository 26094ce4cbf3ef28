"""Keeping python-telegram-bot's logs useful and free of secrets: no bot token in any line."""

from __future__ import annotations

import logging

LOGGERS = ("", "telegram", "httpx", "httpcore", "tornado", "asyncio", "tierclaw")
# How PTB's Bot.get_updates starts its CRITICAL line when an update does not parse.
PTB_PARSE_DUMP = "Error while parsing updates!"


class Redact(logging.Filter):
    """Replaces the secrets in log records of the libraries and tierclaw while the channel runs.

    A filter on a logger applies only to records created on that very logger, so it is put on every
    existing logger of those libraries (PTB and httpx create theirs at import).
    """

    def __init__(self, secrets_: tuple[str, ...]) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets_ if s)
        self._loggers: list[logging.Logger] = []

    def install(self) -> None:
        httpx_log = logging.getLogger("httpx")  # logs every request URL, token included, at INFO
        if httpx_log.level == logging.NOTSET:
            httpx_log.setLevel(logging.WARNING)
        names = {name for name in logging.root.manager.loggerDict if name.split(".")[0] in LOGGERS}
        self._loggers = [logging.getLogger(name) for name in sorted(names | set(LOGGERS))]
        for logger in self._loggers:
            logger.addFilter(self)

    def remove(self) -> None:
        for logger in self._loggers:
            logger.removeFilter(self)
        self._loggers = []

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        if message.startswith(PTB_PARSE_DUMP):
            return False  # PTB dumps the whole batch, message texts included; the channel logs one line
        if any(s in message for s in self.secrets):
            record.msg, record.args = self.clean(message), None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            if any(s in text for s in self.secrets):
                record.exc_text = self.clean(text)
        return True

    def clean(self, text: str) -> str:
        """``text`` with every secret replaced."""
        for secret in self.secrets:
            text = text.replace(secret, "<redacted>")
        return text
