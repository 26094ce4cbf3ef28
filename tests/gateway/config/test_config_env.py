"""gateway.config's environment: ``TIERCLAW_…`` overrides (every documented one), unknown variables, proxy
keys, and the OpenAI SDK's own variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.config import (
    ENV_OVERRIDES,
    ConfigError,
    load_config,
)
from tests.support.config_files import LONG_SECRET, error_of, write

# --------------------------------------------------------------------------- environment overrides


def test_env_overrides_win_over_the_file(tmp_path: Path) -> None:
    data = {"agent": {"model": "file-model"}, "memory": {"enabled": True, "dbPath": "/file/memory.db"}}
    path = write(tmp_path, data)
    env = {
        "TIERCLAW_MODEL": "env-model",
        "TIERCLAW_MEMORY_ENABLED": "false",
        "TIERCLAW_MEMORY_DB": str(tmp_path / "env.db"),
        "TIERCLAW_PROVIDER_API_KEY": LONG_SECRET,
    }
    config = load_config(path, env=env)
    assert config.agent.model == "env-model"
    assert config.memory.enabled is False
    assert config.db_path() == tmp_path / "env.db"
    assert config.provider.api_key.get_secret_value() == LONG_SECRET
    assert config.has_api_key()


def test_empty_env_var_counts_as_unset(tmp_path: Path) -> None:
    path = write(tmp_path, {"agent": {"model": "file-model"}})
    assert load_config(path, env={"TIERCLAW_MODEL": "", "TIERCLAW_TIMEZONE": ""}).agent.model == "file-model"


def test_env_error_names_the_variable_and_field(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, {}), {"TIERCLAW_MEMORY_ENABLED": "perhaps"})
    assert "TIERCLAW_MEMORY_ENABLED (memory.enabled)" in message
    assert "true or false" in message and '"perhaps"' in message


def test_env_override_errors_without_a_file(home: Path) -> None:
    message = error_of(None, {"TIERCLAW_PROVIDER_TYPE": "anthropic"})
    assert "TIERCLAW_PROVIDER_TYPE (provider.type)" in message and "built-in defaults" in message


# A valid value for every override, and what the field then holds (JSON spelling, secrets revealed).
SAMPLES: dict[str, tuple[str, Any]] = {
    "TIERCLAW_PROVIDER_TYPE": ("offline", "offline"),
    "TIERCLAW_PROVIDER_API_KEY": ("sk-main", "sk-main"),
    "TIERCLAW_PROVIDER_BASE_URL": ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
    "TIERCLAW_MODEL": ("m-main", "m-main"),
    "TIERCLAW_WORKSPACE": ("/srv/ws", "/srv/ws"),
    "TIERCLAW_MEMORY_ENABLED": ("0", False),
    "TIERCLAW_MEMORY_DB": ("/srv/m.db", "/srv/m.db"),
    "TIERCLAW_MEMORY_MODEL": ("m-mem", "m-mem"),
    "TIERCLAW_MEMORY_API_KEY": ("sk-mem", "sk-mem"),
    "TIERCLAW_MEMORY_BASE_URL": ("https://mem.example/v1", "https://mem.example/v1"),
    "TIERCLAW_TELEGRAM_TOKEN": ("123:abc", "123:abc"),
    "TIERCLAW_FEISHU_APP_ID": ("cli_x", "cli_x"),
    "TIERCLAW_FEISHU_APP_SECRET": ("fs-secret", "fs-secret"),
    "TIERCLAW_FEISHU_VERIFICATION_TOKEN": ("vt", "vt"),
    "TIERCLAW_FEISHU_ENCRYPT_KEY": ("ek", "ek"),
    "TIERCLAW_TIMEZONE": ("Europe/Berlin", "Europe/Berlin"),
    "TIERCLAW_DATABASE_URL": ("postgresql://tc:pw@db/memory", "postgresql://tc:pw@db/memory"),
    # enabled=true alone fails validation (no token), so the sample switches a channel off
    "TIERCLAW_TELEGRAM_ENABLED": ("false", False),
    "TIERCLAW_FEISHU_ENABLED": ("false", False),
    "TIERCLAW_TELEGRAM_ALLOW_FROM": (" 123, alice ,,", ["123", "alice"]),
    "TIERCLAW_FEISHU_ALLOW_FROM": ("*", ["*"]),
    "TIERCLAW_EMBEDDING_PROVIDER": ("none", "none"),
    "TIERCLAW_EMBEDDING_MODEL": ("text-embedding-3-small", "text-embedding-3-small"),
    "TIERCLAW_EMBEDDING_API_KEY": ("sk-emb", "sk-emb"),
    "TIERCLAW_EMBEDDING_BASE_URL": ("https://emb.example/v1", "https://emb.example/v1"),
    "TIERCLAW_GATEWAY_REPLICA_ID": ("gw-a", "gw-a"),
    "TIERCLAW_GATEWAY_HTTP_HOST": ("0.0.0.0", "0.0.0.0"),
    "TIERCLAW_GATEWAY_HTTP_PORT": ("9464", 9464),
    "TIERCLAW_TRANSCRIPTION_API_KEY": ("gsk-transcribe", "gsk-transcribe"),
    "TIERCLAW_TRANSCRIPTION_BASE_URL": ("https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1"),
}


def test_every_documented_override_is_listed() -> None:
    names = [o.name for o in ENV_OVERRIDES]
    assert len(names) == len(set(names))
    assert set(names) == set(SAMPLES)
    assert all(o.help for o in ENV_OVERRIDES)


@pytest.mark.parametrize("override", ENV_OVERRIDES, ids=lambda o: o.name)
def test_each_override_sets_its_field(tmp_path: Path, override: Any) -> None:
    raw, expected = SAMPLES[override.name]
    config = load_config(write(tmp_path, {}), env={override.name: raw})
    node: Any = config.model_dump(mode="json", by_alias=True, context={"secrets": "reveal"})
    for key in override.path:
        node = node[key]
    assert node == expected
    assert override.field == ".".join(override.path)


def test_an_unknown_tierclaw_variable_is_a_warning_naming_the_closest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="tierclaw.gateway"):
        config = load_config(None, env={"TIERCLAW_MODLE": "gpt-x", "TIERCLAW_MODEL": "m", "HOME_X": "1"})
    assert config.agent.model == "m"
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [  # the README's "[gateway] …" prefix (issue 37, item 11)
        "[gateway] environment variable TIERCLAW_MODLE is not a tierclaw setting and is ignored; "
        "did you mean TIERCLAW_MODEL?"
    ]
    assert "gpt-x" not in caplog.text  # a value is never echoed (it may be a secret)


@pytest.mark.parametrize("where", [("provider",), ("channels", "telegram")])
def test_a_proxy_key_says_how_to_set_a_proxy(tmp_path: Path, where: tuple[str, ...]) -> None:
    raw: dict = {}
    node = raw
    for key in where:
        node = node.setdefault(key, {})
    node["proxy"] = "http://user:secret@proxy:3128"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert "HTTPS_PROXY" in str(caught.value) and ".proxy" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_openai_sdk_variables_fill_a_missing_key_and_url(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "OPENAI_API_KEY": "sk-from-the-sdk-0042", "OPENAI_BASE_URL": "http://h/v1"}
    config = load_config(None, env=env)
    assert config.provider.api_key.get_secret_value() == "sk-from-the-sdk-0042"
    assert config.provider.base_url == "http://h/v1"
    assert config.api_key_source == "OPENAI_API_KEY"
    assert config.memory_provider().api_key.get_secret_value() == "sk-from-the-sdk-0042"


def test_tierclaw_settings_win_over_the_openai_variables(tmp_path: Path) -> None:
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"provider": {"apiKey": "sk-in-the-file-0001", "baseUrl": "http://f/v1"}}))
    env = {"OPENAI_API_KEY": "sk-from-the-sdk-0042", "OPENAI_BASE_URL": "http://h/v1"}
    config = load_config(file, env=env)
    assert config.provider.api_key.get_secret_value() == "sk-in-the-file-0001"
    assert config.provider.base_url == "http://f/v1" and config.api_key_source == "config file"
    config = load_config(file, env={**env, "TIERCLAW_PROVIDER_API_KEY": "sk-from-tierclaw-var"})
    assert config.provider.api_key.get_secret_value() == "sk-from-tierclaw-var"
    assert config.api_key_source == "TIERCLAW_PROVIDER_API_KEY"


def test_no_key_anywhere_and_the_offline_provider(tmp_path: Path) -> None:
    assert load_config(None, env={"HOME": str(tmp_path)}).api_key_source == "none"
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"provider": {"type": "offline"}}))
    config = load_config(file, env={"OPENAI_API_KEY": "sk-from-the-sdk-0042"})
    assert not config.has_api_key() and config.api_key_source == "none"


def test_a_bad_openai_base_url_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as bad:
        load_config(None, env={"HOME": str(tmp_path), "OPENAI_BASE_URL": "not a url"})
    assert "OPENAI_BASE_URL" in str(bad.value)
