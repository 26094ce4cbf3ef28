"""The configuration schema: one pydantic model per section, camelCase in JSON, unknown keys refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

from gateway.config.channels import ChannelsConfig
from gateway.config.media import MediaConfig
from gateway.config.section import Section as _Model
from gateway.config.values import (
    Clock,
    DatabaseUrl,
    Duration,
    Offset,
    Secret,
    Wait,
    Weekday,
)
from memory.vectors.embedding import EmbeddingSettings

# Used when memory.maxTokens is omitted: extraction output is a short JSON document.
DEFAULT_MEMORY_MAX_TOKENS = 2048


# --------------------------------------------------------------------------- models


class ProviderConfig(_Model):
    """An OpenAI-compatible endpoint ("openai") or the labelled local stand-in ("offline")."""

    type: Literal["openai", "offline"] = "openai"
    api_key: Secret = SecretStr("")
    base_url: str = "https://api.openai.com/v1"
    timeout_seconds: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    # Photos go to the model as image parts: "auto" tries, and remembers per model that it refused them.
    vision: Literal["auto", "on", "off"] = "auto"

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
    # The longest a person waits without a word: a reply not ready by then becomes a short apology (and
    # frees its chat slot); a chat waiting that long for a slot is told so. Covers the model's retries.
    reply_deadline: Duration = 120.0
    # Memory tools (gateway/memory_tools.py): the model may search, read, save and forget memories itself,
    # in at most max_tool_rounds rounds of calls per reply, whose results share tool_result_chars.
    tools: bool = True
    max_tool_rounds: int = Field(4, ge=1, le=20)
    tool_result_chars: int = Field(8000, ge=500, le=200_000)
    # The time zone reminders use for a person who has not set theirs (/timezone): "" = the top-level
    # timezone, else the machine's (README "Reminders").
    timezone: str = ""

    # Replies shown while the model writes them, where the channel can (gateway/streaming.py): Telegram
    # drafts and edits, Feishu streaming cards, the terminal. false: every reply arrives whole.
    stream: bool = True

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return _iana_zone(value)


class RemindersConfig(_Model):
    """Reminders (README "Reminders"): how many one person may have waiting, how long their text may be,
    and how late a reminder due while everything was down is still sent."""

    enabled: bool = True
    max_per_person: int = Field(200, ge=1, le=100_000)
    max_text_chars: int = Field(1000, ge=20, le=4000)
    # Due longer ago than this when a gateway could send it: reported (status missed), not sent.
    late_within: Duration = 12 * 3600.0


class ExtractionConfig(_Model):
    """When buffered turns are handed to the memory model (docs/architecture.md, "Extraction and
    compression")."""

    quiet_gap: Duration = 180.0
    token_budget: int = Field(6000, ge=200, le=100_000)
    daily_flush: Clock = "03:00"
    max_attempts: int = Field(5, ge=1, le=100)
    retry_backoff: Duration = 60.0
    # Leaving the terminal chat (and /memory in chat) waits this long for pending turns to be extracted;
    # what is not done by then stays buffered for the next start. 0 does not wait.
    exit_flush: Wait = 15.0

    @field_validator("token_budget", mode="before")
    @classmethod
    def _not_a_ratio(cls, value: Any) -> Any:
        # The original design spelled tokenBudget as a ratio (0.6); here it is a token count, so say so.
        if isinstance(value, float) and 0 < value < 1:
            raise ValueError("expected a number of tokens such as 6000 (not a ratio)")
        return value


class CompressionConfig(_Model):
    """Daily (Tier 3 → Tier 2) and weekly (dedup, profile refresh, archive) compression times."""

    daily: Clock = "03:00"
    weekly_day: Weekday = "mon"
    weekly: Clock = "04:00"


class EmbeddingConfig(_Model):
    """Vectors beside the keyword index (hybrid retrieval, semantic dedup): the bundled local model, an API,
    or none."""

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


class RelevanceFloorConfig(_Model):
    """How relevant a retrieved memory must be to be injected into a reply (``memory.relevanceFloor``;
    ``memory.retrieval.ranking.RelevanceFloor`` says what each value means and how they were chosen)."""

    # Chosen with python -m bench.conversation_recall --sweep (bench/README.md, "Relevance floor").
    keyword_match: float = Field(0.1, ge=0.0, le=1.0)
    hybrid_match: float = Field(0.15, ge=0.0, le=1.0)
    hybrid_cosine: float = Field(0.84, ge=0.0, le=1.0)
    keyword_match_zh: float = Field(0.0, ge=0.0, le=1.0)
    hybrid_cosine_zh: float = Field(0.865, ge=0.0, le=1.0)
    # For a question about the person's own life (gate.personal_question), a hit this far above the
    # median cosine of the query's vector candidates stands out and is kept; 0 turns it off. Chosen with
    # bench.everyday and bench.conversation_recall (bench/README.md, "The everyday loop").
    hybrid_lift: float = Field(0.02, ge=0.0, le=1.0)
    # For any other message the gate lets through, the keyword share a hit needs (hybrid; the larger of
    # this and hybridMatch). Calibrated on training data only (memory/retrieval/DATA_CARD_RERANK.md).
    other_match: float = Field(0.25, ge=0.0, le=1.0)
    # And the cosine such a memory needs (hybrid; the larger of this and hybridCosine / hybridCosineZh).
    # Off (0): the cut the training data chose for Chinese (0.91, python -m bench.floor_other) took MADial's
    # recall from 0.84 to 0.12 (DATA_CARD_RERANK.md, round 25).
    other_cosine: float = Field(0.0, ge=0.0, le=1.0)
    other_cosine_zh: float = Field(0.0, ge=0.0, le=1.0)
    # A message the gate refused still gets the memory nearest to it when that memory stands this far
    # above the median of the person's memories (rescueLiftZh for a Chinese message; 0 turns it off) and
    # rescueGap above the next one. Calibrated on training data only: python -m bench.floor_rescue
    # (memory/retrieval/DATA_CARD_RERANK.md, "The rescue's cut").
    rescue_lift: float = Field(0.12, ge=0.0, le=1.0)
    rescue_lift_zh: float = Field(0.09, ge=0.0, le=1.0)
    rescue_gap: float = Field(0.03, ge=0.0, le=1.0)
    # And, hybrid, however it is admitted, a memory for any other message must stand this far above the
    # median cosine of the query's vector candidates (otherLiftZh for a Chinese message; 0 turns it off).
    # Calibrated on training data only: python -m bench.floor_other (DATA_CARD_RERANK.md, round 34). Off
    # for Chinese: the cut the training data chose (0.03) cost the dev sets 34 Chinese answers.
    other_lift: float = Field(0.04, ge=0.0, le=1.0)
    other_lift_zh: float = Field(0.0, ge=0.0, le=1.0)


class MemoryConfig(_Model):
    """The tiered memory (SQLite or PostgreSQL); ``enabled = false`` falls back to MEMORY.md + daily files in
    the workspace."""

    enabled: bool = True
    db_path: str = Field("~/.tierclaw/data/memory.db", min_length=1)
    # Empty: the SQLite file at dbPath. A postgresql:// URL: the memory lives in that PostgreSQL database
    # (README.md, "Running on PostgreSQL"); dbPath's directory still holds the local files.
    database_url: DatabaseUrl = ""
    model: str | None = Field(None, min_length=1)
    max_tokens: int | None = Field(None, gt=0)
    provider: ProviderConfig | None = None
    # 7: the dev sets' ask recall 0.892 / 0.841 at 5 -> 0.913 / 0.857 (bench/README.md, issue 35, "rank12").
    top_k: int = Field(7, ge=1, le=20)
    relevance_floor: RelevanceFloorConfig = Field(default_factory=RelevanceFloorConfig)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    # Every conversation turn is kept and searchable (memory/conversation.py); a number of days deletes
    # older turns at the daily job. None keeps them all.
    turn_retention_days: int | None = Field(None, ge=1, le=36_500)
    # One Markdown note per person (memory/scratchpad.py), updated by the memory model after each
    # extracted session and shown in the system prompt; false leaves notes as they are.
    scratchpad: bool = True


class DashboardConfig(_Model):
    """The memory web page (``tierclaw dashboard``; ``tierclaw gateway`` serves it too when enabled)."""

    enabled: bool = False
    host: str = Field("127.0.0.1", min_length=1)
    port: int = Field(8765, ge=0, le=65535)
    # Serving on an address other than loopback must be asked for (gateway/dashboard/access.py says why).
    allow_remote: bool = False


class OpsHttpConfig(_Model):
    """The operations endpoints of ``tierclaw gateway`` (``/healthz``, ``/readyz``, ``/metrics``;
    gateway/ops_http.py). ``port`` null = not served (the default: one person's gateway needs no probe,
    and a port opened unasked can collide with another gateway's); 0 = a free port, said in the log."""

    host: str = Field("127.0.0.1", min_length=1)
    port: int | None = Field(None, ge=0, le=65535)


class GatewayConfig(_Model):
    """What tells one gateway process (a replica) from another: its id in log lines and metrics, and
    where it answers health checks and metric scrapes."""

    # "" = hostname-pid, which differs for every process (docs/scale-out.md).
    replica_id: str = Field("", pattern=r"^[A-Za-z0-9._:-]{0,64}$")
    http: OpsHttpConfig = Field(default_factory=OpsHttpConfig)
    # For trials only: every scheduled memory job fires every this long instead of at its clock time
    # (bench.replicas runs many periods in a minute to count duplicated runs; docs/scale-out.md).
    jobs_every: Duration | None = None
    # How long a chat's newest message waits before it is answered when an earlier message of the chat
    # may still be on its way (delivered over another connection): the chat is answered in the
    # platform's order if the earlier one arrives within this (docs/scale-out.md, "Platform order").
    reorder_window: Wait = 0.3
    # How it grows while deliveries come late (gateway/inbox.py, ``ReorderWindow``): to this many times the
    # most lateness seen, at most ``reorderWindowMost``, halving back towards ``reorderWindow`` every
    # ``reorderHalfLife`` (2, 3 s and 60 s: bench.replicas's race runs, docs/scale-out.md "Platform order").
    reorder_growth: float = Field(2.0, ge=1.0, le=10.0)
    reorder_window_most: Wait = 3.0
    reorder_half_life: Duration = 60.0
    # For trials only: this process's clock runs this far off (bench.replicas's skew trial; leases and
    # due times use the database's clock, so it changes nothing there: docs/scale-out.md, "One clock").
    clock_offset: Offset = 0.0


_IDENTITY_RE = re.compile(r"[a-z][a-z0-9_-]*:\S+")


class Config(_Model):
    """The whole configuration. ``source`` is the file it was read from (None: embedded defaults)."""

    provider: ProviderConfig = Field(default_factory=ProviderConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    dashboard: DashboardConfig = Field(default_factory=DashboardConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    media: MediaConfig = Field(default_factory=MediaConfig)
    reminders: RemindersConfig = Field(default_factory=RemindersConfig)
    users: dict[str, list[str]] = Field(default_factory=dict)
    timezone: str = ""

    _source: Path | None = PrivateAttr(default=None)
    _api_key_source: str = PrivateAttr(default="")

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
        return _iana_zone(value)

    @property
    def source(self) -> Path | None:
        """The file this configuration was read from; None when it is the embedded defaults."""
        return self._source

    @property
    def api_key_source(self) -> str:
        """Where the main provider's API key came from ("config file", "TIERCLAW_PROVIDER_API_KEY",
        "OPENAI_API_KEY" or "none"); never the key itself. Set by ``load_config``."""
        if self._api_key_source:
            return self._api_key_source
        return "config" if has_api_key(self.provider) else "none"

    def memory_provider(self) -> ProviderConfig:
        """The memory model's provider: ``memory.provider``, else the main provider."""
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

    def memory_target(self) -> str:
        """Where the memory lives: ``memory.databaseUrl`` when set, else the ``memory.dbPath`` file."""
        return self.memory.database_url or str(self.db_path())

    def memory_on_file(self) -> bool:
        """Whether the memory is the SQLite file (not a database server)."""
        return not self.memory.database_url

    def chat_history_path(self) -> Path:
        """What was typed in ``tierclaw chat`` (↑ recalls it), beside the memory database."""
        return self.db_path().parent / "chat_history"

    def has_api_key(self, provider: ProviderConfig | None = None) -> bool:
        """Whether ``provider`` (default: the main provider) has a non-empty API key."""
        return has_api_key(provider if provider is not None else self.provider)


def _iana_zone(value: str) -> str:
    """An IANA zone name, stripped ("" allowed); ValueError naming what is expected otherwise."""
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


def has_api_key(provider: ProviderConfig) -> bool:
    """Whether the provider has a non-empty API key (without ever exposing it)."""
    return bool(provider.api_key.get_secret_value())


# --------------------------------------------------------------------------- output


def redacted(config: Config) -> dict[str, Any]:
    """The configuration as a JSON-spelled dict with every secret masked (for ``tierclaw status``)."""
    return config.model_dump(mode="json", by_alias=True, context={"secrets": "mask"})


def example_config() -> dict[str, Any]:
    """Every option with its default, JSON spelling; ``config.example.json`` is exactly this."""
    return Config().model_dump(mode="json", by_alias=True, context={"secrets": "reveal"})
