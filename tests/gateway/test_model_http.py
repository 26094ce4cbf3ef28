"""The models' client as the gateway builds it (``providers.make_client``: the real ``AsyncOpenAI`` on the
SDK's aiohttp transport, gateway/model_http.py) against the local OpenAI-wire server: whole and streamed
replies, retries, and each failure named as on httpx — a refused connection or a stream cut midway is
"unreachable", only a server that does not answer in time is a timeout."""

from __future__ import annotations

import asyncio
import threading

import openai
import pytest
from pydantic import SecretStr

from gateway.agent import ChatRequest, ModelError, OpenAIChatModel
from gateway.config.schema import ProviderConfig
from gateway.providers import make_client
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace
from memory.model.openai_model import hung_up

SECRET = "sk-test-model-http-4242"


class Seen(list[str]):
    """A text sink that keeps each text it is handed and always wants more."""

    def __call__(self, text: str) -> None:
        self.append(text)

    def wanted_in(self) -> float:
        return 0.0

    def ended(self) -> None:
        pass


def _client(base_url: str, *, timeout: float = 30.0, retries: int = 0) -> openai.AsyncOpenAI:
    provider = ProviderConfig(
        api_key=SecretStr(SECRET), base_url=base_url, timeout_seconds=timeout, max_retries=retries
    )
    return make_client(provider)


def _request(on_text: Seen | None = None) -> ChatRequest:
    return ChatRequest(system="sys", user_text="where do I live?", on_text=on_text)


async def _reply(base_url: str, request: ChatRequest, **options: float) -> str:
    client = _client(base_url, **options)  # type: ignore[arg-type]
    try:
        return await OpenAIChatModel(client, "m").reply(request)
    finally:
        await client.close()


def test_the_gateways_client_is_on_the_sdks_aiohttp_transport() -> None:
    client = _client("http://127.0.0.1:9/v1")
    assert isinstance(client._client, openai.DefaultAioHttpClient)


async def test_whole_and_streamed_replies_come_back_and_the_key_goes_as_the_bearer() -> None:
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(content="You live in Lisbon."), StubReply(content="You live in 里斯本."))
        assert await _reply(stub.base_url, _request()) == "You live in Lisbon."
        seen = Seen()
        assert await _reply(stub.base_url, _request(seen)) == "You live in 里斯本."
        assert seen and seen[-1] == "You live in 里斯本."
        first, second = stub.chat_requests()
        headers = stub.request_headers
    assert "stream" not in first and second["stream"] is True
    assert all(h.get("authorization") == f"Bearer {SECRET}" for h in headers)


async def test_a_busy_server_is_asked_again_by_the_sdks_retries() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=503, headers={"retry-after-ms": "1"}), StubReply(content="ok now"))
        assert await _reply(stub.base_url, _request(), retries=1) == "ok now"
        assert len(stub.requests) == 2


async def test_a_refused_connection_is_unreachable_not_a_timeout() -> None:
    stub = OpenAIStub().start()
    base_url = stub.base_url
    stub.stop()
    with pytest.raises(ModelError) as caught:
        await _reply(base_url, _request())
    assert caught.value.kind == "unreachable" and "connection error" in str(caught.value)


async def test_a_stream_cut_midway_is_unreachable() -> None:
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(content="one two three four five", cut_after=2))
        with pytest.raises(ModelError) as caught:
            await _reply(stub.base_url, _request(Seen()))
    assert caught.value.kind == "unreachable"


async def test_a_server_that_does_not_answer_in_time_is_a_timeout() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content="late", delay=3600))
        with pytest.raises(ModelError) as caught:
            await _reply(stub.base_url, _request(), timeout=0.3)
    assert caught.value.kind == "timeout" and "timed out" in str(caught.value)


async def test_a_stream_that_stops_coming_is_a_timeout() -> None:
    held = threading.Event()  # never set: the stream stops after two tokens
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(content="one two three four", hold=(2, held)))
        try:
            with pytest.raises(ModelError) as caught:
                async with asyncio.timeout(60):
                    await _reply(stub.base_url, _request(Seen()), timeout=0.5)
        finally:
            held.set()
    assert caught.value.kind == "timeout"


def test_only_a_connection_error_of_aiohttp_is_a_hang_up() -> None:
    import aiohttp

    def chained(cause: BaseException) -> BaseException:
        try:
            try:
                raise cause
            except Exception as inner:
                raise TimeoutError("as the transport maps it") from inner
        except TimeoutError as outer:
            return outer

    assert hung_up(chained(aiohttp.ServerDisconnectedError()))
    assert hung_up(chained(aiohttp.ClientOSError(104, "Connection reset by peer")))
    assert not hung_up(chained(aiohttp.ServerTimeoutError("read timed out")))
    assert not hung_up(chained(aiohttp.ConnectionTimeoutError("connect timed out")))
    assert not hung_up(TimeoutError("a plain timeout"))


def test_without_the_sdks_aiohttp_part_the_client_stays_on_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    class Missing:
        def __init__(self, **_: object) -> None:
            raise RuntimeError("To use the aiohttp client you must have installed the aiohttp extra")

    aiohttp_client = openai.DefaultAioHttpClient
    monkeypatch.setattr(openai, "DefaultAioHttpClient", Missing)
    client = _client("http://127.0.0.1:9/v1")
    assert not isinstance(client._client, aiohttp_client)
    assert type(client._client).__module__.startswith("openai")  # the SDK's own default client
