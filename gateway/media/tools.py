"""The main model's attachment tools, beside its memory tools (``gateway/memory_tools.py``):
``attachment_search`` finds the person's voice notes, photos and files by what they held (what was heard,
seen or read, the name, the caption, when), ``attachment_send`` sends one back to this chat.

``with_attachment_tools`` joins them to one message's ``MemoryTools``: the same rounds, the same result
budget; bad calls are tool errors the model reads, never exceptions.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.base import InboundMessage
from gateway.media.send_back import FileSender
from gateway.memory_tools import MemoryTools
from memory.attachments import AttachmentLog

log = logging.getLogger("tierclaw.gateway")

MAX_RESULTS = 10
SNIPPET = 160

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "attachment_search",
            "description": "Search the voice notes, photos and files this person sent you, by what they "
            "held (what was heard, seen or read in them), their name, caption or when they were sent. "
            "Returns id, kind, name, date and a snippet. Use attachment_send to send one back.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for, in the person's words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "attachment_send",
            "description": "Send one of the person's kept attachments (by id from attachment_search) back "
            "to this chat. Only when they ask for the file itself.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
        },
    },
]


class AttachmentTools:
    """The two tools for one message (bound to its owner and chat)."""

    def __init__(
        self,
        attachments: AttachmentLog,
        sender: FileSender,
        owner: str,
        msg: InboundMessage,
        received: list[int] | None = None,
    ) -> None:
        self.attachments = attachments
        self.sender = sender
        self.owner = owner
        self.msg = msg
        self.received = received or []  # this message's own attachments (a memory saved now links them)
        self.sent: list[int] = []  # ids sent back while answering this message

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "attachment_search":
            return await self.search(args)
        return await self.send(args)

    async def search(self, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return {"error": '"query" must be non-empty text'}
        limit = args.get("limit", 5)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_RESULTS:
            return {"error": f'"limit" must be an integer from 1 to {MAX_RESULTS}'}
        hits = await self.attachments.search(self.owner, query, k=limit)
        return {
            "results": [
                {
                    "id": hit.row.id,
                    "kind": hit.row.kind,
                    "name": hit.row.file_name,
                    "date": hit.row.created_at[:10],
                    "caption": hit.row.caption,
                    "snippet": _snippet(
                        hit.row.transcription or hit.row.description or hit.row.extracted_text
                    ),
                    "score": round(hit.score, 3),
                }
                for hit in hits
            ]
        }

    async def send(self, args: dict[str, Any]) -> dict[str, Any]:
        attachment_id = args.get("id")
        if not isinstance(attachment_id, int) or isinstance(attachment_id, bool) or attachment_id <= 0:
            return {"error": '"id" must be an attachment id (an integer)'}
        if attachment_id in self.sent:
            return {"result": "already sent", "id": attachment_id}
        result = await self.sender.send(self.owner, self.msg, attachment_id)
        if not result.ok:
            return {"error": f"not sent: {result.reason}"}
        self.sent.append(attachment_id)
        return {"result": "sent", "id": attachment_id, "name": result.row.file_name if result.row else ""}


class WithAttachments:
    """A ``ToolBox`` (gateway/agent.py): the memory tools and the attachment tools of one message."""

    def __init__(self, memory: MemoryTools, attachments: AttachmentTools) -> None:
        self.memory = memory
        self.attachments = attachments
        self.max_rounds = memory.max_rounds

    def schemas(self) -> list[dict[str, Any]]:
        return [*self.memory.schemas(), *SCHEMAS]

    async def _link(self, result: str) -> None:
        """A memory saved while answering a message with attachments is linked to them."""
        tools = self.attachments
        try:
            saved = json.loads(result)
            if isinstance(saved, dict) and isinstance(saved.get("id"), int):
                for attachment_id in tools.received:
                    await tools.attachments.link_memories(tools.owner, attachment_id, [saved["id"]])
        except Exception as exc:  # a link is a nicety; the memory is saved
            log.warning("[memory] linking a memory to attachments failed: %s", type(exc).__name__)

    async def call(self, name: str, arguments: str) -> str:
        if name not in ("attachment_search", "attachment_send"):
            text = await self.memory.call(name, arguments)
            if name == "memory_save" and self.attachments.received:
                await self._link(text)
            return text
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            args = None
        if not isinstance(args, dict):
            return json.dumps({"error": "arguments must be a JSON object"})
        try:
            result = await self.attachments.call(name, args)
        except Exception as exc:  # a store or channel failure: the model is told, the reply goes on
            log.error("[memory] tool %s failed for owner=%s: %s", name, self.attachments.owner, exc)
            result = {"error": "attachments are unavailable just now"}
        text = json.dumps(result, ensure_ascii=False)
        budget = self.memory.budget_chars
        if len(text) > budget:
            text = json.dumps(
                {"error": "tool result budget of this reply used up; answer with what you have"}
            )
        self.memory.budget_chars -= len(text)
        return text


def _snippet(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SNIPPET else line[: SNIPPET - 1] + "…"
