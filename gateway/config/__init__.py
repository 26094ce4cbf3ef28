"""The gateway's configuration: one JSON file, validated at start, with ``TIERCLAW_…`` environment overrides.

Why it looks like this:

- JSON keys are camelCase (the original myclaw config files keep working); Python attributes are
  snake_case. Every model forbids unknown keys, so a typo such as ``quietGapp`` is an error instead of a
  silently ignored setting.
- Environment overrides are applied to the file's raw dict *before* validation, so a bad ``TIERCLAW_…``
  value is type-checked like the file and its error names the variable.
- ``ConfigError`` messages name the field in JSON spelling, say what is expected and what was given, and
  never contain a secret: secret fields are never echoed, nor is the value of an unknown key (a misspelt
  ``apikey`` still holds a key).
- The memory model may have its own provider; when omitted it reuses the main one.

Modules: ``schema`` (the models and their validators; the channels' in ``channels``, the common base in
``section``), ``values`` (durations, clock times, secrets),
``env`` (``TIERCLAW_…`` overrides), ``errors`` (messages), ``load`` (``load_config``). The public names
are re-exported here, loaded on first use: ``from gateway.config import load_config``; ``paths`` holds
the config file's name and its environment variable.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each public name and the module that defines it. They load on first use (PEP 562), so that a command
# that only needs the config's file name (``tierclaw --help``, ``onboard``'s parser) does not pay for
# pydantic and the schema.
_HOME = {
    "ENV_OVERRIDES": "env",
    "EnvOverride": "env",
    "ConfigError": "errors",
    "CONFIG_ENV": "paths",
    "DEFAULT_CONFIG_PATH": "paths",
    "load_config": "load",
    "SECRET_KEYS": "values",
    "format_duration": "values",
    "masked_secret": "values",
    "parse_duration": "values",
}
_SCHEMA = [
    "DEFAULT_MEMORY_MAX_TOKENS",
    "AgentConfig",
    "CompressionConfig",
    "Config",
    "EmbeddingConfig",
    "ExtractionConfig",
    "MemoryConfig",
    "ProviderConfig",
    "example_config",
    "has_api_key",
    "redacted",
]
_HOME.update(dict.fromkeys(_SCHEMA, "schema"))
_CHANNELS = [
    "ChannelsConfig",
    "FeishuCallbackConfig",
    "FeishuConfig",
    "TelegramConfig",
    "TelegramWebhookConfig",
]
_HOME.update(dict.fromkeys(_CHANNELS, "channels"))


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'gateway.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gateway.config.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # what the names are, for readers and type checkers
    from gateway.config.channels import (
        ChannelsConfig,
        FeishuCallbackConfig,
        FeishuConfig,
        TelegramConfig,
        TelegramWebhookConfig,
    )
    from gateway.config.env import ENV_OVERRIDES, EnvOverride
    from gateway.config.errors import ConfigError
    from gateway.config.load import load_config
    from gateway.config.paths import CONFIG_ENV, DEFAULT_CONFIG_PATH
    from gateway.config.schema import (
        DEFAULT_MEMORY_MAX_TOKENS,
        AgentConfig,
        CompressionConfig,
        Config,
        EmbeddingConfig,
        ExtractionConfig,
        MemoryConfig,
        ProviderConfig,
        example_config,
        has_api_key,
        redacted,
    )
    from gateway.config.values import SECRET_KEYS, format_duration, masked_secret, parse_duration

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_MEMORY_MAX_TOKENS",
    "ENV_OVERRIDES",
    "SECRET_KEYS",
    "AgentConfig",
    "ChannelsConfig",
    "CompressionConfig",
    "Config",
    "ConfigError",
    "EmbeddingConfig",
    "EnvOverride",
    "ExtractionConfig",
    "FeishuCallbackConfig",
    "FeishuConfig",
    "MemoryConfig",
    "ProviderConfig",
    "TelegramConfig",
    "TelegramWebhookConfig",
    "example_config",
    "format_duration",
    "has_api_key",
    "load_config",
    "masked_secret",
    "parse_duration",
    "redacted",
]
