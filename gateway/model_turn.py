"""One answer of the main model — its text, the function calls it asks for, why it stopped — read from a
whole chat completion or assembled from a streamed one (``stream=True``: OpenAI's ``chat.completion.chunk``
format, which every OpenAI-compatible server streams as server-sent events; each chunk is read as the
JSON object it came as: gateway/agent.py says why).

Streamed, each text delta is added to the text so far and handed to ``on_text`` at once (the reply's
feed: gateway/streaming.py); a function call arrives in pieces keyed by its ``index`` — its id and name
once, its arguments as fragments — and is joined here. Both readers tolerate what a server leaves out
(no choices, no delta, a chunk of another choice).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

# Reading a stream token by token costs a trip through the HTTP stack per read (bench/README.md,
# "Streaming": at 40 tokens a second, reading every 0.2 s cost a streamed reply about 35 ms of CPU, every
# second about 18). Nobody sees the words faster than their channel shows them (Telegram drafts: 1 s;
# edits: 1.5 s; cards: 1 s; the terminal: 0.1 s), so after a delta the stream is read again only when the
# channel can take new text (``TextSink.wanted_in``), within these bounds: what came meanwhile arrives in
# one read. The first words are handed on at once; the end of the reply is seen at most READ_MAX late.
READ_MIN = 0.1
READ_MAX = 1.0
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


def turn_of(response: Any) -> Turn:
    """The turn of a whole chat completion (a malformed one gives an empty turn)."""
    from memory.model.openai_model import completion_text

    content, finish = completion_text(response)
    return Turn(content, finish, tool_calls_of(response))


def tool_calls_of(response: Any) -> list[tuple[str, str, str]]:
    """``(id, name, arguments)`` of each function call the first choice asks for (none when malformed)."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return []
    calls = getattr(getattr(choices[0], "message", None), "tool_calls", None) or []
    out = []
    for call in calls:
        function = getattr(call, "function", None)
        name, arguments = getattr(function, "name", None), getattr(function, "arguments", None)
        if isinstance(name, str):
            out.append((str(getattr(call, "id", "")), name, arguments if isinstance(arguments, str) else ""))
    return out


class StreamedTurn:
    """A turn assembled chunk by chunk (``add``: each chunk as the JSON object it came as), telling
    ``on_text`` the text so far after each delta."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self._on_text = on_text
        self._text: str | None = None
        self._finish: str | None = None
        self._calls: dict[int, list[str]] = {}  # index -> [id, name, arguments so far]

    def add(self, chunk: object) -> bool:
        """One ``chat.completion.chunk``: its first choice's delta and finish reason; whether the text
        grew."""
        grew = False
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
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
                self._text = (self._text or "") + piece
                self._on_text(self._text)
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

    def turn(self) -> Turn:
        """The turn so far (after the last chunk: the whole turn)."""
        calls = [(i, n, a) for _, (i, n, a) in sorted(self._calls.items()) if n]
        return Turn(self._text, self._finish, calls)


async def read_stream(chunks: AsyncIterable[object], turn: StreamedTurn, sink: TextSink) -> Turn:
    """The whole turn of a streamed answer, read in batches after its first words: once the stream has
    caught up with the model, it is left alone until ``sink`` can show newer text (see ``READ_MIN``), and
    then everything that came meanwhile is read at once."""
    after_pause = False  # the chunk read now is the first after a pause (it ends the pause)
    asked = time.monotonic()
    async for chunk in chunks:
        caught_up = time.monotonic() - asked > _WAITED and not after_pause
        after_pause = False
        if turn.add(chunk) and caught_up:
            await asyncio.sleep(min(max(sink.wanted_in(), READ_MIN), READ_MAX))
            after_pause = True
        asked = time.monotonic()
    return turn.turn()
