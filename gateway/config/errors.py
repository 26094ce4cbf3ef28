"""Config error messages: name the field in JSON spelling, say what is expected and what was given."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import (
    BaseModel,
)

from gateway.config.env import MEMORY_PROVIDER_PATH
from gateway.config.schema import Config
from gateway.config.values import SECRET_KEYS


class ConfigError(ValueError):
    """The configuration cannot be used; the message says where, what is expected and what was given."""


# --------------------------------------------------------------------------- error messages


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _shown(value: Any) -> str:
    """A short JSON-ish rendering of a scalar the user gave (callers never pass secrets)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


def _expected(err: Mapping[str, Any]) -> str:
    """What the field wants, in words, from a pydantic error."""
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in ("value_error", "assertion_error"):
        return str(ctx.get("error", err["msg"]))
    bounds = {
        "greater_than": ">",
        "greater_than_equal": ">=",
        "less_than": "<",
        "less_than_equal": "<=",
    }
    if kind in bounds:
        limit = next(iter(ctx.values()), "?")
        return f"expected a number {bounds[kind]} {limit}"
    simple = {
        "int_parsing": "expected an integer",
        "int_type": "expected an integer",
        "int_from_float": "expected an integer (no fraction)",
        "float_parsing": "expected a number",
        "float_type": "expected a number",
        "finite_number": "expected a finite number",
        "bool_parsing": "expected true or false",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "string_too_short": "expected a non-empty string",
        "list_type": "expected a list",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "model_attributes_type": "expected an object",
    }
    if kind in simple:
        return simple[kind]
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected', '?')}"
    msg = str(err["msg"])
    return "expected " + msg[0].lower() + msg[1:] if msg else "invalid value"


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """JSON keys allowed in the object at ``loc`` (for "did you mean"), or [] when it is not a model."""
    model: Any = Config
    for part in loc:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return []
        field = next((f for n, f in model.model_fields.items() if part in (n, f.alias)), None)
        if field is None:
            return []
        model = field.annotation
        args = [a for a in getattr(model, "__args__", ()) if a is not type(None)]
        if len(args) == 1:  # X | None
            model = args[0]
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [f.alias or n for n, f in model.model_fields.items()]
    return []


# Configs of similar gateways carry a "proxy" key; tierclaw takes the proxy from the environment instead.
PROXY_KEYS = frozenset({"proxy", "proxies", "proxyurl", "http_proxy", "https_proxy"})
PROXY_HINT = (
    "there is no proxy setting in the config: set HTTPS_PROXY (and NO_PROXY for local addresses) in the "
    "environment — the model, embedding, Telegram and Feishu clients all use it"
)


def describe_error(
    err: Mapping[str, Any], applied: Mapping[tuple[str, ...], str], created_by: str | None
) -> list[str]:
    """The lines for one validation error: ``field: expected …; got …`` (secrets never shown).

    A validator that finds several problems joins them with newlines; each becomes its own line.
    """
    loc = tuple(str(p) for p in err["loc"])
    field = ".".join(loc) or "(top level)"
    value = err.get("input")
    if err["type"] == "extra_forbidden":
        # Never echo the value: a misspelt secret key ("apikey") still holds the secret.
        keys = _keys_at(loc[:-1])
        close = difflib.get_close_matches(loc[-1], keys, n=1)
        if str(loc[-1]).lower() in PROXY_KEYS:
            problems = [PROXY_HINT]
        elif close:
            problems = [f"unknown key; did you mean {close[0]!r}?"]
        else:
            problems = ["unknown key" + (f"; expected one of: {', '.join(keys)}" if keys else "")]
    else:
        got = ""
        if isinstance(value, dict | list):
            if err["type"] != "value_error":  # a model/field validator's message already says what is wrong
                got = f"; got {kind_of(value)}"
        elif not any(p in SECRET_KEYS for p in loc):
            got = f"; got {_shown(value)}"
        problems = [line + got for line in _expected(err).splitlines()]
    variable = next((name for path, name in applied.items() if loc[: len(path)] == path), None)
    if variable is not None:
        return [f"{variable} ({field}): {problem}" for problem in problems]
    note = ""
    if created_by is not None and loc[:2] == MEMORY_PROVIDER_PATH:
        note = f" (memory.provider was copied from provider because {created_by} is set)"
    return [f"{field}: {problem}{note}" for problem in problems]
