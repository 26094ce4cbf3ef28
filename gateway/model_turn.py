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
from typing import Any

# Reading a stream token by token costs a trip through the HTTP stack per token (measured: ~0.3 ms each,
# 300 a reply: 100 ms of CPU, more than the rest of a reply's path). After a delta the stream is read
# again only after READ_EVERY: what came meanwhile arrives in one read (30 ms a reply). Nobody sees the
# words faster anyway (Telegram drafts: 1 s; edits: 1.5 s; the terminal redraws 10 times a second), and
# the first words are handed on at once (bench/README.md, "Streaming").
READ_EVERY = 0.2
_SAME_READ = 0.005  # deltas handled this soon after a pause came in the read that ended it


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


async def read_stream(chunks: AsyncIterable[object], turn: StreamedTurn) -> Turn:
    """The whole turn of a streamed answer, read in batches after its first words (``READ_EVERY``)."""
    resumed = float("-inf")
    async for chunk in chunks:
        if turn.add(chunk) and time.monotonic() - resumed > _SAME_READ:
            await asyncio.sleep(READ_EVERY)
            resumed = time.monotonic()
    return turn.turn()
