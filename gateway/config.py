"""The gateway's configuration: one JSON file, validated at start, with ``TIERCLAW_…`` environment overrides.

Why it looks like this:

- JSON keys are camelCase (the seed's myclaw files keep working); Python attributes are snake_case. Every
  model forbids unknown keys, so a typo such as ``quietGapp`` is an error instead of a silently ignored
  setting.
- Environment overrides are applied to the file's raw dict *before* validation, so a bad ``TIERCLAW_…``
  value is type-checked like the file and its error names the variable.
- ``ConfigError`` messages name the field in JSON spelling, say what is expected and what was given, and
  never contain a secret: secret fields are never echoed, nor is the value of an unknown key (a misspelt
  ``apikey`` still holds a key).
- The memory model may have its own provider; when omitted it reuses the main one (seed 000 §9).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    SecretStr,
    SerializationInfo,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from memory.vectors.embedding import EmbeddingSettings

DEFAULT_CONFIG_PATH = "~/.tierclaw/config.json"
CONFIG_ENV = "TIERCLAW_CONFIG"
# Used when memory.maxTokens is omitted: extraction output is a short JSON document.
DEFAULT_MEMORY_MAX_TOKENS = 2048


class ConfigError(ValueError):
    """The configuration cannot be used; the message says where, what is expected and what was given."""


# --------------------------------------------------------------------------- value types


_DURATION_RE = re.compile(
    r"^(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s)?$", re.IGNORECASE
)
_DURATION_HINT = 'a duration such as "3m", "90s", "1h", "1h30m" or a number of seconds'


def parse_duration(value: Any) -> float:
    """Seconds from ``"3m"``, ``"90s"``, ``"1h30m"``, a number, or a numeric string (env vars are strings)."""
    if isinstance(value, bool):
        raise ValueError(f"expected {_DURATION_HINT}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            match = _DURATION_RE.match(text)
            if not text or match is None or not any(match.groupdict().values()):
                raise ValueError(f"expected {_DURATION_HINT}") from None
            parts = {k: float(v) for k, v in match.groupdict().items() if v}
            seconds = parts.get("h", 0.0) * 3600 + parts.get("m", 0.0) * 60 + parts.get("s", 0.0)
    else:
        raise ValueError(f"expected {_DURATION_HINT}")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"expected a duration greater than 0 ({_DURATION_HINT})")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest ``1h30m``-style spelling of ``seconds`` (what ``parse_duration`` reads back)."""
    if seconds != int(seconds):
        return f"{seconds:g}s"
    rest = int(seconds)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return out or "0s"


def _parse_clock(value: Any) -> str:
    """``"HH:MM"`` (00:00..23:59); ``"3:00"`` is accepted and stored as ``"03:00"``."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", value)
        if match and int(match[1]) < 24 and int(match[2]) < 60:
            return f"{int(match[1]):02d}:{match[2]}"
    raise ValueError('expected a time of day "HH:MM" between 00:00 and 23:59')


_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _parse_day(value: Any) -> str:
    """``"mon"``..``"sun"``; ``"Mon"`` and ``"monday"`` are accepted too."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _DAYS or text in _DAY_NAMES:
            return text[:3]
    raise ValueError('expected a day of the week: "mon", "tue", "wed", "thu", "fri", "sat" or "sun"')


def _secret_to_json(value: SecretStr, info: SerializationInfo) -> str:
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
Clock = Annotated[str, BeforeValidator(_parse_clock)]
Weekday = Annotated[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"], BeforeValidator(_parse_day)]
Secret = Annotated[SecretStr, PlainSerializer(_secret_to_json, return_type=str, when_used="json")]

# Fields whose values are never echoed in an error message (JSON spelling of the last path element).
SECRET_KEYS = frozenset({"apiKey", "token", "appSecret", "verificationToken", "encryptKey", "secretToken"})


def masked_secret(value: SecretStr | str) -> str:
    """``(not set)``, ``****``, or ``…`` + the last 4 characters when the secret is long enough to spare."""
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if not text:
        return "(not set)"
    if len(text) >= 12:
        return "…" + text[-4:]
    return "****"


# --------------------------------------------------------------------------- models


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False
    )


class ProviderConfig(_Model):
    """An OpenAI-compatible endpoint ("openai") or the labelled local stand-in ("offline")."""

    type: Literal["openai", "offline"] = "openai"
    api_key: Secret = SecretStr("")
    base_url: str = "https://api.openai.com/v1"
    timeout_seconds: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return _http_base_url(value)


