"""The request body's bytes (gateway/request_json.py) are the SDK's own encoding of the same body, and the
real client sends them as a JSON request to the local model server."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from openai._utils._json import openapi_dumps

from gateway.agent import ChatRequest, OpenAIChatModel
from gateway.media.tools import SCHEMAS as ATTACHMENT_SCHEMAS
from gateway.memory_tools import TOOL_SCHEMAS as MEMORY_SCHEMAS
from gateway.reminders.tools import TOOL_SCHEMAS as REMINDER_SCHEMAS
from gateway.request_json import body_bytes
from localservers.openai_server import OpenAIStub
from tests.support.stub_clients import client_for

pytestmark = pytest.mark.usefixtures("close_stub_clients")

TOOLS = [*MEMORY_SCHEMAS, *ATTACHMENT_SCHEMAS, *REMINDER_SCHEMAS]


def bodies() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are tierclaw.\n\n# Core profile\n- Lives in Lisbon"},
        {"role": "user", "content": '我下周去杭州出差，记得提醒我 \u2028 "quoted" \\ tab\t é 😀'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "memory_search", "arguments": '{"query":"x"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"results": []}'},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        },
    ]
    base = {"model": "m", "messages": messages, "temperature": 0.7, "max_tokens": 1024}
    return [
        base,
        {**base, "stream": True},
        {**base, "tools": TOOLS},
        {**base, "tools": TOOLS, "tool_choice": "none"},
        {**base, "temperature": 0.0, "tools": [*REMINDER_SCHEMAS]},
    ]


@pytest.mark.parametrize("body", bodies())
def test_bytes_are_the_sdks_encoding(body: dict[str, Any]) -> None:
    assert body_bytes(body) == openapi_dumps(body)
    assert body_bytes(body) == openapi_dumps(body)  # the kept schema texts give the same bytes again


def test_a_schema_changed_into_another_object_is_encoded_anew() -> None:
    schema = {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}
    first = body_bytes({"tools": [schema]})
    other = {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}}
    assert body_bytes({"tools": [other]}) == openapi_dumps({"tools": [other]}) != first


def test_nan_is_refused_as_the_sdk_refuses_it() -> None:
    with pytest.raises(ValueError):
        openapi_dumps({"temperature": math.nan})
    with pytest.raises(ValueError):
        body_bytes({"temperature": math.nan})


async def test_the_real_client_sends_them_as_json() -> None:
    class Tools:
        max_rounds = 1

        def schemas(self) -> list[dict[str, Any]]:
            return TOOLS

        async def call(self, name: str, arguments: str) -> str:
            return "{}"

    with OpenAIStub() as stub:
        model = OpenAIChatModel(client_for(stub), "chat-model")
        request = ChatRequest(
            system="You are tierclaw.", user_text="Où est mon vélo ? 我的自行车呢", tools=Tools()
        )
        assert await model.reply(request) == "stub reply: Où est mon vélo ? 我的自行车呢"
        assert stub.request_headers[0]["content-type"] == "application/json"
        assert stub.request_headers[0]["authorization"] == "Bearer sk-test"
        sent = stub.requests[0]
        assert sent["tools"] == json.loads(json.dumps(TOOLS))
        assert sent["messages"][-1] == {"role": "user", "content": "Où est mon vélo ? 我的自行车呢"}
