"""A local OpenAI-compatible server for tests and benchmarks (stdlib only).

The openai SDK v3 sends through ``httpx2``, which ``respx``/``pytest-httpx`` do not intercept, so tests talk
to a real HTTP server instead: a ``ThreadingHTTPServer`` on 127.0.0.1 (port 0) in a daemon thread. The
server runs in its own thread, so it serves sync and async tests alike without touching the event loop.

    from localservers.openai_server import OpenAIStub, StubReply

    with OpenAIStub() as stub:
        client = openai.AsyncOpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0)
        stub.script(StubReply(content='{"facts": [], "summary": "hi"}'), StubReply(status=500))
        ...
        assert stub.json_requests()[0]["temperature"] == 0.3

Replies come from the script queue first (in order), then from the responder (``responder(body)`` gets
the JSON body of the request and returns a ``StubReply``, a plain string meaning ``StubReply(content=s)``,
or ``None`` to fall through), then from the default:
``{"facts": [], "summary": ""}`` for ``response_format`` json_object requests, otherwise
``"stub reply: " + <last line of the last user message>``.

Embeddings (``POST /v1/embeddings``) have their own record (``embedding_requests``), script queue
(``script_embeddings``) and responder (``embedding_responder``), so they never consume chat replies. By
default each input text gets a deterministic unit vector derived from its SHA-256 (``stub_embedding``:
same text, same vector; ``dimensions`` honoured, default 8), encoded as the request's ``encoding_format``
asks ("float" lists, or "base64" of little-endian float32 — what the SDK requests by default). Like the
real API, a missing or empty ``input`` or an empty-string item answers 400.

    with OpenAIStub() as stub:
        stub.script_embeddings(StubReply(status=500), StubReply(vectors=[[1.0, 0.0]]))
        ...
        assert stub.embedding_inputs() == ["hello"]

A chat request with ``"stream": true`` is answered as server-sent events (``localservers/openai_sse.py``),
paced by ``pace``: ``OpenAIStub(pace=StreamPace(first_token_s=0.3, tokens_per_second=40))``.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/embeddings``, ``POST /v1/audio/transcriptions``
and image content parts (``openai_audio.py``), ``GET /v1/models``; anything else answers 404.
Every response is HTTP/1.1 with Content-Type and Content-Length, so kept-alive connections never hang.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from localservers.http import JSONHandler, LocalHTTPServer, OpenConnections
from localservers.openai_audio import TRANSCRIPTIONS_PATH, StubAudio
from localservers.openai_sse import StreamPace, send_events

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
EMBEDDINGS_PATH = "/v1/embeddings"
DEFAULT_EMBEDDING_DIM = 8
DEFAULT_JSON_CONTENT = '{"facts": [], "summary": ""}'
DEFAULT_CHAT_PREFIX = "stub reply: "

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


@dataclass
class StubReply:
    """One scripted answer.

    ``content`` is the assistant message (a JSON string for extraction replies). A non-200 ``status``
    answers with ``{"error": {"message", "type", "code"}}`` (``content``, when given, becomes the message).
    ``delay`` sleeps before answering (to trigger client timeouts). ``raw_body`` is sent verbatim instead
    of any JSON. ``headers`` are added to the response (e.g. ``{"retry-after": "0"}``; a ``Content-Type``
    here replaces application/json). Note the SDK treats ``retry-after: 0`` as "no hint" and waits its
    default ~0.5 s backoff; ``{"retry-after-ms": "1"}`` retries almost at once.

    A request with ``"stream": true`` gets the same reply as server-sent events, paced by the stub's
    ``pace`` (``localservers/openai_sse.py``); ``cut_after`` cuts such a stream after that many tokens,
    ``hold=(n, event)`` holds it after ``n`` tokens until ``event`` is set; ``holds`` gives more such
    points (``((3, a), (12, b))``), so a test can walk a stream step by step.

    ``tool_calls``: the assistant asks for function calls instead of (or beside) ``content``, each
    ``(name, arguments)`` with ``arguments`` sent verbatim (a JSON string, or anything else to test bad
    calls); ids are ``call_1``, ``call_2``… and the finish reason is ``tool_calls``.

    For embeddings requests ``content`` only serves as an error message; ``vectors`` (row i answers as
    ``index`` i) replaces the derived vectors, sent as given (any length, count or norm: for testing
    validation) in the request's ``encoding_format``.
    """

    content: str | None = None
    status: int = 200
    delay: float = 0.0
    raw_body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    vectors: list[list[float]] | None = None
    tool_calls: list[tuple[str, str]] | None = None
    cut_after: int | None = None
    hold: tuple[int, threading.Event] | None = None  # a stream waits after that many tokens until set
    holds: tuple[tuple[int, threading.Event], ...] = ()  # more such points


Responder = Callable[[dict], "StubReply | str | None"]


def is_json_request(body: dict) -> bool:
    """Whether a chat-completions body asks for ``response_format={"type": "json_object"}``."""
    fmt = body.get("response_format")
    return isinstance(fmt, dict) and fmt.get("type") == "json_object"


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def default_reply(body: dict) -> StubReply:
    """The reply used when neither the script nor a responder answers."""
    if is_json_request(body):
        return StubReply(content=DEFAULT_JSON_CONTENT)
    last_user = ""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            last_user = _text_of(message.get("content"))
    lines = last_user.strip().splitlines()
    return StubReply(content=DEFAULT_CHAT_PREFIX + (lines[-1].strip() if lines else ""))


def completion_body(
    content: str | None, model: str = "stub-model", tool_calls: list[tuple[str, str]] | None = None
) -> dict:
    """The minimal ``chat.completion`` object the openai SDK accepts (with ``tool_calls`` when given)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for n, (name, arguments) in enumerate(tool_calls, start=1)
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