def _http_base_url(value: str) -> str:
    """An http(s) API base URL, stripped; ValueError otherwise."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError('expected an http(s) URL such as "https://api.openai.com/v1"')
    return value.strip()


class AgentConfig(_Model):
    """The main model and the assistant's workspace (AGENTS.md, SOUL.md, file memory)."""

    model: str = Field("gpt-4o-mini", min_length=1)
    max_tokens: int = Field(1024, gt=0)
    temperature: float = Field(0.7, ge=0, le=2)
    workspace: str = Field("~/.tierclaw/workspace", min_length=1)
    history_messages: int = Field(20, ge=0, le=200)
    max_concurrent_chats: int = Field(8, ge=1, le=1000)


class ExtractionConfig(_Model):
    """When buffered turns are handed to the memory model (seed 000 §4)."""

    quiet_gap: Duration = 180.0
    token_budget: int = Field(6000, ge=200, le=100_000)
    daily_flush: Clock = "03:00"
    max_attempts: int = Field(5, ge=1, le=100)
    retry_backoff: Duration = 60.0

    @field_validator("token_budget", mode="before")
    @classmethod
    def _not_a_ratio(cls, value: Any) -> Any:
        # The seed spelled tokenBudget as a ratio (0.6); here it is a token count, so say so.
        if isinstance(value, float) and 0 < value < 1:
            raise ValueError("expected a number of tokens such as 6000 (not a ratio)")
        return value


class CompressionConfig(_Model):
    """Daily (Tier 3 → Tier 2) and weekly (dedup, profile refresh, archive) compression times."""

    daily: Clock = "03:00"
    weekly_day: Weekday = "mon"
    weekly: Clock = "04:00"


class EmbeddingConfig(_Model):
    """Vectors beside FTS5 (hybrid retrieval, semantic dedup): the bundled local model, an API, or none."""

    provider: Literal["local", "openai", "none"] = "local"
    model: str = ""
    base_url: str = "https://api.openai.com/v1"
    api_key: Secret = SecretStr("")
    dimensions: int | None = Field(None, ge=1, le=16384)
    timeout_seconds: float = Field(10.0, gt=0)
    # How long a reply waits for its query's vector before that retrieval goes keyword-only.
    query_timeout_ms: int = Field(1000, ge=10, le=60_000)
    batch_size: int = Field(64, ge=1, le=2048)
    # Cached vectors not used for this long are deleted by the weekly job.
    cache_days: int = Field(90, ge=1, le=3650)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return _http_base_url(value)

    @model_validator(mode="after")
    def _openai_needs_model(self) -> EmbeddingConfig:
        if self.provider == "openai" and not self.model.strip():
            raise ValueError('provider "openai" needs a model, e.g. "text-embedding-3-small"')
        # A keyless self-hosted server is fine (any token is sent); OpenAI itself would answer every
        # request with 401 and retrieval would quietly run keyword-only, so refuse to start instead.
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        if self.provider == "openai" and official and not self.api_key.get_secret_value().strip():
            raise ValueError(
                'provider "openai" at api.openai.com needs apiKey (or TIERCLAW_EMBEDDING_API_KEY); '
                "for a keyless OpenAI-compatible server set baseUrl to it"
            )
        if self.provider == "local" and self.dimensions not in (None, 384):
            raise ValueError("the local model always gives 384 dimensions: leave dimensions unset")
        return self

    def settings(self) -> EmbeddingSettings:
        """What ``memory.embedding.build_embedder`` takes."""
        return EmbeddingSettings(
            provider=self.provider,
            model=self.model.strip(),
            base_url=self.base_url,
            api_key=self.api_key.get_secret_value(),
            dimensions=self.dimensions,
            timeout_seconds=self.timeout_seconds,
            batch_size=self.batch_size,
        )


class MemoryConfig(_Model):
    """Tiered SQLite memory; ``enabled = false`` falls back to MEMORY.md + daily files in the workspace."""

    enabled: bool = True
    db_path: str = Field("~/.tierclaw/data/memory.db", min_length=1)
    model: str | None = Field(None, min_length=1)
    max_tokens: int | None = Field(None, gt=0)
    provider: ProviderConfig | None = None
    top_k: int = Field(5, ge=1, le=20)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)


