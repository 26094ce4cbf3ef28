"""One answer of the main model — its text, the function calls it asks for, why it stopped — read from a
whole chat completion or assembled from a streamed one (``stream=True``: OpenAI's ``chat.completion.chunk``
format, which every OpenAI-compatible server streams as server-sent events; the events are read from the
response's bytes here: gateway/agent.py says why).

Streamed, the text is handed to ``on_text`` (the reply's feed: gateway/streaming.py) a batch of deltas at
a time — the first words at once, then as often as the channel can show them; a function call arrives in
pieces keyed by its ``index`` — its id and name once, its arguments as fragments — and is joined here.
Both readers tolerate what a server leaves out (no choices, no delta, a chunk of another choice).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import jiter

# Reading a stream token by token costs a trip through the HTTP stack per read (bench/README.md,
# "Streaming": at 40 tokens a second, reading every 0.2 s cost a streamed reply about 35 ms of CPU, every
# second about 18). Nobody sees the words faster than their channel shows them (Telegram drafts,
# edits and cards: 1.5 s; the terminal: 0.1 s), so after a delta the stream is read again only when the
# channel can take new text (``TextSink.wanted_in``), within these bounds: what came meanwhile arrives in
# one read. The first words are handed on at once; the end of the reply is seen at most READ_MAX late —
# one frame of the channels' default pace: a read more often than the frames costs a pause and two socket
# reads that show nothing sooner (~0.45 ms of CPU each here; at 1 s, 12 reads a reply for 6 frames of
# 1.5 s, at 1.5 s 7: bench/README.md, "Stop 43").
READ_MIN = 0.1
READ_MAX = 1.5
# A chunk that came this soon after it was asked for was read already (in the read that ended a pause): the
# pause begins again only once the stream has caught up with the model (its next chunk had to be waited for).
_WAITED = 0.005


class TextSink(Protocol):
    """Where a streamed reply's text so far goes (gateway/streaming.py's ``Feed``)."""

    def __call__(self, text: str) -> None:
        """The reply so far (after each delta; never waits)."""
        ...

    def wanted_in(self) -> float:
        """Seconds until newer text could be shown (0: now)."""
        ...

    def ended(self) -> None:
        """The model's answer is whole and asks for no function calls: the reply's final text is sent
        next, so a frame now would only show what the final message shows a moment later."""
        ...


@dataclass(slots=True)
class Turn:
    """What one model call answered."""

    content: str | None = None
    finish_reason: str | None = None
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, arguments)

    def assistant_message(self) -> dict[str, Any]:
        """The assistant turn that asked for the calls, as it goes back to the model before their
        results."""
        return {
            "role": "assistant",
            "content": self.content,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                for call_id, name, arguments in self.tool_calls
            ],
        }


def turn_of(body: object) -> Turn:
    """The turn of a whole chat completion, from its decoded JSON body (``client.post`` with
    ``cast_to=object``: a dict, or the text of a body that was not ``application/json``); a malformed one
    gives an empty turn."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return Turn()
    finish = choices[0].get("finish_reason")
    message = choices[0].get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    return Turn(
        content if isinstance(content, str) else None,
        finish if isinstance(finish, str) else None,
        tool_calls_of(message.get("tool_calls")),
    )


def tool_calls_of(calls: object) -> list[tuple[str, str, str]]:
    """``(id, name, arguments)`` of each function call of a message's ``tool_calls`` (none when
    malformed; a call of another type, which has no ``function``, is left out)."""
    out = []
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        arguments = arguments if isinstance(arguments, str) else ""
        out.append((str(call.get("id", "")), function["name"], arguments))
    return out


class StreamFailed(Exception):
    """The model's stream said it failed (an ``error`` object where a chunk should be)."""


