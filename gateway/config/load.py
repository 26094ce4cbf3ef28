"""Finding, reading and validating the config file (``load_config``)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from gateway.config.env import api_key_source, apply_env, apply_openai_fallback, unknown_variables
from gateway.config.errors import ConfigError, describe_error, kind_of
from gateway.config.paths import CONFIG_ENV, DEFAULT_CONFIG_PATH
from gateway.config.schema import Config

log = logging.getLogger("tierclaw.gateway")
# TIERCLAW_… variables read outside the config overrides (the file's name, the memory CLI's --db default).
KNOWN_ELSEWHERE = (CONFIG_ENV, "TIERCLAW_MEMORY_DB")

# --------------------------------------------------------------------------- loading


def load_config(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read, override from the environment, and validate the configuration.

    The file is ``path``, else ``$TIERCLAW_CONFIG``, else ``~/.tierclaw/config.json``. A file that was asked
    for (either way) must exist; a missing default file means the embedded defaults.
    """
    env = os.environ if env is None else env
    if path is not None:
        file, named_by = Path(path).expanduser(), None
    elif env.get(CONFIG_ENV):
        file, named_by = Path(env[CONFIG_ENV]).expanduser(), CONFIG_ENV
    else:
        file, named_by = Path(DEFAULT_CONFIG_PATH).expanduser(), ""
    raw: dict[str, Any]
    source: Path | None
    if named_by == "" and not file.exists():
        raw, source = {}, None
    else:
        raw, source = _read_json(file, named_by), file.absolute()
    applied, created_by = apply_env(raw, env)
    applied |= apply_openai_fallback(raw, env)
    key_source = api_key_source(raw, applied)
    for name, closest in unknown_variables(env, also_known=KNOWN_ELSEWHERE):
        log.warning(
            "[gateway] environment variable %s is not a tierclaw setting and is ignored%s",
            name,
            f"; did you mean {closest}?" if closest else " (tierclaw status lists the variables)",
        )
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        where = str(source) if source is not None else "configuration (built-in defaults + environment)"
        lines = [line for err in exc.errors() for line in describe_error(err, applied, created_by)]
        if len(lines) == 1:
            raise ConfigError(f"{where}: {lines[0]}") from None
        listed = "\n".join(f"  {line}" for line in lines)
        raise ConfigError(f"{where}: {len(lines)} problems\n{listed}") from None
    config._source = source
    config._api_key_source = key_source
    return config


def _read_json(file: Path, named_by: str | None) -> dict[str, Any]:
    """The file's top-level object; every failure becomes a one-line ConfigError naming the file."""
    hint = f" (from {named_by})" if named_by else ""
    try:
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        msg = f"config file not found: {file}{hint}; create one with `tierclaw onboard`"
        raise ConfigError(msg) from None
    except IsADirectoryError:
        raise ConfigError(f"config path is a directory, not a file: {file}{hint}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}{hint}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a JSON object at the top level, got {kind_of(data)}")
    return data
