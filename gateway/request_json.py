"""The chat-completions request body as the JSON bytes the SDK would send, with the tool definitions
encoded once.

``OpenAIChatModel`` hands the SDK's ``client.post`` these bytes as its ``content`` (the parameter the SDK
takes raw bytes by); given the body as a dict, ``client.post`` encodes it itself (``openapi_dumps``:
``json.dumps`` with ``ensure_ascii=False``, compact separators, ``allow_nan=False``) — the same bytes, but
the ~5 KB of tool definitions (eleven schemas, every message the same) encoded again on every request,
~150 µs of the event loop's CPU a reply in bench.gateway_throughput. Here each schema is encoded the first
time it is seen and its text reused while it is the same object: the schemas are module constants
(``TOOL_SCHEMAS`` of gateway/memory_tools.py, gateway/reminders/tools.py, gateway/media/tools.py), never
changed in place. A message of text alone (every value a string: the system prompt, the history) is
encoded once while it is kept (``_message_json``): each reply sends the chat's last 20 messages again,
and encoding them (~100 µs a reply, ``ensure_ascii=False`` on Chinese text) was most of the body's cost
(bench/README.md, "Gateway CPU", stop 52). The last message (the person's words with the memory block:
new every time) and everything else (model, settings) are encoded per request.
"""

from __future__ import annotations

import json
from typing import Any

# openapi_dumps' settings (openai/_utils/_json.py); the body holds no datetime or pydantic model, so the
# SDK's encoder's ``default`` hook is never reached and the plain encoder writes the same text.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

# id(schema) -> (the schema, its JSON): the schema is kept so its id cannot be reused by another object.
_SCHEMA_JSON: dict[int, tuple[dict[str, Any], str]] = {}
SCHEMAS_KEPT = 256  # far above the tools there are; a bound all the same


def _schema_json(schema: dict[str, Any]) -> str:
    """One tool definition's JSON, encoded once per schema object."""
    kept = _SCHEMA_JSON.get(id(schema))
    if kept is not None and kept[0] is schema:
        return kept[1]
    text = _encode(schema)
    if len(_SCHEMA_JSON) >= SCHEMAS_KEPT:
        _SCHEMA_JSON.clear()
    _SCHEMA_JSON[id(schema)] = (schema, text)
    return text


# (key, value) pairs of a text-only message -> its JSON; bounded by the characters kept, cleared whole.
_MESSAGE_JSON: dict[tuple[tuple[str, str], ...], str] = {}
MESSAGE_CHARS_KEPT = 2_000_000
_message_chars = 0


def _message_json(message: Any) -> str:
    """One message's JSON: encoded once while kept when all its keys and values are strings (the pairs,
    in order, are the key: equal pairs encode to equal text), else encoded now."""
    global _message_chars
    if not isinstance(message, dict) or not all(type(v) is str for v in message.values()):
        return _encode(message)
    pairs = tuple(message.items())
    text = _MESSAGE_JSON.get(pairs)
    if text is None:
        text = _encode(message)
        if _message_chars + len(text) > MESSAGE_CHARS_KEPT:
            _MESSAGE_JSON.clear()
            _message_chars = 0
        _MESSAGE_JSON[pairs] = text
        _message_chars += len(text)
    return text


def _messages_json(messages: list[Any]) -> str:
    """The messages list's JSON: the kept text of each message before the last, the last encoded now."""
    texts = [_message_json(m) for m in messages[:-1]]
    texts.extend(_encode(m) for m in messages[-1:])
    return "[" + ",".join(texts) + "]"


def body_bytes(body: dict[str, Any]) -> bytes:
    """``body`` as UTF-8 JSON, byte for byte what the SDK's ``openapi_dumps(body)`` makes of it (keys in
    the dict's order; ``tools`` from the kept schema texts, ``messages`` from the kept message texts)."""
    parts = []
    for key, value in body.items():
        if key == "tools" and isinstance(value, list):
            text = "[" + ",".join(_schema_json(s) if isinstance(s, dict) else _encode(s) for s in value) + "]"
        elif key == "messages" and isinstance(value, list):
            text = _messages_json(value)
        else:
            text = _encode(value)
        parts.append(f"{_encode(key)}:{text}")
    return ("{" + ",".join(parts) + "}").encode()
