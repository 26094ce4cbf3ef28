"""OpenAIChatModel against the local stub with the real AsyncOpenAI client."""

from __future__ import annotations

import logging

import openai
import pytest

from gateway.agent import ChatRequest, ModelError, OpenAIChatModel
from gateway.model_turn import Turn, turn_of
from localservers.openai_server import OpenAIStub, StubReply
from tests.support.stub_clients import client_for

SECRET_KEY = "sk-secret-CHAT-9876543210fedcba"

pytestmark = pytest.mark.usefixtures("close_stub_clients")


def make_model(stub: OpenAIStub, *, max_retries: int = 0, timeout: float = 60.0, **kwargs) -> OpenAIChatModel:
    client = client_for(stub, api_key=SECRET_KEY, max_retries=max_retries, timeout=timeout)
    return OpenAIChatModel(client, "chat-model", **kwargs)


def request() -> ChatRequest:
    return ChatRequest(
        system="You are tierclaw.",
        history=[("user", "hi there"), ("assistant", "hello!")],
        user_text="Where do I live?",
        memory_block="<memories>\n- The user lives in Lisbon.\n</memories>",
    )


async def test_reply_text_is_returned_stripped() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="  You live in Lisbon.\n"))
        model = make_model(stub)
        assert await model.reply(request()) == "You live in Lisbon."
        assert model.label == "openai:chat-model"


async def test_request_holds_messages_in_order_and_settings() -> None:
    with OpenAIStub() as stub:
        model = make_model(stub, max_tokens=321, temperature=0.2)
        reply = await model.reply(request())
        assert reply == "stub reply: Where do I live?"
        assert len(stub.chat_requests()) == 1 and stub.json_requests() == []
        body = stub.requests[0]
        assert body["model"] == "chat-model"
        assert body["max_tokens"] == 321
        assert body["temperature"] == 0.2
        assert "response_format" not in body
        assert body["messages"] == [
            {"role": "system", "content": "You are tierclaw."},
            {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": "hello!"},
            {
                "role": "user",
                "content": "<memories>\n- The user lives in Lisbon.\n</memories>\n\nWhere do I live?",
            },
        ]


async def test_defaults_and_no_memory_block() -> None:
    with OpenAIStub() as stub:
        await make_model(stub).reply(ChatRequest(system="s", user_text="just this"))
        body = stub.requests[0]
        assert (body["max_tokens"], body["temperature"]) == (1024, 0.7)
        assert body["messages"] == [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "just this"},
        ]


async def test_chinese_reply_round_trips() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="你住在里斯本。"))
        req = ChatRequest(system="系统", user_text="我住在哪里？")
        assert await make_model(stub).reply(req) == "你住在里斯本。"
        assert stub.requests[0]["messages"][1]["content"] == "我住在哪里？"


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        (StubReply(content=""), "empty reply"),
        (StubReply(content="  \n "), "empty reply"),
        (StubReply(content=None), "no message content"),
        (StubReply(status=500), "HTTP 500"),
        (StubReply(status=429), "HTTP 429"),
        (StubReply(status=404), "NotFoundError"),
        (StubReply(raw_body="<html>bad gateway</html>"), "not JSON"),
        (StubReply(raw_body="<html>x</html>", headers={"content-type": "text/html"}), "no message content"),
    ],
)
async def test_failures_raise_model_error(reply: StubReply, cause: str) -> None:
    with OpenAIStub() as stub:
        stub.script(reply)
        with pytest.raises(ModelError) as info:
            await make_model(stub).reply(request())
        message = str(info.value)
        assert cause in message and "openai:chat-model" in message
        assert "Lisbon" not in message and "Where do I live" not in message
        assert len(stub.requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        "{}",
        '{"choices": null}',
        '{"choices": []}',
        '{"choices": ["x"]}',
        '{"choices": [{"message": null}]}',
        '{"choices": [{"message": {"content": 5}}]}',
        "[1, 2]",
    ],
)
async def test_a_completion_of_another_shape_has_no_message_content(body: str) -> None:
    """The reply's JSON is read as it came (not through the SDK's ``ChatCompletion``): any other shape is
    a reply without content, never a crash."""
    with OpenAIStub() as stub:
        stub.script(StubReply(raw_body=body))
        with pytest.raises(ModelError, match="no message content"):
            await make_model(stub).reply(request())


async def test_a_whole_reply_reads_content_finish_and_only_function_calls() -> None:
    """A tool call of another type than ``function`` (no ``function`` object) is not a call to make."""
    body = {
        "choices": [
            {
                "message": {
                    "content": "done",
                    "tool_calls": [
                        {"id": "c1", "type": "custom", "custom": {"name": "x", "input": ""}},
                        {"id": "c2", "type": "function", "function": {"name": "memory_search"}},
                    ],
                },
                "finish_reason": "stop",
            }
        ]
    }
    assert turn_of(body) == Turn("done", "stop", [("c2", "memory_search", "")])
    assert turn_of("<html>not json</html>") == Turn()


