"""What a person on each platform sees of a reply, read from the local servers' records as they grow.

One ``Reply`` per message sent to the gateway: when it was sent (``sent_at``: the update queued for
``getUpdates``, the event POST starting), when the first words were visible (``first_at``: a draft, the
first message, the card's message), when the whole reply was (``full_at``: the final text equals what the
model wrote), and how many times what the person sees changed (``updates``). ``TelegramWatch`` and
``FeishuWatch`` read the servers' records incrementally (every ``POLL_S``) and fill them in; a reply
whose final text is wrong or never comes is an error of its surface.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from channels.telegram.html import markdown_to_html
from localservers.feishu_cardkit import StubCard
from localservers.feishu_server import FeishuStub
from localservers.telegram_entities import check_html
from localservers.telegram_server import ApiCall, TelegramStub

POLL_S = 0.02  # how often the records are read (the times are the servers' own, not the reads')
WRITES = ("sendMessage", "editMessageText", "sendMessageDraft")


@dataclass
class Reply:
    """One message to the gateway and what became of its reply."""

    surface: str
    chat: str  # the platform's chat id
    incoming: str  # the platform's id of the person's message
    expected: str  # the model's reply, as the surface shows it when whole
    sent_at: float
    first_at: float | None = None
    full_at: float | None = None
    updates: int = 0
    replies: list[str] = field(default_factory=list)  # ids of the bot messages answering it
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def shown(self, at: float) -> None:
        """What the person sees changed at ``at``."""
        self.updates += 1
        if self.first_at is None:
            self.first_at = at

    def finished(self, at: float) -> None:
        if self.full_at is None:
            self.full_at = at
            self.done.set()


def telegram_visible(markdown: str) -> str:
    """What Telegram shows of a reply the gateway renders from ``markdown``."""
    text, _ = check_html(markdown_to_html(markdown.strip()))
    return text


class TelegramWatch:
    """The replies of Telegram chats, read from the local Bot API server's calls."""

    def __init__(self, tg: TelegramStub) -> None:
        self.tg = tg
        self.by_chat: dict[str, Reply] = {}  # the reply each chat waits for now
        self.sends: dict[str, int] = {}  # incoming id -> sendMessage calls replying to it
        self._seen = 0

    def expect(self, reply: Reply) -> None:
        self.by_chat[reply.chat] = reply

    async def run(self) -> None:
        while True:
            self.read()
            await asyncio.sleep(POLL_S)

    def read(self) -> None:
        """Take in the calls answered since the last read (in order: an unanswered one waits)."""
        for call in self.tg.calls[self._seen :]:  # only the new ones (a slice is taken under the GIL)
            if call.method in WRITES and call.status == 200 and call.result is None:
                return  # still being answered
            self._seen += 1
            if call.method in WRITES and call.status == 200:
                self._take(call)

    def _take(self, call: ApiCall) -> None:
        chat = call.params.get("chat_id", "")
        reply = self.by_chat.get(chat)
        if call.method == "sendMessage":
            target = str((call.json("reply_parameters") or {}).get("message_id", ""))
            self.sends[target] = self.sends.get(target, 0) + 1
            if reply is not None and target == reply.incoming:
                reply.replies.append(str(call.result["message_id"]))
                self._shown(reply, call)
            return
        if reply is None or call.at < reply.sent_at:
            return
        if call.method == "sendMessageDraft" or str(call.params.get("message_id")) in reply.replies:
            self._shown(reply, call)

    @staticmethod
    def _shown(reply: Reply, call: ApiCall) -> None:
        reply.shown(call.at)
        if call.method != "sendMessageDraft" and check_html(call.params.get("text", ""))[0] == reply.expected:
            reply.finished(call.at)


class FeishuWatch:
    """The replies of Feishu chats, read from the local Feishu server's messages and cards."""

    def __init__(self, feishu: FeishuStub) -> None:
        self.feishu = feishu
        self.by_incoming: dict[str, Reply] = {}
        self.sends: dict[str, int] = {}  # incoming message id -> messages replying to it
        self._seen = 0
        self._cards: list[tuple[Reply, StubCard, int]] = []  # (reply, its card, history entries read)

    def expect(self, reply: Reply) -> None:
        self.by_incoming[reply.incoming] = reply

    async def run(self) -> None:
        while True:
            self.read()
            await asyncio.sleep(POLL_S)

    def read(self) -> None:
        sent = self.feishu.sent[self._seen :]
        for posted in sent:
            self.sends[posted.target] = self.sends.get(posted.target, 0) + 1
            reply = self.by_incoming.get(posted.target)
            if reply is None:
                continue
            reply.replies.append(posted.message_id)
            reply.shown(posted.at)
            if posted.card is not None:  # its text when made is what the message showed first
                self._cards.append((reply, posted.card, 1))
                if posted.card.history[0][1] == reply.expected:
                    reply.finished(posted.at)
            elif posted.text.strip():  # sent whole (streaming off, CardKit refused): the final text
                reply.finished(posted.at)
        self._seen += len(sent)
        self._cards = [self._card(*entry) for entry in self._cards]

    def _card(self, reply: Reply, card: StubCard, read: int) -> tuple[Reply, StubCard, int]:
        """The card's updates since the last read: each one a change the person sees."""
        history = list(card.history)
        for at, text in history[read:]:
            reply.shown(at)
            if text == reply.expected:
                reply.finished(at)
        return reply, card, len(history)


def incoming_of(event: dict) -> str:
    """The message id of a Feishu message event."""
    return str(event["event"]["message"]["message_id"])