def stub_embedding(text: str | Any, dimensions: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """The default vector for one input: unit length, derived from SHA-256 of the text (counter mode).

    The same text always gives the same vector, different texts practically never the same one. A
    non-string input (token ids) is hashed by its JSON form.
    """
    seed = (text if isinstance(text, str) else json.dumps(text)).encode("utf-8")
    values: list[float] = []
    block = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(seed + block.to_bytes(4, "little")).digest()
        values.extend(n / 2**31 - 1.0 for n in struct.unpack("<8I", digest))
        block += 1
    values = values[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def embeddings_body(
    vectors: list[list[float]], model: str = "stub-model", encoding_format: str = "float"
) -> dict:
    """A ``CreateEmbeddingResponse``: plain float lists, or base64 of little-endian float32 for "base64"."""

    def encode(vector: list[float]) -> list[float] | str:
        if encoding_format == "base64":
            return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        return list(vector)

    tokens = 4 * len(vectors)
    return {
        "object": "list",
        "model": model,
        "data": [{"object": "embedding", "index": i, "embedding": encode(v)} for i, v in enumerate(vectors)],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def embedding_inputs_of(body: dict) -> list[Any] | None:
    """The inputs of an embeddings request as a list (a single string or token list becomes one item)."""
    raw = body.get("input")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(t, int) for t in raw):
        return [raw]
    return list(raw) if isinstance(raw, list) else None


def default_embedding_reply(body: dict) -> StubReply:
    """The reply used when neither the embeddings script nor the embeddings responder answers."""
    inputs = embedding_inputs_of(body)
    if not inputs:
        return StubReply(status=400, content="'input' is required and must not be empty")
    if any(item == "" for item in inputs):
        return StubReply(status=400, content="'input' cannot contain an empty string")
    dimensions = body.get("dimensions")
    if dimensions is None:
        dimensions = DEFAULT_EMBEDDING_DIM
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        return StubReply(status=400, content="'dimensions' must be a positive integer")
    return StubReply(vectors=[stub_embedding(item, dimensions) for item in inputs])


def error_body(status: int, message: str | None = None) -> dict:
    """``{"error": {...}}`` in OpenAI's shape for an HTTP error status."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message or f"stub error {status}", "type": kind, "code": kind}}


class _Server(LocalHTTPServer):
    request_queue_size = 256

    def __init__(self, stub: OpenAIStub) -> None:
        super().__init__(_Handler, stub)


class _Handler(JSONHandler):
    # --- endpoints -----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == MODELS_PATH:
            self.send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": "stub-model", "object": "model", "created": 0, "owned_by": "stub"}],
                },
            )
        else:
            self.send_json(404, error_body(404, f"no route GET {path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = self.read_body()
        stub = self.server.stub
        if path == TRANSCRIPTIONS_PATH:  # openai_audio.py: the stand-in transcriber
            reply = stub.audio.next_scripted()
            if reply is not None and reply.delay > 0 and stub._stopping.wait(reply.delay):
                self.close_connection = True
                return
            if reply is not None and reply.status != 200:
                self.send_json(reply.status, error_body(reply.status, reply.content))
                return
            self.send_json(*stub.audio.transcribe(raw, self.headers.get("Content-Type") or ""))
            return
        if path not in (CHAT_PATH, EMBEDDINGS_PATH):
            self.send_json(404, error_body(404, f"no route POST {path}"))
            return
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        if not isinstance(body, dict):
            self.send_json(400, error_body(400, "request body is not a JSON object"))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        embeddings = path == EMBEDDINGS_PATH
        if not embeddings and not stub.audio.vision and stub.audio.image_parts(body):
            stub.audio.refused_images += 1
            self.send_json(400, error_body(400, "image input is not supported by this model"))
            return
        reply = stub._next_embedding_reply(body, headers) if embeddings else stub._next_reply(body, headers)
        if reply.delay > 0 and stub._stopping.wait(reply.delay):
            self.close_connection = True
            return
        named = body.get("model")
        model = named if isinstance(named, str) else "stub-model"
        if reply.raw_body is not None:
            self.send_body(reply.status, reply.raw_body, reply.headers)
        elif reply.status != 200:
            self.send_json(reply.status, error_body(reply.status, reply.content), reply.headers)
        elif embeddings:
            if reply.vectors is None:  # a scripted success without vectors: the derived ones
                reply = default_embedding_reply(body)
                if reply.status != 200:
                    self.send_json(reply.status, error_body(reply.status, reply.content))
                    return
            fmt = "base64" if body.get("encoding_format") == "base64" else "float"
            self.send_json(200, embeddings_body(reply.vectors or [], model, fmt), reply.headers)
        elif body.get("stream") is True:
            send_events(self, reply, model, stub.pace, stub._stopping)
        else:
            self.send_json(200, completion_body(reply.content, model, reply.tool_calls), reply.headers)


class OpenAIStub:
    """A local OpenAI-compatible chat-completions and embeddings server; see the module docstring."""

    def __init__(self, responder: Responder | None = None, pace: StreamPace | None = None) -> None:
        self.responder = responder
        self.pace = pace or StreamPace()  # how streamed replies come (openai_sse.py)
        self.requests: list[dict] = []  # JSON bodies POSTed to /v1/chat/completions, in arrival order
        self.request_headers: list[dict[str, str]] = []  # their headers (lower-cased names), same order
        self.embedding_responder: Responder | None = None  # like ``responder``, for /v1/embeddings
        self.embedding_requests: list[dict] = []  # JSON bodies POSTed to /v1/embeddings, in arrival order
        self.embedding_request_headers: list[dict[str, str]] = []  # their headers, same order
        self._embedding_script: deque[StubReply] = deque()
        self._lock = threading.Lock()
        self._script: deque[StubReply | str] = deque()
        self._stopping = threading.Event()
        self._connections = OpenConnections(self._lock)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.audio = StubAudio()  # /v1/audio/transcriptions and image parts (openai_audio.py)

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> OpenAIStub:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread. Returns self."""
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = self._server.serve_in_thread()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and wake delayed replies. Safe to call twice."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.close(self._connections)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> OpenAIStub:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("OpenAIStub is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — pass it as ``AsyncOpenAI(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting -----------------------------------------------------------------------------------

    def script(self, *replies: StubReply | str) -> None:
        """Queue replies, consumed in order before the responder. A string means ``StubReply(content=s)``."""
        with self._lock:
            self._script.extend(replies)

    def pending(self) -> int:
        """How many scripted replies are not yet consumed."""
        with self._lock:
            return len(self._script)

    def script_embeddings(self, *replies: StubReply) -> None:
        """Queue replies for ``/v1/embeddings``, consumed in order before ``embedding_responder``."""
        if not all(isinstance(r, StubReply) for r in replies):
            raise TypeError("script_embeddings takes StubReply objects")
        with self._lock:
            self._embedding_script.extend(replies)

    def pending_embeddings(self) -> int:
        """How many scripted embeddings replies are not yet consumed."""
        with self._lock:
            return len(self._embedding_script)

    def reset(self) -> None:
        """Forget recorded requests (chat and embeddings) and any unconsumed script."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.request_headers.clear()
            self._embedding_script.clear()
            self.embedding_requests.clear()
            self.embedding_request_headers.clear()

    def _next_reply(self, body: dict, headers: dict[str, str]) -> StubReply:
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            scripted = self._script.popleft() if self._script else None
        reply = scripted
        if reply is None and self.responder is not None:
            try:
                reply = self.responder(body)
            except Exception as exc:  # a broken responder should fail the test, not hang the client
                return StubReply(status=500, content=f"stub responder raised {type(exc).__name__}: {exc}")
        if reply is None:
            seen = self.audio.describe(body)  # an image part: the stand-in description
            reply = default_reply(body) if seen is None else StubReply(content=seen)
        if isinstance(reply, str):
            reply = StubReply(content=reply)
        return reply

    def _next_embedding_reply(self, body: dict, headers: dict[str, str]) -> StubReply:
        with self._lock:
            self.embedding_requests.append(body)
            self.embedding_request_headers.append(headers)
            reply = self._embedding_script.popleft() if self._embedding_script else None
        if reply is None and self.embedding_responder is not None:
            try:
                answer = self.embedding_responder(body)
            except Exception as exc:  # a broken responder should fail the test, not hang the client
                return StubReply(status=500, content=f"stub responder raised {type(exc).__name__}: {exc}")
            reply = StubReply(content=answer) if isinstance(answer, str) else answer
        return reply if reply is not None else default_embedding_reply(body)

    def track(self, conn: socket.socket, *, add: bool) -> None:
        """A connection opened or closed (the handler says; ``stop`` cuts those still open)."""
        self._connections.track(conn, add=add)

    # --- inspection ----------------------------------------------------------------------------------

    def chat_requests(self) -> list[dict]:
        """Recorded bodies without ``response_format`` json_object (main-model calls)."""
        with self._lock:
            return [b for b in self.requests if not is_json_request(b)]

    def json_requests(self) -> list[dict]:
        """Recorded bodies with ``response_format={"type": "json_object"}`` (memory-model calls)."""
        with self._lock:
            return [b for b in self.requests if is_json_request(b)]

    def embedding_inputs(self) -> list[Any]:
        """Every input of every recorded embeddings request, flattened, in arrival order."""
        with self._lock:
            return [item for body in self.embedding_requests for item in (embedding_inputs_of(body) or [])]

    def wait_for(self, predicate: Callable[[OpenAIStub], bool], timeout: float = 30.0) -> bool:
        """Poll ``predicate(self)`` until true or ``timeout`` seconds pass (sync code; blocks the thread)."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    async def await_for(self, predicate: Callable[[OpenAIStub], bool], timeout: float = 30.0) -> bool:
        """Like ``wait_for`` but polls with ``asyncio.sleep``, so the event loop keeps running."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.01)
