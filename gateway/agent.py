"""The main model: what one reply request holds, and the models that answer it.

``ChatRequest`` is assembled by the process loop (system prompt, Tier 0 history, the user's words, the
retrieved memories); a ``ChatModel`` turns it into a reply. ``OpenAIChatModel`` speaks to any
OpenAI-compatible endpoint through ``AsyncOpenAI``; ``OfflineChatModel`` (``gateway/offline_chat.py``) is
the labelled local stand-in used without an API key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from memory.models import Retrieved


class ModelError(RuntimeError):
    """The main model could not produce a reply (after the client's own retries)."""


@dataclass(slots=True)
class ChatRequest:
    """Everything the main model sees for one reply."""

    system: str
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, content), oldest first
    user_text: str = ""
    memories: list[Retrieved] = field(default_factory=list)
    memory_block: str = ""  # the delimited data block sent with the user message ("" when none)

    def messages(self) -> list[dict[str, str]]:
        """Chat-completions messages: system, history, then the user turn with its memory block."""
        out = [{"role": "system", "content": self.system}]
        out.extend({"role": role, "content": content} for role, content in self.history)
        user = f"{self.memory_block}\n\n{self.user_text}" if self.memory_block else self.user_text
        out.append({"role": "user", "content": user})
        return out


class ChatModel(Protocol):
    """Answers one ``ChatRequest``; raises ``ModelError`` when it cannot."""

    @property
    def label(self) -> str:
        """Human-readable name for logs and ``tierclaw status``."""
        ...

    async def reply(self, request: ChatRequest) -> str:
        """The assistant's reply text."""
        ...
