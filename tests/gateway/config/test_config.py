"""gateway.config: the JSON file, its validation messages, the memory model's provider, secret hygiene and the
example file (environment overrides: test_config_env.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.config import (
    CONFIG_ENV,
    DEFAULT_MEMORY_MAX_TOKENS,
    Config,
    example_config,
    format_duration,
    load_config,
    masked_secret,
    parse_duration,
    redacted,
)
from tests.support import REPO
from tests.support.config_files import LONG_SECRET, OTHER_SECRET, error_of, write

# --------------------------------------------------------------------------- finding the file


def test_no_file_gives_embedded_defaults(home: Path) -> None:
    config = load_config(env={})
    assert config.source is None
    assert config.provider.type == "openai"
    assert config.provider.base_url == "https://api.openai.com/v1"
    assert config.agent.model == "gpt-4o-mini"
    assert config.agent.history_messages == 20
    assert config.memory.enabled is True
    assert config.memory.extraction.quiet_gap == 180.0
    assert config.memory.extraction.retry_backoff == 60.0
    assert config.memory.extraction.daily_flush == "03:00"
    assert config.memory.compression.weekly_day == "mon"
    assert config.db_path() == home / ".tierclaw" / "data" / "memory.db"
    assert config.workspace_path() == home / ".tierclaw" / "workspace"
    assert not config.has_api_key()


def test_default_file_is_read_when_present(home: Path) -> None:
    path = home / ".tierclaw" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"agent": {"model": "from-default-file"}}), encoding="utf-8")
    config = load_config(env={})
    assert config.source == path
    assert config.agent.model == "from-default-file"


def test_env_named_file_is_used_and_explicit_path_wins(tmp_path: Path) -> None:
    by_env = write(tmp_path, {"agent": {"model": "env-file"}}, "a.json")
    explicit = write(tmp_path, {"agent": {"model": "explicit-file"}}, "b.json")
    assert load_config(env={CONFIG_ENV: str(by_env)}).agent.model == "env-file"
    assert load_config(explicit, env={CONFIG_ENV: str(by_env)}).agent.model == "explicit-file"
    assert load_config(explicit, env={}).source == explicit


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path / "nope.json")
    assert "not found" in message and "nope.json" in message


def test_missing_env_named_file_is_an_error(tmp_path: Path, home: Path) -> None:
    message = error_of(None, {CONFIG_ENV: str(tmp_path / "gone.json")})
    assert "gone.json" in message and CONFIG_ENV in message


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "agent": {\n    "model": "x",\n  }\n}')
    message = error_of(path)
    assert f"{path}:4:3" in message and "invalid JSON" in message


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "[1, 2]"))
    assert "object" in message and "a list" in message


# --------------------------------------------------------------------------- validation messages


def test_unknown_key_is_rejected_with_its_path_and_a_suggestion(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"memory": {"extraction": {"quietGapp": "3m"}}}))
    assert "memory.extraction.quietGapp" in message
    assert "unknown key" in message and "'quietGap'" in message


def test_unknown_top_level_key_lists_the_valid_ones(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"zzz": 1}))
    assert "zzz: unknown key" in message
    assert "provider" in message and "timezone" in message


def test_wrong_type_names_path_expected_type_and_given_value(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"agent": {"maxTokens": "many"}}))
    assert message == f'{tmp_path / "config.json"}: agent.maxTokens: expected an integer; got "many"'


def test_out_of_range_says_the_bound(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"memory": {"topK": 50}}))
    assert "memory.topK" in message and "<= 20" in message and "got 50" in message


def test_several_problems_one_per_line(tmp_path: Path) -> None:
    data = {"agent": {"temperature": 3}, "provider": {"type": "anthropic", "baseUrl": "ftp://x"}}
    lines = error_of(write(tmp_path, data)).splitlines()
    assert lines[0].endswith("3 problems")
    body = "\n".join(lines[1:])
    assert len(lines) == 4
    assert "agent.temperature" in body and "provider.type" in body and "provider.baseUrl" in body
    assert "'openai'" in body and "http(s) URL" in body


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3m", 180.0),
        ("90s", 90.0),
        ("1h", 3600.0),
        ("1h30m", 5400.0),
        ("1h0m5s", 3605.0),
        ("45s", 45.0),
        ("2.5s", 2.5),
    ],
)
def test_durations_parse(tmp_path: Path, text: Any, seconds: float) -> None:
    config = load_config(write(tmp_path, {"memory": {"extraction": {"quietGap": text}}}), env={})
    assert config.memory.extraction.quiet_gap == seconds
    assert parse_duration(format_duration(seconds)) == seconds


@pytest.mark.parametrize("bad", ["soon", "3 minutes", "", "0s", -5, "m", True])
def test_bad_duration_is_rejected(tmp_path: Path, bad: Any) -> None:
    message = error_of(write(tmp_path, {"memory": {"extraction": {"retryBackoff": bad}}}))
    assert "memory.extraction.retryBackoff" in message and "duration" in message


@pytest.mark.parametrize("bad", ["24:00", "12:60", "noon", "1200", 3])
def test_bad_clock_is_rejected(tmp_path: Path, bad: Any) -> None:
    message = error_of(write(tmp_path, {"memory": {"compression": {"weekly": bad}}}))
    assert "memory.compression.weekly:" in message and "HH:MM" in message


@pytest.mark.parametrize(
    ("text", "seconds"), [("25s", 25.0), ("-25s", -25.0), ("-1m30s", -90.0), (0, 0.0), ("-3s", -3.0)]
)
def test_a_clock_offset_may_run_either_way(tmp_path: Path, text: Any, seconds: float) -> None:
    config = load_config(write(tmp_path, {"gateway": {"clockOffset": text, "reorderWindow": "0s"}}), env={})
    assert (config.gateway.clock_offset, config.gateway.reorder_window) == (seconds, 0.0)
    assert config.model_dump(mode="json", by_alias=True)["gateway"]["clockOffset"] == format_duration(seconds)


def test_a_negative_reorder_window_is_refused(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"gateway": {"reorderWindow": "-1s"}}))
    assert "gateway.reorderWindow" in message and "duration" in message


@pytest.mark.parametrize(
    ("key", "bad", "said"),
    [
        ("reorderGrowth", 0.5, "expected a number >= 1.0"),
        ("reorderGrowth", "2s", "number"),
        ("reorderWindowMost", "-1s", "duration"),
        ("reorderHalfLife", "0s", "greater than 0"),
        ("reorderHalfLife", 60, "bare number"),
    ],
)
def test_how_the_reorder_window_grows_refuses_bad_values(
    tmp_path: Path, key: str, bad: Any, said: str
) -> None:
    message = error_of(write(tmp_path, {"gateway": {key: bad}}))
    assert f"gateway.{key}" in message and said in message


def test_clock_and_day_are_normalised(tmp_path: Path) -> None:
    data = {"memory": {"extraction": {"dailyFlush": "3:05"}, "compression": {"weeklyDay": "Sunday"}}}
    config = load_config(write(tmp_path, data), env={})
    assert config.memory.extraction.daily_flush == "03:05"
    assert config.memory.compression.weekly_day == "sun"


@pytest.mark.parametrize(
    ("embedding", "expected"),
    [
        ({"provider": "openai", "apiKey": "sk-emb"}, "needs a model"),
        ({"provider": "openai", "model": "text-embedding-3-small"}, "needs apiKey"),
        ({"provider": "openai", "model": "m", "apiKey": "  "}, "TIERCLAW_EMBEDDING_API_KEY"),
        ({"provider": "local", "dimensions": 512}, "384 dimensions"),
        ({"provider": "openai", "model": "m", "baseUrl": "localhost:11434"}, "http(s) URL"),
    ],
)
def test_bad_embedding_config_is_refused_with_what_to_fix(
    tmp_path: Path, embedding: dict, expected: str
) -> None:
    message = error_of(write(tmp_path, {"memory": {"embedding": embedding}}))
    assert "memory.embedding" in message and expected in message


def test_embedding_api_key_can_come_from_the_environment_or_be_absent_for_a_self_hosted_server(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path, {"memory": {"embedding": {"provider": "openai", "model": "text-embedding-3-small"}}}
    )
    config = load_config(path, env={"TIERCLAW_EMBEDDING_API_KEY": LONG_SECRET})
    assert config.memory.embedding.settings().api_key == LONG_SECRET
    keyless = {"provider": "openai", "model": "bge-m3", "baseUrl": "http://127.0.0.1:11434/v1"}
    config = load_config(write(tmp_path, {"memory": {"embedding": keyless}}), env={})
    assert config.memory.embedding.settings().api_key == ""


def test_bad_weekday_shows_what_was_given(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"memory": {"compression": {"weeklyDay": "Funday"}}}))
    assert "memory.compression.weeklyDay" in message and '"Funday"' in message


def test_token_budget_as_a_ratio_gets_a_hint(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"memory": {"extraction": {"tokenBudget": 0.6}}}))
    assert "memory.extraction.tokenBudget" in message and "not a ratio" in message


def test_timezone_is_checked(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {"timezone": "Mars/Olympus_Mons"}))
    assert "timezone" in message and "IANA" in message and "Mars/Olympus_Mons" in message
    config = load_config(write(tmp_path, {"timezone": "Asia/Shanghai"}, "ok.json"), env={})
    assert config.timezone == "Asia/Shanghai"


# --------------------------------------------------------------------------- users and channels


def test_users_identities_are_validated(tmp_path: Path) -> None:
    ok = {"users": {"alice": ["telegram:123", "feishu:ou_x"], "bob": ["telegram:456"]}}
    assert load_config(write(tmp_path, ok), env={}).users["alice"] == ["telegram:123", "feishu:ou_x"]

    message = error_of(write(tmp_path, {"users": {"alice": ["123"]}}, "bad.json"))
    assert "users" in message and "'123'" in message and "<channel>:<id>" in message


def test_an_identity_belongs_to_one_person(tmp_path: Path) -> None:
    data = {"users": {"alice": ["telegram:123"], "bob": ["feishu:ou_b", "telegram:123"]}}
    message = error_of(write(tmp_path, data))
    assert "telegram:123" in message and "'alice'" in message and "'bob'" in message


def test_enabled_telegram_needs_a_token(tmp_path: Path) -> None:
    path = write(tmp_path, {"channels": {"telegram": {"enabled": True}}})
    message = error_of(path)
    assert "channels.telegram" in message and "token" in message and "TIERCLAW_TELEGRAM_TOKEN" in message
    config = load_config(path, env={"TIERCLAW_TELEGRAM_TOKEN": OTHER_SECRET})
    assert config.channels.telegram.token.get_secret_value() == OTHER_SECRET


def test_enabled_feishu_needs_app_id_and_secret(tmp_path: Path) -> None:
    path = write(tmp_path, {"channels": {"feishu": {"enabled": True, "appSecret": OTHER_SECRET}}})
    message = error_of(path)
    assert "appId" in message and "TIERCLAW_FEISHU_APP_ID" in message
    assert "TIERCLAW_FEISHU_APP_SECRET" not in message  # the secret is there; only the id is missing
    assert OTHER_SECRET not in message
    assert load_config(path, env={"TIERCLAW_FEISHU_APP_ID": "cli_a1"}).channels.feishu.app_id == "cli_a1"


def test_telegram_webhook_mode_needs_a_public_url_and_a_valid_secret(tmp_path: Path) -> None:
    tg = {"enabled": True, "token": OTHER_SECRET, "mode": "webhook"}
    message = error_of(write(tmp_path, {"channels": {"telegram": tg}}))
    assert "webhook.url is empty" in message
    tg["webhook"] = {"url": "http://bot.example.com/tg"}
    assert "https" in error_of(write(tmp_path, {"channels": {"telegram": tg}}))
    tg["webhook"] = {"url": "https://bot.example.com/tg", "secretToken": "has spaces!"}
    message = error_of(write(tmp_path, {"channels": {"telegram": tg}}))
    assert "secretToken" in message and "has spaces" not in message  # a secret is never echoed
    tg["webhook"] = {"url": "https://bot.example.com/tg", "secretToken": "ok_Secret-1"}
    config = load_config(write(tmp_path, {"channels": {"telegram": tg}}), env={})
    assert config.channels.telegram.webhook.secret_token.get_secret_value() == "ok_Secret-1"


def test_endpoints_are_https_or_this_machine(tmp_path: Path) -> None:
    def channels(**sections: Any) -> Path:
        return write(tmp_path, {"channels": sections})

    assert "baseUrl" in error_of(channels(telegram={"baseUrl": "http://api.example.com/bot"}))
    local = load_config(channels(telegram={"baseUrl": "http://127.0.0.1:8081/bot"}), env={})
    assert local.channels.telegram.base_url == "http://127.0.0.1:8081/bot"
    for name, url in (("feishu", "https://open.feishu.cn"), ("lark", "https://open.larksuite.com")):
        assert load_config(channels(feishu={"domain": name}), env={}).channels.feishu.domain_url() == url
    own = load_config(channels(feishu={"domain": "http://localhost:9999/"}), env={})
    assert own.channels.feishu.domain_url() == "http://localhost:9999"
    assert "domain" in error_of(channels(feishu={"domain": "open.feishu.cn"}))
    assert "domain" in error_of(channels(feishu={"domain": "https://open.feishu.cn/open-apis"}))


def test_feishu_callback_mode_needs_the_verification_token_and_encrypt_key(tmp_path: Path) -> None:
    fs = {"enabled": True, "appId": "cli_a", "appSecret": OTHER_SECRET, "mode": "callback"}
    message = error_of(write(tmp_path, {"channels": {"feishu": fs}}))
    assert "verificationToken" in message and "TIERCLAW_FEISHU_VERIFICATION_TOKEN" in message
    assert "encryptKey" in message and "signature" in message
    env = {"TIERCLAW_FEISHU_VERIFICATION_TOKEN": "vt"}
    assert "encryptKey" in error_of(write(tmp_path, {"channels": {"feishu": fs}}), env)
    config = load_config(
        write(tmp_path, {"channels": {"feishu": fs}}), env={**env, "TIERCLAW_FEISHU_ENCRYPT_KEY": "ek"}
    )
    assert config.channels.feishu.mode == "callback"


def test_numeric_allow_from_ids_are_read_as_text(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path, {"channels": {"telegram": {"allowFrom": [123456789, "alice"]}}}), env={}
    )
    assert config.channels.telegram.allow_from == ["123456789", "alice"]
    assert "allowFrom" in error_of(write(tmp_path, {"channels": {"telegram": {"allowFrom": [True]}}}))


def test_disabled_channels_need_nothing(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, {"channels": {"telegram": {"enabled": False}}}), env={})
    assert config.channels.telegram.enabled is False


# --------------------------------------------------------------------------- the memory model's provider


def test_memory_falls_back_to_main_provider_model_and_default_tokens(tmp_path: Path) -> None:
    path = write(tmp_path, {"provider": {"apiKey": LONG_SECRET}, "agent": {"model": "main-model"}})
    config = load_config(path, env={})
    assert config.memory.provider is None
    assert config.memory_provider() is config.provider
    assert config.memory_model() == "main-model"
    assert config.memory_max_tokens() == DEFAULT_MEMORY_MAX_TOKENS == 2048
    assert config.has_api_key(config.memory_provider())


def test_memory_own_provider_model_and_tokens(tmp_path: Path) -> None:
    data = {
        "memory": {
            "model": "cheap",
            "maxTokens": 512,
            "provider": {"baseUrl": "https://mem.example/v1", "apiKey": "sk-mem"},
        }
    }
    config = load_config(write(tmp_path, data), env={})
    assert config.memory_provider().base_url == "https://mem.example/v1"
    assert config.provider.base_url == "https://api.openai.com/v1"
    assert config.memory_model() == "cheap"
    assert config.memory_max_tokens() == 512
    assert not config.has_api_key()
    assert config.has_api_key(config.memory_provider())


@pytest.mark.parametrize("memory_provider", ["absent", None])
def test_memory_api_key_alone_copies_the_main_provider(tmp_path: Path, memory_provider: Any) -> None:
    data: dict[str, Any] = {
        "provider": {"baseUrl": "https://main.example/v1", "apiKey": "sk-main", "maxRetries": 7}
    }
    if memory_provider != "absent":
        data["memory"] = {"provider": memory_provider}
    config = load_config(write(tmp_path, data), env={"TIERCLAW_MEMORY_API_KEY": "sk-memory"})
    mem = config.memory_provider()
    assert mem is not config.provider
    assert mem.api_key.get_secret_value() == "sk-memory"
    assert mem.base_url == "https://main.example/v1"
    assert mem.max_retries == 7
    assert config.provider.api_key.get_secret_value() == "sk-main"


def test_memory_base_url_alone_keeps_the_main_key(tmp_path: Path) -> None:
    path = write(tmp_path, {"provider": {"apiKey": "sk-main"}})
    config = load_config(path, env={"TIERCLAW_MEMORY_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert config.memory_provider().base_url == "http://127.0.0.1:8000/v1"
    assert config.memory_provider().api_key.get_secret_value() == "sk-main"
    assert config.provider.base_url == "https://api.openai.com/v1"


def test_memory_env_overrides_an_existing_memory_provider(tmp_path: Path) -> None:
    data = {"memory": {"provider": {"baseUrl": "https://mem.example/v1", "apiKey": "sk-file"}}}
    config = load_config(write(tmp_path, data), env={"TIERCLAW_MEMORY_API_KEY": "sk-env"})
    assert config.memory_provider().api_key.get_secret_value() == "sk-env"
    assert config.memory_provider().base_url == "https://mem.example/v1"


# --------------------------------------------------------------------------- secrets


def test_secrets_never_appear_in_error_messages(tmp_path: Path) -> None:
    data = {
        "provider": {"apiKey": LONG_SECRET, "apikey": LONG_SECRET, "timeoutSeconds": -1},
        "channels": {"telegram": {"enabled": True, "token": 123456789012345}, "feishu": {"appSecret": ["x"]}},
    }
    env = {"TIERCLAW_FEISHU_ENCRYPT_KEY": OTHER_SECRET, "TIERCLAW_MEMORY_API_KEY": OTHER_SECRET}
    message = error_of(write(tmp_path, data), env)
    assert "provider.apikey: unknown key" in message
    assert "channels.telegram.token" in message and "expected a string" in message
    assert LONG_SECRET not in message and OTHER_SECRET not in message
    assert "123456789012345" not in message
    assert "CRET" not in message and "DDEN" not in message


def test_redacted_masks_every_secret(tmp_path: Path) -> None:
    data = {
        "provider": {"apiKey": LONG_SECRET},
        "memory": {"provider": {"apiKey": "short-key"}},
        "channels": {"telegram": {"token": OTHER_SECRET}, "feishu": {"appSecret": "abc", "encryptKey": ""}},
    }
    out = redacted(
        load_config(write(tmp_path, data), env={"TIERCLAW_FEISHU_VERIFICATION_TOKEN": LONG_SECRET})
    )
    text = json.dumps(out, ensure_ascii=False)
    assert LONG_SECRET not in text and OTHER_SECRET not in text and "short-key" not in text
    assert out["provider"]["apiKey"] == "…CRET"
    assert out["memory"]["provider"]["apiKey"] == "****"
    assert out["channels"]["telegram"]["token"] == "…DDEN"
    assert out["channels"]["feishu"]["appSecret"] == "****"
    assert out["channels"]["feishu"]["encryptKey"] == "(not set)"
    assert out["channels"]["feishu"]["verificationToken"] == "…CRET"
    assert out["memory"]["extraction"]["quietGap"] == "3m"  # JSON spelling throughout


def test_masked_secret() -> None:
    assert masked_secret("") == "(not set)"
    assert masked_secret("12345678901") == "****"
    assert masked_secret("123456789012") == "…9012"
    from pydantic import SecretStr

    assert masked_secret(SecretStr(LONG_SECRET)) == "…CRET"


def test_repr_of_config_hides_secrets(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, {"provider": {"apiKey": LONG_SECRET}}), env={})
    assert LONG_SECRET not in repr(config) and LONG_SECRET not in str(config)


# --------------------------------------------------------------------------- the example file


def test_example_file_is_exactly_example_config() -> None:
    text = (REPO / "config.example.json").read_text(encoding="utf-8")
    assert json.loads(text) == example_config()
    assert text == json.dumps(example_config(), indent=2, ensure_ascii=False) + "\n"


def test_example_config_has_every_option_with_its_default() -> None:
    example = example_config()
    assert example["memory"]["model"] is None
    assert example["memory"]["maxTokens"] is None
    assert example["memory"]["provider"] is None
    assert example["memory"]["extraction"]["quietGap"] == "3m"
    assert example["provider"]["apiKey"] == ""

    # Every field of every model is present, in JSON spelling.
    def keys(model: Any) -> set[str]:
        return {f.alias or n for n, f in model.model_fields.items()}

    assert set(example) == keys(Config)
    assert set(example["channels"]["feishu"]) >= {"appId", "appSecret", "verificationToken", "encryptKey"}


def test_example_file_loads_to_the_defaults() -> None:
    config = load_config(REPO / "config.example.json", env={})
    assert config.source == REPO / "config.example.json"
    assert redacted(config) == redacted(Config())
