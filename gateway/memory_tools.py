"""Memory tools for the main model: the second level of memory, after what the gate injects.

Injection (``assistant.py``) gives the model a few memories it did not ask for; when those are not the
right ones, these tools let it look further itself — a short index first (``memory_search``), the full
text on request (``memory_get``), what was said word for word (``conversation_search``) — and keep
(``memory_save``) or drop (``memory_forget``) what the person asks it to. The definitions are OpenAI
function-calling schemas; ``call`` runs one call.

The owner is never a parameter: a ``MemoryTools`` is made for one message, bound to its sender's owner,
so no call can reach another person's rows. Nothing a call carries raises: an unknown tool, arguments that
are not JSON or have the wrong types, ids that are not this owner's — each becomes ``{"error": …}`` for
the model to read. Every result is cut to what is left of the reply's budget (``budget_chars``). One
``[memory]`` log line per call; content only at DEBUG.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeGuard

from memory.engine import MemoryEngine
from memory.head.filing import file_category
from memory.records import GLOBAL_PROJECT, Event, Fact, Memory
from memory.retrieval.decay import CATEGORIES

log = logging.getLogger("tierclaw.memory")

SNIPPET_CHARS = 160
TURN_CHARS = 400  # a conversation turn in conversation_search results
EPISODES_PER_SEARCH = 2  # memory_search lists at most this many episodes after the memories
MAX_SEARCH_LIMIT = 20
MAX_GET_IDS = 10
TOOL_IMPORTANCE = 0.7
# memory_forget runs only when the person's own message asks to forget (a model must not drop memories on
# its own initiative): these words, in English or Chinese.
_FORGET_ASKED = re.compile(r"forget|delete|remove|erase|drop|忘|删|去掉|移除|不要记", re.IGNORECASE)

_DATE = {"type": "string", "description": "a date, YYYY-MM-DD"}
TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "memory_search",
            "description": "Search your long-term memory of this person (facts, preferences, decisions, "
            "and episodes: what happened in earlier conversations, with goal and outcome). Returns a short "
            "index: id, type, date, category, project, a one-line snippet, score. Use memory_get for the "
            "full text of a memory.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for, in the person's words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT},
                    "project": {"type": "string", "description": "only memories of this project"},
                    "since": _DATE,
                    "until": _DATE,
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_get",
            "description": "The full text of memories by id, with where each came from, when it was made "
            "and changed, and what superseded it.",
            "parameters": {
                "type": "object",
                "properties": {
                    "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_GET_IDS},
                },
                "required": ["ids"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_save",
            "description": "Remember something about this person for later (one self-contained fact). "
            "Says whether it was new, merged into an existing memory, or replaced an older one.",
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "category": {"type": "string", "enum": list(CATEGORIES)},
                    "project": {"type": "string"},
                },
                "required": ["content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "conversation_search",
            "description": "Search what was actually said in earlier conversations with this person (every "
            "session and channel), for details no memory holds. Returns matching turns with their date "
            "and the turns around them.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "since": _DATE,
                    "until": _DATE,
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_forget",
            "description": "Forget (archive) one memory by id. Only when the person asked you to forget it.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
        },
    },
]


class ToolError(ValueError):
    """A call the model got wrong: the message is what the model reads."""


@dataclass(slots=True)
class ToolSettings:
    """``agent.tools``, ``agent.maxToolRounds`` and ``agent.toolResultChars`` of the config."""

    enabled: bool = True
    max_rounds: int = 4
    budget_chars: int = 8000


class MemoryTools:
    """The memory tools of one message, bound to its owner (``ChatRequest.tools``).

    ``user_text`` is the person's message (``memory_forget`` checks it asks to forget). ``max_rounds``
    and the remaining ``budget_chars`` are read by the tool loop (``gateway/agent.py``).
    """

    def __init__(self, engine: MemoryEngine, owner: str, user_text: str, settings: ToolSettings) -> None:
        self.engine = engine
        self.owner = owner
        self.user_text = user_text
        self.max_rounds = settings.max_rounds
        self.budget_chars = settings.budget_chars
        self.calls = 0

    def schemas(self) -> list[dict[str, Any]]:
        """The tool definitions sent with the request."""
        return TOOL_SCHEMAS

    @property
    def budget_left(self) -> int:
        return max(self.budget_chars, 0)

    async def call(self, name: str, arguments: str) -> str:
        """Run one tool call; always a JSON string (``{"error": …}`` when the call was wrong or failed)."""
        started = time.monotonic()
        self.calls += 1
        try:
            args = _arguments(arguments)
            handler = _HANDLERS.get(name)
            if handler is None:
                raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(_HANDLERS)}")
            result: Any = await handler(self, args)
            outcome = "ok"
        except ToolError as exc:
            result, outcome = {"error": str(exc)}, "refused"
        except Exception as exc:  # a store failure: the model is told, the reply goes on
            log.error("[memory] tool %s failed for owner=%s: %s", name, self.owner, exc)
            result, outcome = {"error": "memory is unavailable just now"}, "failed"
        text = self._within_budget(json.dumps(result, ensure_ascii=False))
        log.info(
            "[memory] tool %s owner=%s %s, %d chars, %.1f ms",
            name,
            self.owner,
            outcome,
            len(text),
            (time.monotonic() - started) * 1000,
        )
        log.debug("[memory] tool %s arguments=%s result=%s", name, arguments, text)
        return text

    def _within_budget(self, text: str) -> str:
        """``text`` cut to the reply's remaining tool budget (and the budget reduced by it)."""
        budget = self.budget_left
        if len(text) > budget:
            cut = budget - 60
            partial = text
            while cut > 100 and len(partial) > budget:  # escaping the cut text makes it longer: cut more
                partial = json.dumps({"truncated": True, "partial": text[:cut]}, ensure_ascii=False)
                cut -= len(partial) - budget + 10
            text = (
                partial
                if len(partial) <= budget
                else json.dumps(
                    {"error": "tool result budget of this reply used up; answer with what you have"}
                )
            )
        self.budget_chars -= len(text)
        return text

    # ------------------------------------------------------------------ the tools

    async def memory_search(self, args: dict[str, Any]) -> dict[str, Any]:
        query = _text(args, "query", required=True)
        limit = _integer(args, "limit", default=5, low=1, high=MAX_SEARCH_LIMIT)
        project = _text(args, "project")
        since, until = _date(args, "since"), _date(args, "until")
        filtered = bool(project or since or until)
        hits = await self.engine.search(self.owner, query, k=limit * 4 if filtered else limit)
        rows = []
        for hit in hits:
            day = hit.created_at[:10]
            if (project and hit.project != project) or (since and day < since) or (until and day > until):
                continue
            rows.append(
                {
                    "id": hit.id,
                    "type": "profile" if hit.tier == 1 else "memory",
                    "date": day,
                    "category": hit.category,
                    "project": hit.project,
                    "snippet": _snippet(hit.content),
                    "score": round(hit.score, 3),
                }
            )
        episodes = await self.engine.events.find(
            self.owner, since=since or None, until=until or None, query=query, limit=EPISODES_PER_SEARCH
        )
        rows = rows[: max(limit - len(episodes), 1)] + [_episode(e) for e in episodes]
        return {"results": rows[:limit]}

    async def memory_get(self, args: dict[str, Any]) -> dict[str, Any]:
        ids = args.get("ids")
        if isinstance(ids, int) and not isinstance(ids, bool):
            ids = [ids]
        if not isinstance(ids, list) or not ids or not all(_is_int(i) for i in ids):
            raise ToolError('"ids" must be a non-empty list of memory ids (integers)')
        found, missing = [], []
        for memory_id in ids[:MAX_GET_IDS]:
            mem = await self.engine.get(self.owner, memory_id)
            if mem is None:  # another owner's id looks exactly like one that does not exist
                missing.append(memory_id)
            else:
                found.append(await self._full(mem))
        result: dict[str, Any] = {"memories": found}
        if missing:
            result["not_found"] = missing
        return result

    async def _full(self, mem: Memory) -> dict[str, Any]:
        chain: list[dict[str, Any]] = []
        next_id = mem.superseded_by
        while next_id is not None and len(chain) < 5:
            newer = await self.engine.get(self.owner, next_id)
            if newer is None:
                break
            chain.append({"id": newer.id, "content": newer.content})
            next_id = newer.superseded_by
        return {
            "id": mem.id,
            "content": mem.content,
            "state": "archived" if mem.is_archived else "live",
            "type": "profile" if mem.tier == 1 else "memory",
            "category": mem.category,
            "project": mem.project,
            "source": mem.source,
            "sources": mem.refs,
            "created": mem.created_at,
            "updated": mem.updated_at,
            "superseded_by": chain,
        }

    async def memory_save(self, args: dict[str, Any]) -> dict[str, Any]:
        content = _text(args, "content", required=True)
        category = _text(args, "category") or await file_category(content, self.engine.embedder)
        if category not in CATEGORIES:
            raise ToolError(f'"category" must be one of {", ".join(CATEGORIES)}')
        fact = Fact(
            content=content,
            category=category,
            project=_text(args, "project") or GLOBAL_PROJECT,
            importance=TOOL_IMPORTANCE,
            source="tool",
        )
        try:
            result = await self.engine.write(self.owner, fact, embed=False)
        except ValueError as exc:  # too long, empty after cleaning: the write path says what is wrong
            raise ToolError(str(exc)) from None
        if result.action == "merged":
            return {"result": "merged", "id": result.id}
        if result.action == "superseded":
            return {"result": "superseded", "id": result.id, "replaced": result.replaced_id}
        return {"result": "inserted", "id": result.id}

    async def conversation_search(self, args: dict[str, Any]) -> dict[str, Any]:
        query = _text(args, "query", required=True)
        limit = _integer(args, "limit", default=5, low=1, high=MAX_SEARCH_LIMIT)
        since, until = _date(args, "since"), _date(args, "until")
        hits = await self.engine.conversation.search(
            self.owner,
            query,
            since=datetime.fromisoformat(since) if since else None,
            until=datetime.fromisoformat(until) + timedelta(days=1) if until else None,
            limit=limit,
        )
        return {
            "results": [
                {
                    "id": hit.turn.id,
                    "at": hit.turn.created_at[:16],
                    "channel": hit.turn.channel,
                    "score": round(hit.score, 3),
                    "turns": [
                        {"role": t.role, "text": _snippet(t.content, TURN_CHARS), "match": t is hit.turn}
                        for t in hit.context
                    ],
                }
                for hit in hits
            ]
        }

    async def memory_forget(self, args: dict[str, Any]) -> dict[str, Any]:
        memory_id = args.get("id")
        if not _is_int(memory_id):
            raise ToolError('"id" must be a memory id (an integer)')
        if not _FORGET_ASKED.search(self.user_text):
            raise ToolError("the person did not ask to forget anything; only forget when they ask")
        mem = await self.engine.get(self.owner, memory_id)
        if mem is None or mem.is_archived:
            raise ToolError(f"no live memory {memory_id}")
        await self.engine.archive(self.owner, memory_id)
        return {"result": "forgotten", "id": memory_id, "content": mem.content}


