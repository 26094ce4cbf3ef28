"""Who is answered on Telegram: the one message an update carries for the gateway, or None.

Decided before anything is sent or delivered: ``allowFrom`` first (a stranger gets no typing, no reply,
no memory row), then group gating (a group message must @mention the bot, reply to it, or be a
``/command@this_bot``, unless the group policy is "open"; a bare ``/command`` in a group is for whichever
bot the person meant, so it is not taken as addressed to us). Edited messages, channel posts and
messages from bots are ignored. ``lane_of``: which chat an update belongs to (the channel hands different
chats' updates over at once, each chat's in order).
"""

from __future__ import annotations

from telegram import Update

from channels.access import AllowList
from channels.base import InboundMessage
from channels.telegram.media import media_refs
from channels.telegram.message_text import (
    COMMAND_RE,
    attachment,
    cut,
    mention_spans,
    normalise_command,
    replies_to,
)
from channels.telegram.streaming import STOPPED_UPDATE


def addressed_message(
    update: Update, *, channel: str, allow: AllowList, group_policy: str, bot_username: str, bot_id: int
) -> InboundMessage | None:
    """The message to deliver for ``update``, or None when it is not for the gateway.

    Nothing observable happens before the allow-list check; a refused sender is logged (once) only
    when the message was addressed to the bot, so a busy group does not fill the log.
    """
    msg = update.message
    user = msg.from_user if msg is not None else None
    if msg is None or user is None or user.is_bot or msg.chat.type not in ("private", "group", "supergroup"):
        return None
    kind = attachment(msg)
    if msg.text is None and not kind:
        return None  # a service message, location, poll…: nothing to answer
    text = msg.text if msg.text is not None else msg.caption or ""
    entities = msg.entities if msg.text is not None else msg.caption_entities
    is_group = msg.chat.type != "private"
    spans = mention_spans(text, entities, bot_username, bot_id)
    replied = replies_to(msg, bot_id)
    command = COMMAND_RE.match(text)
    target: str | None = command.group(2) if command else None  # "/cmd@target"
    command_for_me = target is not None and target.casefold() == bot_username.casefold()
    command_for_other = target is not None and not command_for_me
    # A bare "/cmd" in a group is for every bot there (Telegram's menus send "/cmd@bot" when they
    # mean one), so only "/cmd@this_bot", a mention or a reply makes it ours.
    addressed = not command_for_other and (
        not is_group or group_policy == "open" or bool(spans) or replied or command_for_me
    )
    sender = str(user.id)
    if not allow.allows((sender, user.username or "")):
        if addressed:
            allow.refuse(sender, f"@{user.username}" if user.username else user.full_name)
        return None
    if not addressed:
        return None
    return InboundMessage(
        channel=channel,
        chat_id=str(msg.chat.id),
        sender_id=sender,
        text=normalise_command(cut(text, spans), bot_username),
        message_id=str(msg.message_id),
        is_group=is_group,
        mentions_bot=bool(spans) or replied,
        attachment=kind,
        delivery_id=str(update.update_id),
        sequence=update.update_id,  # Telegram numbers a bot's updates in order: the chat's order
        media=media_refs(msg),
    )


def lane_of(update: Update) -> str:
    """The chat ``update`` belongs to (a "stop" on a draft names its chat in the update's extra fields),
    "" when none: the channel hands a chat's updates over in order, different chats' at once."""
    if (chat := update.effective_chat) is not None:
        return str(chat.id)
    stop = (update.api_kwargs or {}).get(STOPPED_UPDATE)
    chat_of_stop = stop.get("chat") if isinstance(stop, dict) else None
    return str(chat_of_stop.get("id", "")) if isinstance(chat_of_stop, dict) else ""
