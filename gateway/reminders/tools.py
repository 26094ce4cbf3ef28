"""Reminder tools for the main model, beside the memory tools (``gateway/memory_tools.py``).

``reminder_create`` takes what to be reminded of and the time words as the person said them ("Friday
9am", "in 20 minutes", "明天下午三点") — or their whole sentence as ``said`` — and the same parser as
everywhere reads them in the person's zone (``book.ReminderBook.create``), so the model never computes a
date; the result's ``scheduled`` is the sentence to tell the person. ``reminder_list`` and
``reminder_cancel`` act on the person's own reminders; ``reminder_timezone`` sets their zone once they
confirmed it. Like ``MemoryTools`` the tools are bound to one message's owner and chat: no argument can
reach another person's reminders, and a bad call is a ``{"error": …}`` result, never an exception.

``JoinedTools`` hands the model both sets as one ``ToolBox``; the offline stand-in gets the reminder
tools alone (``gateway/reminders/offline.py``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from gateway.agent import ToolBox
from gateway.reminders.book import Created, ReminderBook, local_of
from gateway.reminders.zones import zone_name

log = logging.getLogger("tierclaw.gateway")

_TEXT = {"type": "string", "description": "what to remind the person of, in their words"}
TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "reminder_create",
            "description": "Schedule a reminder that will be sent to this chat at the time the person asked "
            "for, in their time zone. Give `when` as the person's own time words ('Friday 9am', 'in 20 "
            "minutes', 'every Monday at 8', '明天下午三点') — they are read for you — and `text`; or pass "
            "their whole request as `said`. Repeats: daily, weekdays, weekly:mon,thu, monthly:N. Tell the "
            "person the `scheduled` sentence of the result, or the `error` when there is one.",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": _TEXT,
                    "when": {"type": "string", "description": "the time, in the person's words"},
                    "repeat": {
                        "type": "string",
                        "description": "daily, weekdays, weekly:mon,thu or monthly:N",
                    },
                    "said": {
                        "type": "string",
                        "description": "the person's whole request, instead of the rest",
                    },
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "reminder_list",
            "description": "The person's waiting reminders (id, next time in their zone, repeat, text) "
            "and the ones that could not be delivered.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "reminder_cancel",
            "description": "Cancel one of the person's waiting reminders by id.",
            "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "reminder_timezone",
            "description": "Set the person's time zone (an IANA name such as Europe/London, or a city). Only "
            "after the person said which zone they are in, or confirmed one you suggested.",
            "parameters": {
                "type": "object",
                "properties": {"zone": {"type": "string"}},
                "required": ["zone"],
            },
        },
    },
]
NAMES = frozenset(t["function"]["name"] for t in TOOL_SCHEMAS)


class ReminderTools:
    """The reminder tools of one message, bound to its owner and chat (a ``ToolBox``)."""

    def __init__(
        self, book: ReminderBook, owner: str, channel: str, chat_id: str, max_rounds: int = 4
    ) -> None:
        self.book = book
        self.owner = owner
        self.channel = channel
        self.chat_id = chat_id
        self.max_rounds = max_rounds

    def schemas(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMAS

    async def call(self, name: str, arguments: str) -> str:
        """Run one call; always a JSON string."""
        try:
            args = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(args, dict):
                raise ValueError
        except ValueError:
            return json.dumps({"error": "arguments must be a JSON object"})
        try:
            result = await self.run(name, args)
        except Exception as exc:  # a store failure: the model is told, the reply goes on
            log.error("[gateway] tool %s failed for owner=%s: %s", name, self.owner, type(exc).__name__)
            result = {"error": "reminders are unavailable just now"}
        log.info("[gateway] tool %s owner=%s %s", name, self.owner, "refused" if "error" in result else "ok")
        return json.dumps(result, ensure_ascii=False)

    async def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """One call as a dict (the offline stand-in reads it directly)."""
        if name == "reminder_create":
            fields = {k: args.get(k) for k in ("text", "when", "repeat", "said")}
            if any(v is not None and not isinstance(v, str) for v in fields.values()):
                return {"error": "text, when, repeat and said must be text"}
            made = await self.book.create(
                self.owner, self.channel, self.chat_id, **{k: v for k, v in fields.items() if v}
            )
            if isinstance(made, Created):
                at = f"{made.local:%Y-%m-%d %H:%M}"
                return {
                    "id": made.id,
                    "scheduled": made.said,
                    "at": at,
                    "zone": made.zone,
                    "repeat": str(made.repeat or ""),
                }
            return {"error": made.said, "reason": made.reason}
        if name == "reminder_list":
            return await self._list()
        if name == "reminder_cancel":
            reminder_id = args.get("id")
            if not isinstance(reminder_id, int) or isinstance(reminder_id, bool):
                return {"error": '"id" must be a reminder id (an integer)'}
            row = await self.book.cancel(self.owner, reminder_id)
            return (
                {"error": f"no waiting reminder {reminder_id}"}
                if row is None
                else {"cancelled": row.id, "text": row.text}
            )
        if name == "reminder_timezone":
            zone = await self.book.set_zone(self.owner, str(args.get("zone") or ""))
            return (
                {"error": f"unknown time zone {args.get('zone')!r}"}
                if zone is None
                else {"zone": zone_name(zone)}
            )
        return {"error": f"unknown tool {name!r}; the tools are {', '.join(sorted(NAMES))}"}

    async def _list(self) -> dict[str, Any]:
        _, zone, confirmed = await self.book.now_local(self.owner)
        waiting = [
            {"id": r.id, "at": f"{local_of(r):%Y-%m-%d %H:%M}", "repeat": r.repeat, "text": r.text}
            for r in await self.book.waiting(self.owner)
        ]
        failed = [
            {"id": r.id, "status": r.status, "text": r.text}
            for r in await self.book.not_delivered(self.owner)
        ]
        return {
            "zone": zone_name(zone),
            "zone_set_by_person": confirmed,
            "waiting": waiting,
            "not_delivered": failed,
        }


class JoinedTools:
    """Two ``ToolBox``es as one: the memory tools and the reminder tools of a message."""

    def __init__(self, first: ToolBox, reminders: ReminderTools) -> None:
        self.first = first
        self.reminders = reminders
        self.max_rounds = first.max_rounds

    def schemas(self) -> list[dict[str, Any]]:
        return [*self.first.schemas(), *self.reminders.schemas()]

    async def call(self, name: str, arguments: str) -> str:
        if name in NAMES:
            return await self.reminders.call(name, arguments)
        return await self.first.call(name, arguments)


def message_tools(
    memory: ToolBox | None,
    book: ReminderBook | None,
    owner: str,
    channel: str,
    chat_id: str,
    *,
    stand_in: bool,
    enabled: bool,
) -> ToolBox | None:
    """The tools of one message: the memory tools and the reminder tools when tools are on
    (``agent.tools``); the offline stand-in gets the reminder tools alone, whatever ``agent.tools`` says
    (it reads them itself: ``offline.py``)."""
    if book is None or not (enabled or stand_in):
        return memory
    reminders = ReminderTools(book, owner, channel, chat_id, memory.max_rounds if memory else 4)
    return reminders if memory is None else JoinedTools(memory, reminders)


def reminder_tools_of(tools: object) -> ReminderTools | None:
    """The reminder tools inside a request's ``tools`` (alone or joined), if any."""
    if isinstance(tools, ReminderTools):
        return tools
    if isinstance(tools, JoinedTools):
        return tools.reminders
    return None
