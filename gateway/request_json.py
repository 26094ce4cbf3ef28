"""The chat-completions request body as the JSON bytes the SDK would send, with the tool definitions
encoded once.

``OpenAIChatModel`` hands the SDK's ``client.post`` these bytes as its ``content`` (the parameter the SDK
takes raw bytes by); given the body as a dict, ``client.post`` encodes it itself (``openapi_dumps``:
``json.dumps`` with ``ensure_ascii=False``, compact separators, ``allow_nan=False``) — the same bytes, but
the ~5 KB of tool definitions (eleven schemas, every message the same) encoded again on every request,
~150 µs of the event loop's CPU a reply in bench.gateway_throughput. Here each schema is encoded the first
time it is seen and its text reused while it is the same object: the schemas are module constants
(``TOOL_SCHEMAS`` of gateway/memory_tools.py, gateway/reminders/tools.py, gateway/media/tools.py), never
changed in place. Everything else (model, messages, settings) is encoded per request, as before.
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


def body_bytes(body: dict[str, Any]) -> bytes:
    """``body`` as UTF-8 JSON, byte for byte what the SDK's ``openapi_dumps(body)`` makes of it (keys in
    the dict's order; a ``tools`` list from its kept schema texts)."""
    parts = []
    for key, value in body.items():
        if key == "tools" and isinstance(value, list):
            text = "[" + ",".join(_schema_json(s) if isinstance(s, dict) else _encode(s) for s in value) + "]"
        else:
            text = _encode(value)
        parts.append(f"{_encode(key)}:{text}")
    return ("{" + ",".join(parts) + "}").encode()
