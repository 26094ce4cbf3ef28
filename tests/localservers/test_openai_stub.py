"""The local OpenAI stub, checked with the real openai client (v3 goes through httpx2: no mocking)."""

from __future__ import annotations

import asyncio
import base64
import json
import math
import struct

import openai
import pytest

from localservers.openai_server import (
    DEFAULT_EMBEDDING_DIM,
    DEFAULT_JSON_CONTENT,
    OpenAIStub,
    StubReply,
    stub_embedding,
)
from tests.support.stub_clients import client_for

pytestmark = pytest.mark.usefixtures("close_stub_clients")


async def ask(client: openai.AsyncOpenAI, text: str = "hello", **kwargs) -> str | None:
    resp = await client.chat.completions.create(
        model="m-test", messages=[{"role": "user", "content": text}], **kwargs
    )
    return resp.choices[0].message.content


def test_base_url_points_at_a_local_port() -> None:
    with OpenAIStub() as stub:
        assert stub.base_url.startswith("http://127.0.0.1:")
        assert stub.base_url.endswith("/v1")
        assert stub.port > 0


async def test_default_chat_reply_echoes_last_line_of_last_user_message() -> None:
    with OpenAIStub() as stub:
        client = client_for(stub)
        resp = await client.chat.completions.create(
            model="m-test",
            messages=[
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "first message"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "memory block\n\nwhat is up?"},
            ],
        )
        assert resp.choices[0].message.content == "stub reply: what is up?"
        assert resp.choices[0].finish_reason == "stop"
        assert resp.model == "m-test"
        assert len(stub.requests) == 1
        assert stub.requests[0]["messages"][0] == {"role": "system", "content": "be brief"}
        assert stub.chat_requests() == stub.requests
        assert stub.json_requests() == []


async def test_default_json_reply_for_json_object_requests() -> None:
    with OpenAIStub() as stub:
        content = await ask(client_for(stub), response_format={"type": "json_object"}, temperature=0.3)
        assert json.loads(content or "") == {"facts": [], "summary": ""}
        assert content == DEFAULT_JSON_CONTENT
        assert len(stub.json_requests()) == 1
        assert stub.json_requests()[0]["temperature"] == 0.3
        assert stub.chat_requests() == []


async def test_script_is_consumed_in_order_before_the_responder() -> None:
    seen: list[str] = []

    def responder(body: dict) -> StubReply:
        seen.append(body["messages"][-1]["content"])
        return StubReply(content="from responder")

    with OpenAIStub(responder) as stub:
        stub.script(StubReply(content="one"), StubReply(content="two"), "three")
        assert stub.pending() == 3
        client = client_for(stub)
        replies = [await ask(client, f"q{i}") for i in range(5)]
        assert replies == ["one", "two", "three", "from responder", "from responder"]
        assert seen == ["q3", "q4"]
        assert [r["messages"][-1]["content"] for r in stub.requests] == [f"q{i}" for i in range(5)]
        assert stub.pending() == 0


async def test_chinese_content_round_trips() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content='{"summary": "用户喜欢乌龙茶"}'))
        content = await ask(client_for(stub), "我喜欢喝乌龙茶")
        assert json.loads(content or "") == {"summary": "用户喜欢乌龙茶"}
        assert stub.requests[0]["messages"][0]["content"] == "我喜欢喝乌龙茶"


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
async def test_error_status_raises_the_matching_openai_error(status: int, error: type) -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=status, content="scripted failure"))
        with pytest.raises(error) as info:
            await ask(client_for(stub))
        assert info.value.status_code == status
        assert "scripted failure" in str(info.value)
        assert len(stub.requests) == 1  # max_retries=0: no second attempt


async def test_retry_after_zero_then_success_and_retry_count_header() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=429, headers={"retry-after": "0"}), StubReply(content="finally"))
        assert await ask(client_for(stub, max_retries=1)) == "finally"
        assert len(stub.requests) == 2
        assert [h.get("x-stainless-retry-count") for h in stub.request_headers] == ["0", "1"]


async def test_delay_triggers_client_timeout_and_stop_does_not_wait_for_it() -> None:
    stub = OpenAIStub().start()
    try:
        stub.script(StubReply(content="too late", delay=3600.0))  # an answer that never comes
        with pytest.raises(openai.APITimeoutError):
            await ask(client_for(stub, timeout=0.3))
        assert len(stub.requests) == 1
    finally:
        # stop returns without waiting out the delayed answer (a ceiling far below its hour)
        await asyncio.wait_for(asyncio.to_thread(stub.stop), timeout=60)