_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _ids_as_text(value: Any) -> Any:
    """``allowFrom: [123456789]`` (a Telegram id typed as a number) means the same as ``["123456789"]``."""
    if isinstance(value, list):
        return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    return value


AllowFrom = Annotated[list[str], BeforeValidator(_ids_as_text)]
_SECRET_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")
FEISHU_DOMAINS = {"feishu": "https://open.feishu.cn", "lark": "https://open.larksuite.com"}


def _origin(value: str, example: str) -> str:
    """An https origin, or http on this machine only (a self-hosted server in a test or behind a proxy)."""
    parts = urlsplit(value)
    local = parts.scheme == "http" and parts.hostname in _LOCAL_HOSTS
    if not parts.netloc or not (parts.scheme == "https" or local):
        raise ValueError(f"expected an https URL such as {example!r} (http only on 127.0.0.1/localhost)")
    return value


class TelegramWebhookConfig(_Model):
    """Where Telegram posts updates in webhook mode: ``url`` is public, ``listen:port/path`` is local."""

    url: str = ""
    listen: str = Field("127.0.0.1", min_length=1)
    port: int = Field(8443, ge=1, le=65535)
    path: str = Field("telegram", min_length=1)
    secret_token: Secret = SecretStr("")

    @field_validator("secret_token")
    @classmethod
    def _token_chars(cls, value: SecretStr) -> SecretStr:
        text = value.get_secret_value()
        if text and not _SECRET_TOKEN_RE.fullmatch(text):
            raise ValueError("expected 1-256 characters from A-Z, a-z, 0-9, _ and - (Telegram's rule)")
        return value


class TelegramConfig(_Model):
    """A Telegram bot: long polling by default, or a webhook; ``allowFrom`` empty lets nobody in."""

    enabled: bool = False
    token: Secret = SecretStr("")
    allow_from: AllowFrom = Field(default_factory=list)
    mode: Literal["polling", "webhook"] = "polling"
    base_url: str = "https://api.telegram.org/bot"
    group_policy: Literal["mention", "open"] = "mention"
    timeout_seconds: float = Field(30.0, gt=0, le=600)
    webhook: TelegramWebhookConfig = Field(default_factory=TelegramWebhookConfig)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        return _origin(value.strip(), "https://api.telegram.org/bot")

    @model_validator(mode="after")
    def _needs_token(self) -> TelegramConfig:
        if self.enabled and not self.token.get_secret_value():
            raise ValueError(
                "enabled, but token is empty: set channels.telegram.token or TIERCLAW_TELEGRAM_TOKEN"
            )
        if self.enabled and self.mode == "webhook":
            if not self.webhook.url:
                raise ValueError(
                    "mode is webhook, but webhook.url is empty: set channels.telegram.webhook.url to the "
                    "public https URL Telegram should post to (or use mode polling)"
                )
            _origin(self.webhook.url, "https://bot.example.com/telegram")
        return self


class FeishuCallbackConfig(_Model):
    """The local address the HTTP event callback listens on (put it behind your public https URL)."""

    listen: str = Field("127.0.0.1", min_length=1)
    port: int = Field(9000, ge=1, le=65535)
    path: str = Field("/feishu/events", pattern=r"^/\S*$")


