"""Streamed chat completions for the local OpenAI server: ``"stream": true`` answered as server-sent events.

What the openai SDK reads when it streams (``AsyncStream`` of ``chat.completion.chunk``): one ``data:``
line per chunk — the first carries the assistant role, each next one a piece of the content (a token: a
word with its leading space, or one CJK character), a function call whole in one chunk, then a chunk with
the finish reason — and ``data: [DONE]``. The body goes out in HTTP/1.1 chunked encoding, so a kept-alive
connection stays usable afterwards.

``StreamPace`` is how a real model feels: ``first_token_s`` before the first token, then
``tokens_per_second`` (None: the whole content in one chunk). ``StubReply.cut_after`` (tokens) cuts the
connection midway, as a server that dies mid-answer does; ``StubReply.hold`` holds the stream after some
tokens until the test lets it go on.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from localservers.http import JSONHandler


class StreamedReply(Protocol):
    """What a streamed answer is made of (``openai_server.StubReply`` has it)."""

    content: str | None
    tool_calls: list[tuple[str, str]] | None
    cut_after: int | None
    hold: tuple[int, threading.Event] | None


_TOKEN_RE = re.compile(r"\s*[\u3000-\u9fff\uff00-\uffef]|\s*[^\s\u3000-\u9fff\uff00-\uffef]+|\s+")


@dataclass
class StreamPace:
    """How fast a streamed reply comes: ``first_token_s`` before its first token, then
    ``tokens_per_second`` (None: the whole content in one chunk, an infinitely fast model)."""

    first_token_s: float = 0.0
    tokens_per_second: float | None = None


def tokens_of(text: str) -> list[str]:
    """``text`` cut into tokens as a model streams them: words with their leading space, CJK characters
    one by one, trailing whitespace last (joined, they give ``text`` back)."""
    return _TOKEN_RE.findall(text)


def chunk(delta: dict[str, Any], model: str, finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with ``delta`` for choice 0."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def reply_chunks(reply: StreamedReply, model: str, pace: StreamPace) -> list[dict[str, Any]]:
    """The chunks of a scripted reply, after the role chunk: its tokens (all in one chunk when the pace
    has no rate: an infinitely fast model), then its calls, then the end."""
    tokens = tokens_of(reply.content or "") if pace.tokens_per_second else [reply.content or ""]
    chunks = [chunk({"content": token}, model) for token in tokens if token]
    for n, (name, arguments) in enumerate(reply.tool_calls or [], start=1):
        call = {"index": n - 1, "id": f"call_{n}", "type": "function"}
        chunks.append(
            chunk({"tool_calls": [{**call, "function": {"name": name, "arguments": arguments}}]}, model)
        )
    chunks.append(chunk({}, model, "tool_calls" if reply.tool_calls else "stop"))
    return chunks


def send_events(
    handler: JSONHandler, reply: StreamedReply, model: str, pace: StreamPace, stopping: threading.Event
) -> None:
    """Answer ``handler``'s request with ``reply`` as server-sent events, paced by ``pace`` (a stop of
    the server ends it; a client that hung up only closes the connection)."""
    events = [chunk({"role": "assistant", "content": ""}, model), *reply_chunks(reply, model, pace)]
    gap = 1.0 / pace.tokens_per_second if pace.tokens_per_second else 0.0
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        _write(handler, events[0])
        if pace.first_token_s and stopping.wait(pace.first_token_s):
            handler.close_connection = True
            return
        next_at = time.monotonic()
        for sent, event in enumerate(events[1:]):
            if reply.cut_after is not None and sent >= reply.cut_after:
                handler.close_connection = True  # no last chunk: the client sees the body end early
                return
            if reply.hold is not None and sent == reply.hold[0]:
                while not reply.hold[1].wait(0.05):
                    if stopping.is_set():
                        handler.close_connection = True
                        return
                next_at = time.monotonic()
            if gap and sent:
                next_at += gap
                if stopping.wait(max(0.0, next_at - time.monotonic())):
                    handler.close_connection = True
                    return
            _write(handler, event)
        _frame(handler, b"data: [DONE]\n\n")
        _frame(handler, b"")  # the last chunk of the chunked body
    except OSError:
        handler.close_connection = True


def _write(handler: JSONHandler, event: dict[str, Any]) -> None:
    _frame(handler, b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n\n")


def _frame(handler: JSONHandler, data: bytes) -> None:
    """One frame of the chunked body (an empty one ends it)."""
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()
