"""``TIERCLAW_…`` environment overrides, applied to the raw file before validation."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from gateway.config.values import SECRET_KEYS

# --------------------------------------------------------------------------- environment overrides


# What a boolean variable may say (TIERCLAW_TELEGRAM_ENABLED=true); anything else is refused by validation.
_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True}
_BOOLEANS |= {"false": False, "0": False, "no": False, "off": False}


@dataclasses.dataclass(frozen=True, slots=True)
class EnvOverride:
    """One ``TIERCLAW_…`` variable and the field it sets (``path`` in JSON spelling)."""

    name: str
    path: tuple[str, ...]
    help: str
    is_list: bool = False  # comma-separated: "123, alice" -> ["123", "alice"]
    kind: str = "text"  # "bool" (true/false, 1/0, yes/no, on/off) or "int": typed before strict validation

    def value_of(self, text: str) -> Any:
        """The variable's text as the field's type (the config is validated strictly); text that is not
        one is left as it is, for validation to refuse it naming the variable."""
        if self.is_list:
            return [item.strip() for item in text.split(",") if item.strip()]
        if self.kind == "bool":
            return _BOOLEANS.get(text.strip().lower(), text)
        if self.kind == "int" and text.strip().lstrip("-").isdigit():
            return int(text.strip())
        return text

    @property
    def field(self) -> str:
        """The dotted JSON path, e.g. ``memory.dbPath``."""
        return ".".join(self.path)

    @property
    def secret(self) -> bool:
        return self.path[-1] in SECRET_KEYS


ENV_OVERRIDES: tuple[EnvOverride, ...] = (
    EnvOverride("TIERCLAW_PROVIDER_TYPE", ("provider", "type"), '"openai" (any compatible API) or "offline"'),
    EnvOverride("TIERCLAW_PROVIDER_API_KEY", ("provider", "apiKey"), "API key of the main provider"),
    EnvOverride("TIERCLAW_PROVIDER_BASE_URL", ("provider", "baseUrl"), "base URL of the main provider"),
    EnvOverride("TIERCLAW_MODEL", ("agent", "model"), "the main model"),
    EnvOverride("TIERCLAW_WORKSPACE", ("agent", "workspace"), "workspace directory (AGENTS.md, SOUL.md)"),
    EnvOverride(
        "TIERCLAW_MEMORY_ENABLED", ("memory", "enabled"), "false: file memory, not tiered", kind="bool"
    ),
    EnvOverride("TIERCLAW_MEMORY_DB", ("memory", "dbPath"), "the memory database file"),
    EnvOverride(
        "TIERCLAW_DATABASE_URL",
        ("memory", "databaseUrl"),
        "postgresql:// URL of the memory (empty: SQLite file)",
    ),
    EnvOverride("TIERCLAW_MEMORY_MODEL", ("memory", "model"), "the memory (extraction) model"),
    EnvOverride(
        "TIERCLAW_MEMORY_API_KEY",
        ("memory", "provider", "apiKey"),
        "API key of the memory provider (creates one from the main provider if absent)",
    ),
    EnvOverride(
        "TIERCLAW_MEMORY_BASE_URL",
        ("memory", "provider", "baseUrl"),
        "base URL of the memory provider (creates one from the main provider if absent)",
    ),
    EnvOverride(
        "TIERCLAW_EMBEDDING_PROVIDER",
        ("memory", "embedding", "provider"),
        '"local" (bundled model), "openai" (any compatible API) or "none"',
    ),
    EnvOverride("TIERCLAW_EMBEDDING_MODEL", ("memory", "embedding", "model"), "the embedding model (openai)"),
    EnvOverride("TIERCLAW_EMBEDDING_API_KEY", ("memory", "embedding", "apiKey"), "key of the embedding API"),
    EnvOverride(
        "TIERCLAW_EMBEDDING_BASE_URL", ("memory", "embedding", "baseUrl"), "base URL of the embedding API"
    ),
    EnvOverride(
        "TIERCLAW_TELEGRAM_ENABLED", ("channels", "telegram", "enabled"), "true: serve Telegram", kind="bool"
    ),
    EnvOverride("TIERCLAW_TELEGRAM_TOKEN", ("channels", "telegram", "token"), "Telegram bot token"),
    EnvOverride(
        "TIERCLAW_TELEGRAM_ALLOW_FROM",
        ("channels", "telegram", "allowFrom"),
        'comma-separated Telegram user ids or usernames allowed in ("*" = everyone)',
        is_list=True,
    ),
    EnvOverride(
        "TIERCLAW_FEISHU_ENABLED", ("channels", "feishu", "enabled"), "true: serve Feishu/Lark", kind="bool"
    ),
    EnvOverride("TIERCLAW_FEISHU_APP_ID", ("channels", "feishu", "appId"), "Feishu app id"),
    EnvOverride("TIERCLAW_FEISHU_APP_SECRET", ("channels", "feishu", "appSecret"), "Feishu app secret"),
    EnvOverride(
        "TIERCLAW_FEISHU_VERIFICATION_TOKEN",
        ("channels", "feishu", "verificationToken"),
        "Feishu event verification token",
    ),
    EnvOverride(
        "TIERCLAW_FEISHU_ENCRYPT_KEY", ("channels", "feishu", "encryptKey"), "Feishu event encrypt key"
    ),
    EnvOverride(
        "TIERCLAW_FEISHU_ALLOW_FROM",
        ("channels", "feishu", "allowFrom"),
        'comma-separated Feishu open_ids allowed in ("*" = everyone)',
        is_list=True,
    ),
    EnvOverride(
        "TIERCLAW_GATEWAY_REPLICA_ID", ("gateway", "replicaId"), "this gateway's id in logs and metrics"
    ),
    EnvOverride(
        "TIERCLAW_GATEWAY_HTTP_HOST", ("gateway", "http", "host"), "address of /healthz, /readyz, /metrics"
    ),
    EnvOverride(
        "TIERCLAW_GATEWAY_HTTP_PORT",
        ("gateway", "http", "port"),
        "port of /healthz, /readyz, /metrics",
        kind="int",
    ),
    EnvOverride("TIERCLAW_TIMEZONE", ("timezone",), 'IANA time zone of the scheduler ("" = local)'),
    EnvOverride(
        "TIERCLAW_TRANSCRIPTION_API_KEY",
        ("media", "transcription", "apiKey"),
        "key of the transcription API (empty: the main provider's)",
    ),
    EnvOverride(
        "TIERCLAW_TRANSCRIPTION_BASE_URL",
        ("media", "transcription", "baseUrl"),
        "base URL of the transcription API (empty: the main provider's)",
    ),
)

MEMORY_PROVIDER_PATH = ("memory", "provider")


def apply_env(raw: dict[str, Any], env: Mapping[str, str]) -> tuple[dict[tuple[str, ...], str], str | None]:
    """Set every non-empty override in ``raw`` (in place).

    Returns which path each variable set, and the variable that created ``memory.provider`` from the main
    provider (None if it did not).
    """
    applied: dict[tuple[str, ...], str] = {}
    created_by: str | None = None
    for override in ENV_OVERRIDES:
        value = env.get(override.name, "")
        if value == "":
            continue
        if override.path[:2] == MEMORY_PROVIDER_PATH:
            memory = raw.setdefault("memory", {})
            if isinstance(memory, dict) and memory.get("provider") is None:
                main = raw.get("provider")
                memory["provider"] = copy.deepcopy(main) if isinstance(main, dict) else {}
                created_by = override.name
        node: Any = raw
        for key in override.path[:-1]:
            if not isinstance(node, dict):
                break
            node = node.setdefault(key, {})
        if isinstance(node, dict):  # else the file's own value is wrong, and validation says so
            node[override.path[-1]] = override.value_of(value)
            applied[override.path] = override.name
    return applied, created_by


# The OpenAI SDK's own variables: used for the main provider when neither the file nor a TIERCLAW_…
# variable gives the value (people who use the openai CLI or SDK already have them set).
OPENAI_FALLBACKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("OPENAI_API_KEY", ("provider", "apiKey")),
    ("OPENAI_BASE_URL", ("provider", "baseUrl")),
)


def apply_openai_fallback(raw: dict[str, Any], env: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """Fill ``provider.apiKey`` / ``provider.baseUrl`` from ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` where
    still empty (in place), for an ``"openai"`` provider; returns which path each variable set."""
    provider = raw.setdefault("provider", {})
    if not isinstance(provider, dict) or provider.get("type", "openai") != "openai":
        return {}
    applied: dict[tuple[str, ...], str] = {}
    for name, path in OPENAI_FALLBACKS:
        if env.get(name, "") and not provider.get(path[-1]):
            provider[path[-1]] = env[name]
            applied[path] = name
    return applied


def api_key_source(raw: dict[str, Any], applied: Mapping[tuple[str, ...], str]) -> str:
    """Where the main provider's API key came from: the variable that set it, "config file", or "none"."""
    if ("provider", "apiKey") in applied:
        return applied[("provider", "apiKey")]
    provider = raw.get("provider")
    return "config file" if isinstance(provider, dict) and provider.get("apiKey") else "none"


def unknown_variables(
    env: Mapping[str, str], also_known: tuple[str, ...] = ()
) -> list[tuple[str, str | None]]:
    """``TIERCLAW_…`` variables that set nothing (a typo, usually), each with the closest known name."""
    import difflib

    known = [o.name for o in ENV_OVERRIDES] + list(also_known)
    return [
        (name, next(iter(difflib.get_close_matches(name, known, n=1)), None))
        for name in sorted(env)
        if name.startswith("TIERCLAW_") and name not in known
    ]
