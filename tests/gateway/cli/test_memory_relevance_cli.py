"""``tierclaw memory search`` splits what a reply would recall from weak matches with the reply path's own
floor (``memory.relevanceFloor``), and ``memory reindex`` with nothing to do says so without a bar
(issue 27, item 5)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.cli.main import main
from localservers.openai_server import OpenAIStub

MEMORIES = ("I have a cat named Tofu", "I study quantum physics at ETH", "My sister lives in Osaka")


def setup(tmp_path: Path, capsys: pytest.CaptureFixture[str], memory: dict[str, Any]) -> list[str]:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": memory}), encoding="utf-8")
    common = ["--db", str(tmp_path / "m.db"), "--config", str(config)]
    for text in MEMORIES:
        assert main(["memory", "add", text, *common]) == 0
    capsys.readouterr()
    return common


def search(capsys: pytest.CaptureFixture[str], common: list[str], query: str, *extra: str) -> str:
    assert main(["memory", "search", query, *common, *extra]) == 0
    return capsys.readouterr().out


def test_partial_matches_go_under_weak_as_the_configured_floor_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strict = {"embedding": {"provider": "none"}, "relevanceFloor": {"keywordMatch": 0.9}}
    common = setup(tmp_path, capsys, strict)
    out = search(capsys, common, "quantum physics homework")
    assert out.startswith("no relevant matches")
    relevant, weak = out.split("\nweak (below memory.relevanceFloor")
    assert "quantum physics" in weak and "quantum" not in relevant
    rows = json.loads(search(capsys, common, "quantum physics homework", "--json"))
    assert [(r["content"], r["weak"]) for r in rows] == [("I study quantum physics at ETH", True)]

    lenient = tmp_path / "lenient"
    lenient.mkdir()
    common = setup(
        lenient, capsys, {"embedding": {"provider": "none"}, "relevanceFloor": {"keywordMatch": 0}}
    )
    out = search(capsys, common, "quantum physics homework")
    assert "quantum physics" in out and "weak" not in out  # the same match, admitted by a lower floor


def test_reindex_with_nothing_to_do_says_so_without_a_bar(
    tmp_path: Path, model: OpenAIStub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    embedding = {"provider": "openai", "model": "emb", "baseUrl": model.base_url, "apiKey": "sk-local"}
    common = setup(tmp_path, capsys, {"embedding": embedding})
    assert main(["memory", "reindex", *common]) == 0
    capsys.readouterr()

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["memory", "reindex", *common]) == 0
    assert capsys.readouterr().out.strip() == "nothing to reindex: every live memory has a openai:emb vector"
    assert terminal.getvalue() == ""  # no bar counting to zero