class StreamedTurn:
    """A turn assembled from a streamed answer's bytes (``feed``: the server-sent events as they came,
    cut anywhere).

    Why from bytes: a model streams one event per token, and the SDK's stream decoding each event (a
    ``ServerSentEvent``, the stdlib's ``json.loads``, four async generators deep) cost a reply more CPU
    than all the rest of its streaming (bench/README.md, "Streaming"). Here an event is cut out of the
    bytes and its JSON decoded by ``jiter`` (the openai SDK's own fast JSON parser), in a few µs. Events
    are split as the SSE format says (a blank line ends one; ``data:`` lines hold the JSON; comments and
    other fields are skipped; ``\r\n`` and ``\r`` end lines too); ``data: [DONE]`` ends the answer.
    """

    def __init__(self) -> None:
        self.text: str | None = None  # the text so far
        self.done = False  # [DONE] came
        self._finish: str | None = None
        self._calls: dict[int, list[str]] = {}  # index -> [id, name, arguments so far]
        self._rest = b""  # the start of an event not yet whole

    def feed(self, data: bytes) -> bool:
        """Bytes of the stream (any number of events, the last maybe cut short); whether the text grew.
        Raises ``ValueError`` for an event that is not JSON, ``StreamFailed`` for an error event."""
        buffer = self._rest + data if self._rest else data
        if b"\r" in buffer:
            held = buffer.endswith(b"\r")  # maybe the first half of a \r\n
            buffer = buffer[:-1] if held else buffer
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + (b"\r" if held else b"")
        end = buffer.rfind(b"\n\n")
        if end < 0 or self.done:
            self._rest = b"" if self.done else buffer
            return False
        self._rest = buffer[end + 2 :]
        grew = False
        for event in buffer[:end].split(b"\n\n"):
            if event.startswith(b"data: ") and b"\n" not in event:  # what every server sends
                payload = event[6:]
            else:
                lines = [line[5:] for line in event.split(b"\n") if line.startswith(b"data:")]
                if not lines:
                    continue  # a comment (a keep-alive) or an event without data
                payload = b"\n".join(line[1:] if line.startswith(b" ") else line for line in lines)
            if payload.startswith(b"[DONE]"):
                self.done = True
                break
            grew = self._add(jiter.from_json(payload)) or grew
        return grew

    def _add(self, chunk: object) -> bool:
        """One ``chat.completion.chunk``: its first choice's text, function-call fragments and finish
        reason; whether the text grew."""
        if not isinstance(chunk, dict):
            return False
        if chunk.get("error"):
            raise StreamFailed("the stream reported an error")
        grew = False
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason")
            if isinstance(finish, str):
                self._finish = finish
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                self.text = (self.text or "") + piece
                grew = True
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    self._add_call(call)
        return grew

    def _add_call(self, call: dict[str, Any]) -> None:
        index = call.get("index", 0)
        parts = self._calls.setdefault(index if isinstance(index, int) else 0, ["", "", ""])
        call_id = call.get("id")
        if isinstance(call_id, str) and call_id:
            parts[0] = call_id
        function = call.get("function")
        if not isinstance(function, dict):
            return
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str) and name:
            parts[1] = name
        if isinstance(arguments, str):
            parts[2] += arguments

    @property
    def final(self) -> bool:
        """[DONE] came and the answer asks for no function calls (no other model call follows it)."""
        return self.done and not self._calls and self._finish != "tool_calls"

    def turn(self) -> Turn:
        """The turn so far (after the last event: the whole turn)."""
        calls = [(i, n, a) for _, (i, n, a) in sorted(self._calls.items()) if n]
        return Turn(self.text, self._finish, calls)


async def read_stream(pieces: AsyncIterable[bytes], turn: StreamedTurn, sink: TextSink) -> Turn:
    """The whole turn of a streamed answer (its body's bytes as they arrive), read in batches after its
    first words: once the stream has caught up with the model, it is left alone until ``sink`` can show
    newer text (see ``READ_MIN``), and then everything that came meanwhile is read at once."""
    after_pause = False  # the piece read now is the first after a pause (it ends the pause)
    asked = time.monotonic()
    async for piece in pieces:
        caught_up = time.monotonic() - asked > _WAITED and not after_pause
        after_pause = False
        if turn.done:
            continue  # the body's end (read to it: the connection goes back to the pool)
        if turn.feed(piece) and turn.text is not None:
            sink(turn.text)
            if caught_up and not turn.done:
                # First the feed's task takes the text if a frame is due (its pace then counts from that
                # frame), so the pause ends when the next one is due: that read's text goes in it, and a
                # read that finds [DONE] comes before the frame it would make (``TextSink.ended``).
                await asyncio.sleep(0)
                await asyncio.sleep(min(max(sink.wanted_in(), READ_MIN), READ_MAX))
                after_pause = True
        if turn.final:
            # Said before the body's end is awaited (the feed's task may run then): the frame this read's
            # text made due is not sent, the final text follows (``Feed.ended``; bench/README.md, "Stop 44").
            sink.ended()
        asked = time.monotonic()
    # The end of the body ends its last event too (a server may leave out the closing blank line).
    if turn.feed(b"\n\n") and turn.text is not None:
        sink(turn.text)
    return turn.turn()