async def test_raw_non_json_error_body_raises_an_api_error() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=502, raw_body="<html>bad gateway</html>"))
        with pytest.raises(openai.APIError) as info:
            await ask(client_for(stub))
        assert isinstance(info.value, openai.InternalServerError)


async def test_raw_non_json_success_body_is_not_an_openai_error() -> None:
    # What the SDK really does with a 200 whose body is not JSON: json.JSONDecodeError (a ValueError),
    # not openai.APIError. Model wrappers must catch it themselves.
    with OpenAIStub() as stub:
        stub.script(StubReply(raw_body="<html>bad gateway</html>"))
        with pytest.raises(ValueError) as info:
            await ask(client_for(stub))
        assert not isinstance(info.value, openai.APIError)


async def test_raw_body_content_type_can_be_overridden() -> None:
    # With a non-JSON content type the SDK hands back the text itself instead of a ChatCompletion.
    with OpenAIStub() as stub:
        stub.script(StubReply(raw_body="<html>x</html>", headers={"Content-Type": "text/html"}))
        resp = await client_for(stub).chat.completions.create(
            model="m-test", messages=[{"role": "user", "content": "x"}]
        )
        assert resp == "<html>x</html>"


async def test_raw_body_is_sent_verbatim() -> None:
    body = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "raw-model",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "raw!"}, "finish_reason": "stop"}
            ],
        }
    )
    with OpenAIStub() as stub:
        stub.script(StubReply(raw_body=body))
        resp = await client_for(stub).chat.completions.create(
            model="m-test", messages=[{"role": "user", "content": "x"}]
        )
        assert resp.model == "raw-model"
        assert resp.choices[0].message.content == "raw!"


async def test_responder_exception_becomes_a_500() -> None:
    def responder(body: dict) -> StubReply:
        raise ValueError("boom")

    with OpenAIStub(responder) as stub:
        with pytest.raises(openai.InternalServerError) as info:
            await ask(client_for(stub))
        assert "boom" in str(info.value)


async def test_models_endpoint() -> None:
    with OpenAIStub() as stub:
        page = await client_for(stub).models.list()
        assert [m.id for m in page.data] == ["stub-model"]
        assert stub.requests == []  # only chat completions are recorded


async def test_concurrent_requests_are_all_recorded_and_answered() -> None:
    with OpenAIStub() as stub:
        # A small listen backlog drops SYNs under a burst of connections and stalls each for 1 s: the
        # stub listens with room for a burst (how fast it answers is bench.channel_roundtrip's to measure).
        assert stub._server is not None and stub._server.request_queue_size >= 128
        client = client_for(stub)
        replies = await asyncio.gather(*(ask(client, f"n{i}") for i in range(30)))
        assert replies == [f"stub reply: n{i}" for i in range(30)]
        assert sorted(r["messages"][0]["content"] for r in stub.requests) == sorted(
            f"n{i}" for i in range(30)
        )
        assert len(stub.request_headers) == 30


async def test_await_for_does_not_block_the_event_loop() -> None:
    async with OpenAIStub() as stub:
        stub.script(StubReply(content="slow", delay=0.2))
        task = asyncio.create_task(ask(client_for(stub)))
        # The request is sent by a task on this event loop: an await_for that blocked the loop while
        # polling would never see it (and time out) — no race on the reply's delay is needed to show it.
        assert await stub.await_for(lambda s: len(s.requests) == 1, timeout=30.0)
        assert await task == "slow"
        assert len(stub.requests) == 1  # answered once: no retry was made


def test_wait_for_from_sync_code_with_the_sync_client() -> None:
    with OpenAIStub() as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0, timeout=30.0)
        resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "sync"}])
        assert resp.choices[0].message.content == "stub reply: sync"
        assert stub.wait_for(lambda s: len(s.requests) == 1, timeout=30.0)
        assert len(stub.requests) == 1  # the call returned: no second request of it can come


async def test_reset_forgets_requests_and_script() -> None:
    with OpenAIStub() as stub:
        stub.script("left over")
        stub.reset()
        assert await ask(client_for(stub), "after reset") == "stub reply: after reset"
        assert len(stub.requests) == 1


async def test_after_stop_the_client_cannot_connect() -> None:
    stub = OpenAIStub().start()
    client = client_for(stub)
    assert await ask(client) == "stub reply: hello"
    stub.stop()
    stub.stop()  # idempotent
    with pytest.raises(openai.APIConnectionError):
        await ask(client)


# --- /v1/embeddings ------------------------------------------------------------------------------------


