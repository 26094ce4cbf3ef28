"""One answer of the main model — its text, the function calls it asks for, why it stopped — read from a
whole chat completion or assembled from a streamed one (``stream=True``: OpenAI's ``chat.completion.chunk``
format, which every OpenAI-compatible server streams as server-sent events).

Streamed, each text delta is added to the text so far and handed to ``on_text`` at once (the reply's
feed: gateway/streaming.py); a function call arrives in pieces keyed by its ``index`` — its id and name
once, its arguments as fragments — and is joined here. Both readers tolerate what a server leaves out
(no choices, no delta, a chunk of another choice).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


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
    """A turn assembled chunk by chunk (``add``), telling ``on_text`` the text so far after each delta."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self._on_text = on_text
        self._text: str | None = None
        self._finish: str | None = None
        self._calls: dict[int, list[str]] = {}  # index -> [id, name, arguments so far]

    def add(self, chunk: Any) -> None:
        """One ``chat.completion.chunk``: its first choice's delta and finish reason."""
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue
            finish = getattr(choice, "finish_reason", None)
            if isinstance(finish, str):
                self._finish = finish
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            piece = getattr(delta, "content", None)
            if isinstance(piece, str) and piece:
                self._text = (self._text or "") + piece
                self._on_text(self._text)
            for call in getattr(delta, "tool_calls", None) or []:
                self._add_call(call)

    def _add_call(self, call: Any) -> None:
        index = getattr(call, "index", 0)
        parts = self._calls.setdefault(index if isinstance(index, int) else 0, ["", "", ""])
        call_id = getattr(call, "id", None)
        if isinstance(call_id, str) and call_id:
            parts[0] = call_id
        function = getattr(call, "function", None)
        name, arguments = getattr(function, "name", None), getattr(function, "arguments", None)
        if isinstance(name, str) and name:
            parts[1] = name
        if isinstance(arguments, str):
            parts[2] += arguments

    def turn(self) -> Turn:
        """The turn so far (after the last chunk: the whole turn)."""
        calls = [(i, n, a) for _, (i, n, a) in sorted(self._calls.items()) if n]
        return Turn(self._text, self._finish, calls)
