"""Streamed chat completions for the local OpenAI server: ``"stream": true`` answered as server-sent events.

What the openai SDK reads when it streams (``AsyncStream`` of ``chat.completion.chunk``): one ``data:``
line per chunk — the first carries the assistant role, each next one a piece of the content (a token: a
word with its leading space, or one CJK character), a function call whole in one chunk, then a chunk with
the finish reason — and ``data: [DONE]``. The body goes out in HTTP/1.1 chunked encoding, so a kept-alive
connection stays usable afterwards.

``StreamPace`` is how a real model feels: ``first_token_s`` before the first token, then
``tokens_per_second`` (None: the whole content in one chunk). ``StubReply.cut_after`` (tokens) cuts the
connection midway, as a server that dies mid-answer does; ``StubReply.hold`` holds the stream after some
tokens until the test lets it go on, ``StubReply.holds`` at several points (a test then knows each step of
the stream was seen, however slow the machine: no hoping that wall time spreads the tokens).
"""

from __future__ import annotations

import heapq
import itertools
import json
import re
import threading
import time
from collections.abc import Generator
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
    holds: tuple[tuple[int, threading.Event], ...]


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
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        _write(handler, events[0])
    except OSError:
        handler.close_connection = True
        return
    steps = _steps(handler, reply, events[1:], pace, stopping)
    if pace.first_token_s or pace.tokens_per_second:
        _PACER.run(steps, stopping)  # written by the pacer's thread when due; this thread waits
        return
    for due in steps:  # no pace: all at once, from this thread (waiting only while held)
        time.sleep(max(0.0, due - time.monotonic()))


# What a stream's steps yield: when its next step is due (time.monotonic()); they end with the stream.
Step = Generator[float, None, None]


def _steps(
    handler: JSONHandler,
    reply: StreamedReply,
    events: list[dict[str, Any]],
    pace: StreamPace,
    stopping: threading.Event,
) -> Step:
    """The stream after its first event, one write a step, yielding when the next is due."""
    gap = 1.0 / pace.tokens_per_second if pace.tokens_per_second else 0.0
    gates = dict(reply.holds)  # after that many tokens, wait until the event is set
    if reply.hold is not None:
        gates[reply.hold[0]] = reply.hold[1]
    try:
        next_at = time.monotonic() + pace.first_token_s
        if pace.first_token_s:
            yield next_at
        for sent, event in enumerate(events):
            if stopping.is_set():
                handler.close_connection = True
                return
            if reply.cut_after is not None and sent >= reply.cut_after:
                handler.close_connection = True  # no last chunk: the client sees the body end early
                return
            gate = gates.get(sent)
            if gate is not None:
                while not gate.is_set():
                    if stopping.is_set():
                        handler.close_connection = True
                        return
                    yield time.monotonic() + HOLD_POLL_S
                next_at = time.monotonic()
            if gap and sent:
                next_at += gap
                yield next_at
                if stopping.is_set():
                    handler.close_connection = True
                    return
            _write(handler, event)
        _frame(handler, b"data: [DONE]\n\n")
        _frame(handler, b"")  # the last chunk of the chunked body
    except OSError:
        handler.close_connection = True


HOLD_POLL_S = 0.05  # a held stream looks whether it may go on this often
STOP_POLL_S = 0.1  # the pacer's longest sleep: a stop of a server is seen within it


class _Pacer:
    """One thread that writes every paced stream's next event when it is due.

    Why not each stream's own thread, sleeping between tokens: fifty streams at forty tokens a second are
    2000 wake-ups a second of fifty threads contending for the GIL — the stand-in model's process spent
    about as much CPU per streamed reply as the gateway spends on a whole one, on the same cores as the
    gateway (bench/README.md, "Streaming"), where a remote model spends none. The bytes on the wire are
    the same: one HTTP chunk per event, each written when it is due. A write blocks the others only while
    a client leaves its socket's buffer full (a reply is far smaller than one)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        # (when due, order, the stream's steps, set when they ended, its server's stop)
        self._due: list[tuple[float, int, Step, threading.Event, threading.Event]] = []
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def run(self, steps: Step, stopping: threading.Event) -> None:
        """Drive ``steps`` to their end (from the pacer's thread; at once when ``stopping`` is set);
        returns when they ended."""
        done = threading.Event()
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="sse-pacer", daemon=True)
                self._thread.start()
            heapq.heappush(self._due, (time.monotonic(), next(self._ids), steps, done, stopping))
            self._cond.notify()
        done.wait()

    def _loop(self) -> None:
        while True:
            _, _, steps, done, stopping = self._next()
            try:
                due = next(steps)
            except StopIteration:
                done.set()
                continue
            except Exception:  # a stream that failed ends; the others go on
                done.set()
                continue
            with self._cond:
                heapq.heappush(self._due, (due, next(self._ids), steps, done, stopping))

    def _next(self) -> tuple[float, int, Step, threading.Event, threading.Event]:
        """The next stream due — or one whose server stops, looked for every ``STOP_POLL_S``."""
        looked = time.monotonic()
        with self._cond:
            while True:
                now = time.monotonic()
                if self._due and self._due[0][0] <= now:
                    return heapq.heappop(self._due)
                if now - looked >= STOP_POLL_S:
                    looked = now
                    for index, entry in enumerate(self._due):
                        if entry[4].is_set():
                            self._due.pop(index)
                            heapq.heapify(self._due)
                            return entry
                wait = self._due[0][0] - now if self._due else STOP_POLL_S
                self._cond.wait(min(wait, STOP_POLL_S))


_PACER = _Pacer()


def _write(handler: JSONHandler, event: dict[str, Any]) -> None:
    _frame(handler, b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n\n")


def _frame(handler: JSONHandler, data: bytes) -> None:
    """One frame of the chunked body (an empty one ends it)."""
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()
