"""Every line tierclaw logs says which part of it speaks (README.md, "Logs"): after the time, the level and
the logger, a tag — ``[gateway]``, ``[memory]``, ``[telegram]``, ``[feishu]``, ``[dashboard]`` — starts
the message. Checked on the source with ``ast``, so a new log call without one fails here rather than in
an operator's log (issue 37, item 11: the setting-typo warning had none;
``tests/gateway/config/test_config_env.py`` checks that line itself)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tests.support import REPO

PACKAGES = ("gateway", "channels", "memory", "localservers")
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical", "log"}
LOGGER_NAMES = {"log", "logger", "_log"}
# "[gateway] …", or "[%s] …" where the channel's own name fills the tag (channels/access.py).
TAG = re.compile(r"^\[(?:[a-z]+|%s)\] ")


def _log_messages() -> Iterator[tuple[str, int, ast.expr]]:
    """(file, line, message argument) of every ``log.<level>(…)`` call in the packages."""
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                target = node.func.value
                if node.func.attr not in LOG_METHODS or not (
                    isinstance(target, ast.Name) and target.id in LOGGER_NAMES
                ):
                    continue
                args = node.args[1:] if node.func.attr == "log" else node.args
                if args:
                    yield str(path.relative_to(REPO)), node.lineno, args[0]


def _text(message: ast.expr) -> str | None:
    """The literal start of a message (a string or an f-string's first part); None when not literal."""
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        return message.value
    if isinstance(message, ast.JoinedStr) and message.values:
        first = message.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def test_every_log_message_starts_with_its_tag() -> None:
    untagged = [
        f"{path}:{line}: {text!r}"
        for path, line, message in _log_messages()
        if (text := _text(message)) is None or not TAG.match(text)
    ]
    assert untagged == []


def test_the_scan_sees_the_log_calls() -> None:
    assert sum(1 for _ in _log_messages()) > 100  # the scan itself still finds what it checks