_HANDLERS = {
    "memory_search": MemoryTools.memory_search,
    "memory_get": MemoryTools.memory_get,
    "memory_save": MemoryTools.memory_save,
    "conversation_search": MemoryTools.conversation_search,
    "memory_forget": MemoryTools.memory_forget,
}


def _episode(event: Event) -> dict[str, Any]:
    """A Tier 3 episode as memory_search lists it: short enough to give whole."""
    return {
        "id": event.id,
        "type": "episode",
        "date": event.event_date,
        "summary": event.summary,
        "goal": event.goal,
        "outcome": event.outcome,
        "entities": event.entities,
        "started": event.started_at,
        "ended": event.ended_at,
        "facts": event.fact_ids,
    }


def _arguments(raw: str) -> dict[str, Any]:
    try:
        args = json.loads(raw) if raw.strip() else {}
    except (AttributeError, json.JSONDecodeError):
        raise ToolError("arguments must be a JSON object") from None
    if not isinstance(args, dict):
        raise ToolError("arguments must be a JSON object")
    return args


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


def _text(args: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = args.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ToolError(f'"{key}" must be {"non-empty " if required else ""}text')
    return value.strip()


def _integer(args: dict[str, Any], key: str, *, default: int, low: int, high: int) -> int:
    value = args.get(key, default)
    if not _is_int(value) or not low <= value <= high:
        raise ToolError(f'"{key}" must be an integer from {low} to {high}')
    return int(value)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _date(args: dict[str, Any], key: str) -> str:
    value = _text(args, key)
    if value and not _DAY.fullmatch(value):
        raise ToolError(f'"{key}" must be a date written YYYY-MM-DD')
    return value


def _snippet(content: str, limit: int = SNIPPET_CHARS) -> str:
    line = " ".join(content.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