def test_stub_embedding_is_deterministic_unit_length_and_text_specific() -> None:
    a = stub_embedding("我喜欢喝乌龙茶")
    assert a == stub_embedding("我喜欢喝乌龙茶")
    assert a != stub_embedding("我喜欢喝红茶")
    assert len(a) == DEFAULT_EMBEDDING_DIM
    assert math.isclose(sum(v * v for v in a), 1.0, rel_tol=1e-9)
    long = stub_embedding("x", 100)  # more than one SHA-256 block
    assert len(long) == 100
    assert len(set(long)) == 100


async def test_embeddings_default_float_answer() -> None:
    with OpenAIStub() as stub:
        resp = await client_for(stub).embeddings.create(
            model="e-test", input=["hello", "你好"], encoding_format="float"
        )
        assert resp.model == "e-test"
        assert [d.index for d in resp.data] == [0, 1]
        assert resp.data[0].embedding == stub_embedding("hello")
        assert resp.data[1].embedding == stub_embedding("你好")
        assert stub.embedding_inputs() == ["hello", "你好"]
        assert stub.embedding_requests[0]["encoding_format"] == "float"
        assert stub.requests == []  # embeddings are recorded apart from chat completions


async def test_embeddings_sdk_default_asks_base64_and_decodes_it() -> None:
    with OpenAIStub() as stub:
        resp = await client_for(stub).embeddings.create(model="e", input=["hello"])
        assert stub.embedding_requests[0]["encoding_format"] == "base64"
        assert resp.data[0].embedding == pytest.approx(stub_embedding("hello"), abs=1e-7)  # via float32


async def test_embeddings_base64_is_little_endian_float32() -> None:
    with OpenAIStub() as stub:
        resp = await client_for(stub).embeddings.create(model="e", input="one", encoding_format="base64")
        raw = resp.data[0].embedding
        assert isinstance(raw, str)  # an explicit format is not decoded by the SDK
        values = struct.unpack(f"<{DEFAULT_EMBEDDING_DIM}f", base64.b64decode(raw))
        assert values == pytest.approx(stub_embedding("one"), abs=1e-7)
        assert stub.embedding_inputs() == ["one"]  # a single string input counts as one


async def test_embeddings_honour_dimensions() -> None:
    with OpenAIStub() as stub:
        resp = await client_for(stub).embeddings.create(
            model="e", input=["a"], dimensions=3, encoding_format="float"
        )
        assert len(resp.data[0].embedding) == 3
        assert stub.embedding_requests[0]["dimensions"] == 3


@pytest.mark.parametrize("bad_input", [[], ["ok", ""]])
async def test_embeddings_refuse_empty_input_like_the_api(bad_input: list[str]) -> None:
    with OpenAIStub() as stub:
        with pytest.raises(openai.BadRequestError):
            await client_for(stub).embeddings.create(model="e", input=bad_input)
        assert len(stub.embedding_requests) == 1


async def test_embeddings_script_failure_then_vectors_then_default() -> None:
    with OpenAIStub() as stub:
        stub.script("a chat reply")  # the chat script is not consumed by embeddings
        stub.script_embeddings(
            StubReply(status=500, content="scripted failure"),
            StubReply(vectors=[[3.0, 4.0]]),
        )
        assert stub.pending_embeddings() == 2
        client = client_for(stub)
        with pytest.raises(openai.InternalServerError) as info:
            await client.embeddings.create(model="e", input=["x"])
        assert "scripted failure" in str(info.value)
        resp = await client.embeddings.create(model="e", input=["x"])
        assert resp.data[0].embedding == [3.0, 4.0]  # sent as given, also over base64
        resp = await client.embeddings.create(model="e", input=["x"])
        assert resp.data[0].embedding == pytest.approx(stub_embedding("x"), abs=1e-7)
        assert stub.pending_embeddings() == 0
        assert stub.pending() == 1
        assert len(stub.embedding_requests) == 3
        with pytest.raises(TypeError):
            stub.script_embeddings("not a reply")  # type: ignore[arg-type]


async def test_embeddings_responder_and_delay() -> None:
    with OpenAIStub() as stub:
        stub.embedding_responder = lambda body: StubReply(vectors=[[1.0]] * len(body["input"]))
        resp = await client_for(stub).embeddings.create(model="e", input=["a", "b"])
        assert [d.embedding for d in resp.data] == [[1.0], [1.0]]
        stub.script_embeddings(StubReply(delay=3600))
        with pytest.raises(openai.APITimeoutError):
            await client_for(stub, timeout=0.3).embeddings.create(model="e", input=["a"])
        assert len(stub.embedding_request_headers) == 2
        stub.reset()
        assert stub.embedding_requests == []
        assert stub.embedding_inputs() == []
