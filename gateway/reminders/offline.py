"""What the offline stand-in (``gateway/offline_chat.py``) does with reminders: a request in the person's
words is scheduled through the same tool the main model uses (``tools.ReminderTools``, the same parser and
checks) and answered with exactly what was scheduled, or why not; a statement naming where the person
lives ("I live in Tokyo", "我在上海") gets a question whether to use that place's time zone, when it is
not theirs already. Nothing here is guessed beyond the parser: the reply is the tool's own sentence."""

from __future__ import annotations

from gateway.agent import ChatRequest
from gateway.reminders import wording
from gateway.reminders.parsing import is_request, language
from gateway.reminders.tools import reminder_tools_of
from gateway.reminders.zones import mentioned_zone, zone_name


async def scheduled_reply(request: ChatRequest) -> str | None:
    """The stand-in's whole answer to a reminder request (None: the message asks for none)."""
    tools = reminder_tools_of(request.tools)
    if tools is None or not is_request(request.user_text):
        return None
    result = await tools.run("reminder_create", {"said": request.user_text})
    return str(result.get("scheduled") or result.get("error") or "")


async def zone_question(request: ChatRequest) -> str | None:
    """ "Is your time zone Asia/Tokyo?" when the message names a place in another zone than theirs."""
    tools = reminder_tools_of(request.tools)
    if tools is None:
        return None
    heard = mentioned_zone(request.user_text)
    if heard is None:
        return None
    current, confirmed = await tools.book.zone(tools.owner)
    if confirmed and zone_name(current) == zone_name(heard):
        return None
    return wording.words(language(request.user_text))["zone_suggest"].format(zone=zone_name(heard))
