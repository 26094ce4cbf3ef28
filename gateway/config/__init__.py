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

Modules: ``schema`` (the models and their validators), ``values`` (durations, clock times, secrets),
``env`` (``TIERCLAW_…`` overrides), ``errors`` (messages), ``load`` (``load_config``). The public names
are re-exported here: ``from gateway.config import load_config``.
"""

from gateway.config.env import ENV_OVERRIDES, EnvOverride
from gateway.config.errors import ConfigError
from gateway.config.load import CONFIG_ENV, DEFAULT_CONFIG_PATH, load_config
from gateway.config.schema import (
    DEFAULT_MEMORY_MAX_TOKENS,
    AgentConfig,
    ChannelsConfig,
    CompressionConfig,
    Config,
    EmbeddingConfig,
    ExtractionConfig,
    FeishuCallbackConfig,
    FeishuConfig,
    MemoryConfig,
    ProviderConfig,
    TelegramConfig,
    TelegramWebhookConfig,
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
