"""Config values of the wrong type are refused with a message naming the field, never coerced silently
(issue 37, item 10): ``"enabled": "yes"`` is not true, ``"quietGap": 5`` is not a duration, ``"port":
"8080"`` is not a number. The environment, whose values are always text, still sets booleans and ports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway.config import load_config
from tests.support.config_files import error_of, write


@pytest.mark.parametrize(
    ("raw", "field", "expected"),
    [
        ({"channels": {"telegram": {"enabled": "yes"}}}, "channels.telegram.enabled", "true or false"),
        ({"channels": {"feishu": {"enabled": 1}}}, "channels.feishu.enabled", "true or false"),
        ({"memory": {"enabled": "false"}}, "memory.enabled", "true or false"),
        ({"agent": {"tools": 0}}, "agent.tools", "true or false"),
        ({"memory": {"extraction": {"quietGap": 5}}}, "memory.extraction.quietGap", "duration"),
        ({"memory": {"extraction": {"quietGap": "5"}}}, "memory.extraction.quietGap", "duration"),
        ({"agent": {"replyDeadline": 120}}, "agent.replyDeadline", "duration"),
        ({"dashboard": {"port": "8080"}}, "dashboard.port", "integer"),
        ({"agent": {"maxTokens": 1024.0}}, "agent.maxTokens", "integer"),
        ({"agent": {"maxTokens": "1024"}}, "agent.maxTokens", "integer"),
        ({"agent": {"temperature": "0.7"}}, "agent.temperature", "number"),
        ({"provider": {"timeoutSeconds": "60"}}, "provider.timeoutSeconds", "number"),
        ({"agent": {"model": 4}}, "agent.model", "string"),
        ({"memory": {"topK": True}}, "memory.topK", "integer"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_the_field(
    tmp_path: Path, raw: dict[str, Any], field: str, expected: str
) -> None:
    message = error_of(write(tmp_path, raw))
    assert f"{field}:" in message and expected in message


@pytest.mark.parametrize(
    ("raw", "check"),
    [
        ({"memory": {"extraction": {"quietGap": "5m"}}}, lambda c: c.memory.extraction.quiet_gap == 300),
        ({"memory": {"extraction": {"quietGap": "2.5s"}}}, lambda c: c.memory.extraction.quiet_gap == 2.5),
        ({"memory": {"extraction": {"exitFlush": 0}}}, lambda c: c.memory.extraction.exit_flush == 0),
        ({"provider": {"timeoutSeconds": 30}}, lambda c: c.provider.timeout_seconds == 30.0),
        (
            {"channels": {"telegram": {"allowFrom": [123456789]}}},
            lambda c: c.channels.telegram.allow_from == ["123456789"],
        ),
    ],
)
def test_values_of_the_right_type_still_load(tmp_path: Path, raw: dict[str, Any], check: Any) -> None:
    assert check(load_config(write(tmp_path, raw), env={}))


def test_the_environment_still_sets_booleans_and_ports(tmp_path: Path) -> None:
    env = {
        "TIERCLAW_TELEGRAM_ENABLED": "true",
        "TIERCLAW_TELEGRAM_TOKEN": "1:x",
        "TIERCLAW_GATEWAY_HTTP_PORT": "9464",
    }
    env["TIERCLAW_MEMORY_ENABLED"] = "0"
    config = load_config(write(tmp_path, {}), env=env)
    assert config.channels.telegram.enabled is True and config.memory.enabled is False
    assert config.gateway.http.port == 9464


@pytest.mark.parametrize(
    ("name", "value"), [("TIERCLAW_FEISHU_ENABLED", "perhaps"), ("TIERCLAW_GATEWAY_HTTP_PORT", "http")]
)
def test_a_bad_environment_value_names_the_variable(tmp_path: Path, name: str, value: str) -> None:
    message = error_of(write(tmp_path, {}), {name: value})
    assert name in message and f'"{value}"' in message