async def test_timeout_raises_model_error_naming_url_model_and_settings() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="late", delay=3600))
        with pytest.raises(ModelError, match="timed out") as info:
            await make_model(stub, timeout=0.2).reply(request())
        url = stub.base_url.rstrip("/")
    message = str(info.value)
    assert info.value.kind == "timeout" and f"no answer from {url}" in message and "'chat-model'" in message
    assert "provider.timeoutSeconds" in message and "agent.replyDeadline" in message


async def test_connection_refused_raises_model_error() -> None:
    stub = OpenAIStub().start()
    model = make_model(stub)
    stub.stop()
    with pytest.raises(ModelError, match="connection error"):
        await model.reply(request())


async def test_retry_after_then_success() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=503, headers={"retry-after": "0"}), StubReply(content="ok now"))
        assert await make_model(stub, max_retries=1).reply(request()) == "ok now"
        assert len(stub.requests) == 2


async def test_api_key_never_in_the_error() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=401, content=f"Incorrect API key provided: {SECRET_KEY}"))
        with pytest.raises(ModelError) as info:
            await make_model(stub).reply(request())
        assert stub.request_headers[0]["authorization"] == f"Bearer {SECRET_KEY}"
        err = info.value
        assert "HTTP 401" in str(err) and "AuthenticationError" in str(err)
        assert SECRET_KEY not in str(err) and SECRET_KEY not in repr(err)
        assert err.__cause__ is None and err.__suppress_context__


async def test_logs_with_gateway_prefix_and_no_content(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tierclaw.gateway")
    with OpenAIStub() as stub:
        stub.script(StubReply(content="You live in Lisbon."), StubReply(status=401, content=SECRET_KEY))
        model = make_model(stub)
        await model.reply(request())
        with pytest.raises(ModelError):
            await model.reply(request())
    records = [r for r in caplog.records if r.name == "tierclaw.gateway"]
    # one INFO per reply; the failure only at DEBUG here, because the Assistant logs it once at ERROR
    assert [r.levelno for r in records] == [logging.INFO, logging.DEBUG]
    for record in records:
        text = record.getMessage()
        assert text.startswith("[gateway]")
        assert "Lisbon" not in text and SECRET_KEY not in text


def test_constructor_rejects_nonsense() -> None:
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    with pytest.raises(ValueError):
        OpenAIChatModel(client, "")
    with pytest.raises(ValueError):
        OpenAIChatModel(client, "m", max_tokens=0)


@pytest.mark.parametrize(
    ("reply", "kind", "says"),
    [
        (StubReply(status=401), "auth", "the API key was refused"),
        (StubReply(status=403), "auth", "the API key was refused"),
        (StubReply(status=404, content="The model `m` does not exist"), "not_found", "not found at"),
        (StubReply(status=500), "", "HTTP 500"),
    ],
)
async def test_errors_say_what_to_fix(reply: StubReply, kind: str, says: str) -> None:
    with OpenAIStub() as stub:
        stub.script(reply)
        url = stub.base_url.rstrip("/")
        with pytest.raises(ModelError) as info:
            await make_model(stub).reply(request())
    assert info.value.kind == kind and says in str(info.value)
    assert (url in str(info.value)) == (kind != "")  # where to look, for what the operator can fix


async def test_an_unreachable_endpoint_is_named() -> None:
    stub = OpenAIStub().start()
    model = make_model(stub)
    stub.stop()
    with pytest.raises(ModelError) as info:
        await model.reply(request())
    assert info.value.kind == "unreachable" and "couldn't reach http://127.0.0.1" in str(info.value)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1",
        "http://127.0.0.1:8080/v1/",
        "https://api.example.com/openai/v1",
        "http://h/",
    ],
)
async def test_the_endpoint_url_is_the_one_the_sdk_joins(base_url: str) -> None:
    """The model asks for the absolute URL (made once); the SDK would have joined the same one from the
    path on every request."""
    client = openai.AsyncOpenAI(api_key=SECRET_KEY, base_url=base_url)
    try:
        model = OpenAIChatModel(client, "chat-model")
        joined = str(client._prepare_url("/chat/completions"))
        assert model._completions_url() == joined
        assert joined.endswith("/chat/completions") and "//chat" not in joined
        client.base_url = "http://other.example/v2"  # a new base URL: the endpoint follows it
        assert model._completions_url() == "http://other.example/v2/chat/completions"
    finally:
        await client.close()