class FeishuConfig(_Model):
    """A Feishu/Lark app: websocket long connection by default, or the HTTP event callback."""

    enabled: bool = False
    app_id: str = ""
    app_secret: Secret = SecretStr("")
    verification_token: Secret = SecretStr("")
    encrypt_key: Secret = SecretStr("")
    allow_from: AllowFrom = Field(default_factory=list)
    mode: Literal["websocket", "callback"] = "websocket"
    domain: str = "feishu"
    timeout_seconds: float = Field(10.0, gt=0, le=600)
    callback: FeishuCallbackConfig = Field(default_factory=FeishuCallbackConfig)

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str) -> str:
        value = value.strip()
        if value in FEISHU_DOMAINS:
            return value
        _origin(value, "https://open.feishu.cn")
        if urlsplit(value).path not in ("", "/"):
            raise ValueError(
                'expected "feishu", "lark" or an origin without a path such as "https://open.feishu.cn"'
            )
        return value.rstrip("/")

    @model_validator(mode="after")
    def _needs_app(self) -> FeishuConfig:
        missing = []
        if not self.app_id:
            missing.append("appId is empty: set channels.feishu.appId or TIERCLAW_FEISHU_APP_ID")
        if not self.app_secret.get_secret_value():
            missing.append("appSecret is empty: set channels.feishu.appSecret or TIERCLAW_FEISHU_APP_SECRET")
        if self.mode == "callback" and not self.verification_token.get_secret_value():
            missing.append(
                "verificationToken is empty (mode callback checks it on every event): set "
                "channels.feishu.verificationToken or TIERCLAW_FEISHU_VERIFICATION_TOKEN"
            )
        if self.mode == "callback" and not self.encrypt_key.get_secret_value():
            # Without an encrypt key lark checks no X-Lark-Signature: anyone who learns the callback URL
            # and the token could post events. So callback mode requires it.
            missing.append(
                "encryptKey is empty (mode callback needs it to check each request's signature): set an "
                "Encrypt Key in the Feishu console and channels.feishu.encryptKey or "
                "TIERCLAW_FEISHU_ENCRYPT_KEY"
            )
        if self.enabled and missing:
            raise ValueError("\n".join("enabled, but " + m for m in missing))
        return self

    def domain_url(self) -> str:
        """The API origin: ``feishu`` and ``lark`` spelled out, a URL as given."""
        return FEISHU_DOMAINS.get(self.domain, self.domain)


class ChannelsConfig(_Model):
    telegram: TelegramConfig = Field(default_factory=TelegramConfig)
    feishu: FeishuConfig = Field(default_factory=FeishuConfig)


_IDENTITY_RE = re.compile(r"[a-z][a-z0-9_-]*:\S+")


class Config(_Model):
    """The whole configuration. ``source`` is the file it was read from (None: embedded defaults)."""

    provider: ProviderConfig = Field(default_factory=ProviderConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    users: dict[str, list[str]] = Field(default_factory=dict)
    timezone: str = ""

    _source: Path | None = PrivateAttr(default=None)

    @field_validator("users")
    @classmethod
    def _one_person_per_identity(cls, users: dict[str, list[str]]) -> dict[str, list[str]]:
        # One identity in two people's lists would make "whose memory is this" ambiguous.
        owner: dict[str, str] = {}
        problems = []
        for person, identities in users.items():
            if not person.strip():
                problems.append("a person's name is empty")
            for identity in identities:
                if not _IDENTITY_RE.fullmatch(identity):
                    problems.append(
                        f"{person!r} has identity {identity!r};"
                        " expected '<channel>:<id>' such as 'telegram:123'"
                    )
                elif owner.setdefault(identity, person) != person:
                    problems.append(
                        f"identity {identity!r} is listed under both {owner[identity]!r} and {person!r};"
                        " an identity may belong to one person only"
                    )
        if problems:
            raise ValueError("\n".join(problems))  # one line each in ConfigError
        return users

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        value = value.strip()
        if value:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    'expected an IANA time zone such as "Asia/Shanghai" or "Europe/Berlin",'
                    ' or "" for the machine\'s local zone'
                ) from None
        return value

    @property
    def source(self) -> Path | None:
        """The file this configuration was read from; None when it is the embedded defaults."""
        return self._source

    def memory_provider(self) -> ProviderConfig:
        """The memory model's provider: ``memory.provider``, else the main provider (seed 000 §9)."""
        return self.memory.provider if self.memory.provider is not None else self.provider

    def memory_model(self) -> str:
        """The memory model: ``memory.model``, else ``agent.model``."""
        return self.memory.model or self.agent.model

    def memory_max_tokens(self) -> int:
        """``memory.maxTokens``, else 2048 (extraction output is short)."""
        return self.memory.max_tokens if self.memory.max_tokens is not None else DEFAULT_MEMORY_MAX_TOKENS

    def workspace_path(self) -> Path:
        """``agent.workspace`` with ``~`` expanded, absolute (relative paths are taken from the cwd)."""
        return Path(self.agent.workspace).expanduser().absolute()

    def db_path(self) -> Path:
        """``memory.dbPath`` with ``~`` expanded, absolute (relative paths are taken from the cwd)."""
        return Path(self.memory.db_path).expanduser().absolute()

    def channel_state_path(self) -> Path:
        """The channels' own small database (seen Feishu events), beside the memory database."""
        return self.db_path().parent / "channels.db"

    def has_api_key(self, provider: ProviderConfig | None = None) -> bool:
        """Whether ``provider`` (default: the main provider) has a non-empty API key."""
        return has_api_key(provider if provider is not None else self.provider)


