"""The notices the process loop sends in place of a reply (gateway/loop.py): a failure, a missed deadline,
every slot busy — each in the language of the message it answers (gateway/README.md)."""

from __future__ import annotations

from channels.base import InboundMessage
from memory.text.wording import is_chinese

FAILURE_REPLY = "Sorry — something went wrong while handling that message."
DEADLINE_REPLY = "Sorry — I could not get an answer in time. Please try again in a moment."
BUSY_REPLY = "I'm busy with other conversations right now; I'll answer this as soon as I can."
# The same notices for a message written in Chinese (the person's language: gateway/README.md).
NOTICES_ZH = {
    FAILURE_REPLY: "抱歉，处理这条消息时出了点问题。",
    DEADLINE_REPLY: "抱歉，我没能及时给出回答，请稍后再试。",
    BUSY_REPLY: "我正忙着回复其他对话，会尽快回答这条消息。",
}


def notice_for(message: InboundMessage, notice: str) -> str:
    """One of the notices above in the language of the message it answers."""
    return NOTICES_ZH.get(notice, notice) if is_chinese(message.text) else notice
