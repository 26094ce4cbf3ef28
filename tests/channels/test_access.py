"""Who may talk to the bot: channels' allowFrom lists (empty = nobody, "*" = everyone)."""

from __future__ import annotations

import logging

import pytest

from channels.access import AllowList


def test_empty_list_lets_nobody_in_and_says_how_to_change_that(caplog: pytest.LogCaptureFixture) -> None:
    allow = AllowList("telegram", [])
    assert allow.nobody
    assert not allow.allows(["123", "alice"])
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        allow.warn_if_empty()
    assert "channels.telegram.allowFrom is empty" in caplog.text


def test_star_lets_everyone_in() -> None:
    allow = AllowList("feishu", ["*"])
    assert allow.allows(["ou_anyone"]) and not allow.nobody


def test_ids_and_usernames_match_without_at_and_case() -> None:
    allow = AllowList("telegram", ["123", "@Alice", " bob "])
    assert allow.allows(["123"])
    assert allow.allows(["999", "alice"])
    assert allow.allows(["999", "BOB"])
    assert not allow.allows(["1234", "carol"])
    assert not allow.allows(["", ""])


def test_a_refused_sender_is_logged_once_with_the_line_to_add(caplog: pytest.LogCaptureFixture) -> None:
    allow = AllowList("telegram", ["1"])
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        allow.refuse("42", "@eve")
        allow.refuse("42", "@eve")
        allow.refuse("43")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert 'add "42" there' in lines[0] and "42 (@eve)" in lines[0]
    assert 'add "43" there' in lines[1]