def has_api_key(provider: ProviderConfig) -> bool:
    """Whether the provider has a non-empty API key (without ever exposing it)."""
    return bool(provider.api_key.get_secret_value())


# --------------------------------------------------------------------------- environment overrides


@dataclasses.dataclass(frozen=True, slots=True)
class EnvOverride:
    """One ``TIERCLAW_…`` variable and the field it sets (``path`` in JSON spelling)."""

    name: str
    path: tuple[str, ...]
    help: str
    is_list: bool = False  # comma-separated: "123, alice" -> ["123", "alice"]

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
    EnvOverride("TIERCLAW_MEMORY_ENABLED", ("memory", "enabled"), "false: file memory instead of SQLite"),
    EnvOverride("TIERCLAW_MEMORY_DB", ("memory", "dbPath"), "the memory database file"),
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
    EnvOverride("TIERCLAW_TELEGRAM_ENABLED", ("channels", "telegram", "enabled"), "true: serve Telegram"),
    EnvOverride("TIERCLAW_TELEGRAM_TOKEN", ("channels", "telegram", "token"), "Telegram bot token"),
    EnvOverride(
        "TIERCLAW_TELEGRAM_ALLOW_FROM",
        ("channels", "telegram", "allowFrom"),
        'comma-separated Telegram user ids or usernames allowed in ("*" = everyone)',
        is_list=True,
    ),
    EnvOverride("TIERCLAW_FEISHU_ENABLED", ("channels", "feishu", "enabled"), "true: serve Feishu/Lark"),
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
    EnvOverride("TIERCLAW_TIMEZONE", ("timezone",), 'IANA time zone of the scheduler ("" = local)'),
)

_MEMORY_PROVIDER = ("memory", "provider")


def _apply_env(raw: dict[str, Any], env: Mapping[str, str]) -> tuple[dict[tuple[str, ...], str], str | None]:
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
        if override.path[:2] == _MEMORY_PROVIDER:
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
            node[override.path[-1]] = (
                [item.strip() for item in value.split(",") if item.strip()] if override.is_list else value
            )
            applied[override.path] = override.name
    return applied, created_by


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
    applied, created_by = _apply_env(raw, env)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        where = str(source) if source is not None else "configuration (built-in defaults + environment)"
        lines = [line for err in exc.errors() for line in _describe(err, applied, created_by)]
        if len(lines) == 1:
            raise ConfigError(f"{where}: {lines[0]}") from None
        listed = "\n".join(f"  {line}" for line in lines)
        raise ConfigError(f"{where}: {len(lines)} problems\n{listed}") from None
    config._source = source
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
        raise ConfigError(f"{file}: expected a JSON object at the top level, got {_kind(data)}")
    return data


# --------------------------------------------------------------------------- error messages


def _kind(value: Any) -> str:
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


def _describe(
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
        if close:
            problems = [f"unknown key; did you mean {close[0]!r}?"]
        else:
            problems = ["unknown key" + (f"; expected one of: {', '.join(keys)}" if keys else "")]
    else:
        got = ""
        if isinstance(value, dict | list):
            if err["type"] != "value_error":  # a model/field validator's message already says what is wrong
                got = f"; got {_kind(value)}"
        elif not any(p in SECRET_KEYS for p in loc):
            got = f"; got {_shown(value)}"
        problems = [line + got for line in _expected(err).splitlines()]
    variable = next((name for path, name in applied.items() if loc[: len(path)] == path), None)
    if variable is not None:
        return [f"{variable} ({field}): {problem}" for problem in problems]
    note = ""
    if created_by is not None and loc[:2] == _MEMORY_PROVIDER:
        note = f" (memory.provider was copied from provider because {created_by} is set)"
    return [f"{field}: {problem}{note}" for problem in problems]


# --------------------------------------------------------------------------- output


def redacted(config: Config) -> dict[str, Any]:
    """The configuration as a JSON-spelled dict with every secret masked (for ``tierclaw status``)."""
    return config.model_dump(mode="json", by_alias=True, context={"secrets": "mask"})


def example_config() -> dict[str, Any]:
    """Every option with its default, JSON spelling; ``config.example.json`` is exactly this."""
    return Config().model_dump(mode="json", by_alias=True, context={"secrets": "reveal"})
