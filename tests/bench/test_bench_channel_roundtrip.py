"""bench/channel_roundtrip.py at a tiny size: the real gateway process answers both platforms; --json keys."""

from __future__ import annotations

import json

import pytest

from bench.channel_roundtrip import main

CONTRACT_KEYS = (
    "telegram_polling_msgs_per_s",
    "telegram_polling_p95_ms",
    "feishu_callback_msgs_per_s",
    "feishu_callback_p95_ms",
)


def test_tiny_run_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--chats", "2", "--messages", "2", "--serial", "3", "--model-stub", "thread", "--json"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    for key in CONTRACT_KEYS:
        assert isinstance(result[key], float) and result[key] > 0, key
    assert result["telegram_polling_messages"] == 4 and result["feishu_callback_messages"] == 4
    assert result["telegram_polling_p50_ms"] <= result["telegram_polling_p95_ms"]
    assert "telegram_polling" in out and "feishu_callback" in out


@pytest.mark.parametrize("argv", [["--chats", "0"], ["--serial", "0"], ["--messages", "x"]])
def test_bad_arguments_exit_non_zero(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code not in (0, None)
    assert "error" in capsys.readouterr().err
