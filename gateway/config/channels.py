"""The config of the chat channels: Telegram (polling or webhook) and Feishu (websocket or callback)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, SecretStr, field_validator, model_validator

from gateway.config.section import Section as _Model
from gateway.config.values import Duration, Secret

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
    # A streamed reply (agent.stream) in a group is one message edited at most every stream_every per
    # chat; in a private chat a draft (animated by Telegram) at most every draft_every
    # (channels/telegram/streaming.py).
    stream_every: Annotated[Duration, Field(ge=0.5, le=60)] = 1.5
    draft_every: Annotated[Duration, Field(ge=0.1, le=60)] = 1.5

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
    # A streamed reply (agent.stream) is a CardKit streaming card updated at most every stream_every (the
    # client types the new words out in between); false (or CardKit refused: scope cardkit:card:write
    # missing) sends each reply whole at the end.
    stream_cards: bool = True
    stream_every: Annotated[Duration, Field(ge=0.1, le=60)] = 1.5

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
