"""Hybrid retrieval through an OpenAI-compatible embeddings API, end to end: the real ``openai`` client
against the local OpenAI-compatible server (localservers/openai_server.py), behind the real
``CachedEmbedder``.
"""

from __future__ import annotations

import asyncio

import numpy as np

from localservers.openai_server import OpenAIStub, StubReply, stub_embedding
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import EmbeddingSettings, build_embedder
from tests.support.hybrid import GENEROUS_TIMEOUT, PET_EN, ids, missing_ids, shares_no_term

# ----------------------------------------------------------------- an OpenAI-compatible API, end to end


async def test_openai_compatible_embeddings_end_to_end(engine: MemoryEngine) -> None:
    async with OpenAIStub() as stub:
        inner = build_embedder(
            EmbeddingSettings(
                provider="openai",
                model="m",
                base_url=stub.base_url,
                api_key="k",
                dimensions=8,
                max_retries=0,
            )
        )
        assert inner is not None and inner.model_key == "openai:m@8"
        cached = CachedEmbedder(inner, engine.store.vectors)
        engine.embedder = cached
        engine.embedding.query_timeout = GENEROUS_TIMEOUT
        try:
            memories = ["Prefers oolong tea in the morning", "Lives in Hangzhou", "用户的生日是六月三号"]
            written = await engine.write_many("alice", [Fact(content=c) for c in memories])
            assert [r.action for r in written] == ["inserted"] * 3
            assert await missing_ids(engine, "openai:m@8") == set()
            (request,) = stub.embedding_requests
            assert request["model"] == "m" and request["dimensions"] == 8
            assert request["input"] == memories  # one batched request for the whole write
            assert stub.embedding_request_headers[0]["authorization"] == "Bearer k"
            stored = await engine.store.db.read(
                "SELECT embedding FROM memories WHERE id = ?", (written[1].id,)
            )
            assert np.allclose(
                np.frombuffer(stored[0][0], dtype="<f4"), stub_embedding("Lives in Hangzhou", 8), atol=1e-6
            )

            # The stub's vectors carry no meaning; the exact text is its own nearest neighbour, and the
            # keyword path works as ever.
            hits = await engine.retrieve("alice", "Lives in Hangzhou", touch=False)
            assert hits[0].id == written[1].id
            assert stub.embedding_inputs()[-1] == "Lives in Hangzhou"  # the query went to the API
            assert ids(await engine.retrieve("alice", "oolong", touch=False))[0] == written[0].id

            # The same text again: the passage cache answers, the API is not called.
            before = len(stub.embedding_requests)
            again = await engine.write("alice", Fact(content="Lives in Hangzhou"))
            assert again.action == "merged" and again.id == written[1].id
            await engine.write("alice", Fact(content="Prefers oolong tea in the morning"))
            assert len(stub.embedding_requests) == before
            assert cached.hits >= 2
            # and a repeated query is served by the in-process query cache
            await engine.retrieve("alice", "Lives in Hangzhou", touch=False)
            assert len(stub.embedding_requests) == before

            # A new text is embedded with one more request.
            await engine.write("alice", Fact(content="Plays badminton on Thursdays"))
            assert len(stub.embedding_requests) == before + 1
            assert stub.embedding_inputs()[-1] == "Plays badminton on Thursdays"
        finally:
            engine.embedder = None
            await cached.close()


async def test_openai_vectors_drive_recall_without_shared_words(engine: MemoryEngine) -> None:
    """With meaningful vectors from the API (scripted by the stub), the cosine path finds the memory."""
    axes = {
        PET_EN: 0,
        "what animal lives with me?": 0,
        "Works as a nurse at the city hospital": 1,
        "Drives a blue Toyota Corolla": 2,
    }

    def responder(body: dict) -> StubReply:
        vectors = []
        for text in body["input"]:
            vector = [0.05] * 8
            vector[axes.get(text, 7)] = 1.0
            vectors.append(vector)
        return StubReply(vectors=vectors)

    async with OpenAIStub() as stub:
        stub.embedding_responder = responder
        inner = build_embedder(
            EmbeddingSettings(
                provider="openai",
                model="m",
                base_url=stub.base_url,
                api_key="k",
                dimensions=8,
                max_retries=0,
                timeout_seconds=600,
            )
        )
        assert inner is not None
        cached = CachedEmbedder(inner, engine.store.vectors)
        engine.embedder = cached
        engine.embedding.query_timeout = GENEROUS_TIMEOUT
        try:
            written = await engine.write_many("alice", [Fact(content=c) for c in (PET_EN, *list(axes)[2:])])
            query = "what animal lives with me?"
            assert shares_no_term(query, PET_EN)
            assert ids(await engine.retrieve("alice", query, touch=False)) == [written[0].id]

            # The API failing on the query: keyword-only, no exception.
            stub.script_embeddings(StubReply(status=500))
            assert await engine.retrieve("alice", "what animal is at home with me?", touch=False) == []
            assert ids(await engine.retrieve("alice", "Toyota", touch=False)) == [written[2].id]
            # The API too slow: cut off at the bound, keyword hits only.
            engine.embedding.query_timeout = 0.3
            stub.script_embeddings(StubReply(delay=3600))  # never answers: only the bound ends the wait
            async with asyncio.timeout(120):  # a ceiling: the client's own timeout is longer (600 s)
                hits = await engine.retrieve("alice", "hospital, any animal?", touch=False)
            assert ids(hits) == [written[1].id]
        finally:
            engine.embedder = None
            await cached.close()
