"""Value types of the config file: durations, clock times, week days, and how secrets are shown."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    PlainSerializer,
    SecretStr,
    SerializationInfo,
)

# --------------------------------------------------------------------------- value types


_DURATION_RE = re.compile(
    r"^(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s)?$", re.IGNORECASE
)
DURATION_HINT = 'a duration with its unit, such as "3m", "90s", "1h", "1h30m"'


def parse_duration(value: Any) -> float:
    """Seconds from ``"3m"``, ``"90s"``, ``"1h30m"``. A bare number is refused: 5 could mean seconds or
    minutes, and the person who wrote it meant one of them (issue 37)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f'expected {DURATION_HINT}, not a bare number (write "{value:g}s" or "{value:g}m")')
    if not isinstance(value, str):
        raise ValueError(f"expected {DURATION_HINT}")
    text = value.strip()
    match = _DURATION_RE.match(text)
    if not text or match is None or not any(match.groupdict().values()):
        raise ValueError(f"expected {DURATION_HINT}")
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    seconds = parts.get("h", 0.0) * 3600 + parts.get("m", 0.0) * 60 + parts.get("s", 0.0)
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"expected a duration greater than 0 ({DURATION_HINT})")
    return seconds


def parse_wait(value: Any) -> float:
    """A duration that may be 0 (``"0s"``, ``0``): "do not wait" is a sensible choice for a wait."""
    if not isinstance(value, bool) and value in (0, "0", "0s", "0m", "0h"):
        return 0.0
    return parse_duration(value)


def parse_offset(value: Any) -> float:
    """A signed duration: ``"25s"``, ``"-25s"``, ``"-1m30s"``, ``0`` or a number of seconds (a clock
    may run behind as well as ahead)."""
    if isinstance(value, str) and value.strip().startswith("-"):
        return -parse_wait(value.strip()[1:])
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        return -parse_wait(-value)
    return parse_wait(value)


def format_duration(seconds: float) -> str:
    """The shortest ``1h30m``-style spelling of ``seconds`` (what ``parse_duration`` reads back)."""
    if seconds != int(seconds):
        return f"{seconds:g}s"
    if seconds < 0:
        return "-" + format_duration(-seconds)
    rest = int(seconds)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return out or "0s"


def parse_clock(value: Any) -> str:
    """``"HH:MM"`` (00:00..23:59); ``"3:00"`` is accepted and stored as ``"03:00"``."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", value)
        if match and int(match[1]) < 24 and int(match[2]) < 60:
            return f"{int(match[1]):02d}:{match[2]}"
    raise ValueError('expected a time of day "HH:MM" between 00:00 and 23:59')


_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def parse_day(value: Any) -> str:
    """``"mon"``..``"sun"``; ``"Mon"`` and ``"monday"`` are accepted too."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _DAYS or text in _DAY_NAMES:
            return text[:3]
    raise ValueError('expected a day of the week: "mon", "tue", "wed", "thu", "fri", "sat" or "sun"')


def secret_to_json(value: SecretStr, info: SerializationInfo) -> str:
    """JSON output masks secrets unless the caller asks for them (``context={"secrets": "reveal"}``)."""
    context = info.context if isinstance(info.context, dict) else {}
    if context.get("secrets") == "reveal":
        return value.get_secret_value()
    return masked_secret(value)


Duration = Annotated[
    float,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
# A wait: like Duration, and 0 allowed.
Wait = Annotated[
    float,
    BeforeValidator(parse_wait),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
# A signed duration (a clock running behind or ahead).
Offset = Annotated[
    float,
    BeforeValidator(parse_offset),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
Clock = Annotated[str, BeforeValidator(parse_clock)]
Weekday = Annotated[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"], BeforeValidator(parse_day)]
Secret = Annotated[SecretStr, PlainSerializer(secret_to_json, return_type=str, when_used="json")]

# Fields whose values are never echoed in an error message (JSON spelling of the last path element).
SECRET_KEYS = frozenset(
    {"apiKey", "token", "appSecret", "verificationToken", "encryptKey", "secretToken", "databaseUrl"}
)


def check_database_url(value: str) -> str:
    """``memory.databaseUrl``: empty (the SQLite file at ``memory.dbPath``) or a ``postgresql://`` URL."""
    from memory.store.urls import is_database_url

    value = value.strip()
    if value and not is_database_url(value):
        raise ValueError("expected empty (SQLite at memory.dbPath) or postgresql://user[:password]@host/db")
    return value


def database_url_to_json(value: str, info: SerializationInfo) -> str:
    """JSON output shows the URL with its password masked unless the caller asks for it."""
    from memory.store.urls import masked

    context = info.context if isinstance(info.context, dict) else {}
    return value if context.get("secrets") == "reveal" else masked(value)


DatabaseUrl = Annotated[
    str,
    BeforeValidator(lambda v: check_database_url(v) if isinstance(v, str) else v),
    PlainSerializer(database_url_to_json, return_type=str, when_used="json"),
]


def masked_secret(value: SecretStr | str) -> str:
    """``(not set)``, ``****``, or ``…`` + the last 4 characters when the secret is long enough to spare."""
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if not text:
        return "(not set)"
    if len(text) >= 12:
        return "…" + text[-4:]
    return "****"
