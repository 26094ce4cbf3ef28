"""``gateway``: the replica id and the operations endpoints' address (gateway/config/schema.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.config import ConfigError, load_config


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_ops_endpoints_are_off_unless_a_port_is_set_and_a_replica_id_is_one_word(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, {}), env={})
    assert (config.gateway.http.host, config.gateway.http.port, config.gateway.replica_id) == (
        "127.0.0.1",
        None,
        "",
    )
    with pytest.raises(ConfigError, match="replicaId"):
        load_config(write(tmp_path, {"gateway": {"replicaId": "two words"}}), env={})
    with pytest.raises(ConfigError, match="port"):
        load_config(write(tmp_path, {"gateway": {"http": {"port": 70000}}}), env={})
