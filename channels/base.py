"""The messages that cross between channels and the gateway, and the protocol every channel implements.

Channels import only this module (never ``gateway/``): a channel turns platform updates into
``InboundMessage`` objects, hands them to the ``deliver`` callback it was started with, and sends the
``OutboundMessage`` replies the gateway routes back to it by ``channel`` name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from channels.media import MediaRef


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One message a person sent, as every channel reports it."""

    channel: str  # "console", "telegram", "feishu"
    chat_id: str
    sender_id: str
    text: str
    message_id: str = ""
    is_group: bool = False
    mentions_bot: bool = False
    reply_to: str = ""  # platform message id a reply should thread under, if any
    attachment: str = ""  # "photo", "voice", "document", …: non-text content (``text`` is then its caption)
    delivery_id: str = ""  # the platform's id of this delivery (Telegram update id, Feishu event id)
    inbox_id: int = 0  # set by the gateway once the message is stored in its durable inbox
    # The platform's order of the chat's messages (Telegram update id, Feishu create time in ms): the
    # gateway answers a chat in this order whatever order deliveries arrive in; 0 = arrival order.
    sequence: int = 0
    media: tuple[MediaRef, ...] = ()  # its voice notes, photos, files: references only (channels/media.py)

    @property
    def chat_key(self) -> str:
        """Identity of the conversation across channels: ``channel:chat_id``."""
        return f"{self.channel}:{self.chat_id}"

    @property
    def sender_key(self) -> str:
        """Identity of the sender across channels: ``channel:sender_id`` (what ``users`` maps)."""
        return f"{self.channel}:{self.sender_id}"


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """A reply for the channel that owns the chat."""

    channel: str
    chat_id: str
    text: str
    reply_to: str = ""
    # What this reply answers, the same whichever replica sends it (e.g. "answer:<inbox id>"): a channel
    # whose platform drops a repeated send key (Feishu's ``uuid``) derives its key from this, so the answer
    # to one message is posted once even when a replica died between the send and the answered mark.
    # "" = derived from the text (notices).
    key: str = ""


# Awaiting it means the message is stored: only then may a channel tell the platform it was received. It
# raises when the message could not be stored, and the channel must then leave it unconfirmed — except
# ``Undeliverable``: that message can never be stored, and the channel skips it (confirms it) with one line.
Deliver = Callable[[InboundMessage], Awaitable[None]]


class Undeliverable(RuntimeError):
    """Storing this message failed in a way no retry can change (its content, not the database).

    A busy, locked, read-only or missing database raises something else: the channel leaves the message
    unconfirmed and the platform delivers it again. This one the channel confirms and logs once, naming
    the update or event id, so one bad message never stalls everybody's (channels/README.md).
    """


class ChannelError(RuntimeError):
    """A channel cannot run: credentials refused, address in use, platform unreachable at start.

    ``tierclaw gateway`` prints its message as one line and exits instead of showing a traceback, so the
    message must say what to fix and must never contain a secret.
    """


class Channel(Protocol):
    """A chat platform adapter. ``start`` begins receiving; ``send`` delivers one reply."""

    @property
    def name(self) -> str:
        """The ``channel`` value of its messages (routing key for replies)."""
        ...

    async def start(self, deliver: Deliver) -> None:
        """Begin receiving; each message is passed to ``deliver`` (which queues it, never blocks long)."""
        ...

    async def send(self, message: OutboundMessage) -> None:
        """Send one reply; raise on failure (the gateway logs it)."""
        ...

    async def stop(self) -> None:
        """Stop receiving and release connections."""
        ...


@runtime_checkable
class ShowsWork(Protocol):
    """Optional part of a channel: a visible sign that a reply is being worked on (Telegram's "typing").

    The gateway enters ``working(message)`` while it answers ``message`` and leaves it when the reply has
    been handed to the channel, so the sign lasts until the reply appears. Runtime-checkable: the gateway
    asks ``isinstance(channel, ShowsWork)``.
    """

    def working(self, message: InboundMessage) -> AbstractAsyncContextManager[None]:
        """A context that shows the sign for ``message``'s chat while it is open."""
        ...


@runtime_checkable
class NamesItself(Protocol):
    """Optional part of a channel: how the gateway's ready line names it once started (the bot's name and
    mode, never a token); a channel without it is named by ``name``. Runtime-checkable, like ``ShowsWork``."""

    @property
    def ready_label(self) -> str: ...


@runtime_checkable
class StopsReceiving(Protocol):
    """Optional part of a channel: stop taking new messages while replies can still be sent.

    At shutdown the gateway calls ``stop_receiving`` on every channel that has it (``isinstance(channel,
    StopsReceiving)``: runtime-checkable, like ``ShowsWork``), answers what it already took in, then calls
    ``stop``. A message not yet taken in must stay with the platform (Telegram: its
    update is not confirmed; Feishu: its event is not acknowledged) so it is delivered after the restart.
    Runtime-checkable: the gateway asks ``isinstance(channel, StopsReceiving)``.
    """

    async def stop_receiving(self) -> None:
        """Stop intake; ``send`` keeps working until ``stop``."""
        ...


@runtime_checkable
class PollsAlone(Protocol):
    """Optional part of a channel that polls a platform allowing one poller per bot (Telegram's
    ``getUpdates``): with several gateway replicas the gateway sets ``may_poll`` (an async "may this
    process poll now?", backed by a database lock) and the channel asks it before each poll
    (``channels/telegram/poll_turn.py``). None: always poll."""

    may_poll: Callable[[], Awaitable[bool]] | None


@runtime_checkable
class DeliversInOrder(Protocol):
    """Optional part of a channel whose chats' messages reach the gateway one at a time, in the
    platform's order, each stored before the chat's next is handed over (Telegram's long polling; other
    chats' go meanwhile): no earlier message of a chat can still be on its way, so its chats skip the
    reorder window (``gateway.reorderWindow``)."""

    @property
    def delivers_in_order(self) -> bool: ...


@runtime_checkable
class DropsRepeatedReplies(Protocol):
    """Optional part of a channel whose platform posts a keyed reply once however often it is sent
    (Feishu's ``uuid``, kept an hour; the key is the message's: ``OutboundMessage.key``): a replica that
    answers a message again after a takeover cannot show the person a second reply, so the takeover does
    not wait for the stalled claimant's answered-mark first (gateway/in_flight.py)."""

    @property
    def drops_repeated_replies(self) -> bool: ...


class ReplyStream(Protocol):
    """One reply shown while the model writes it (channels/README.md, "Streamed replies").

    The gateway calls ``update`` with the whole text so far (never faster than ``next_update_in`` allows,
    and never two at once), then exactly one of ``finish`` (the final text: rendered and split as ``send``
    does; raises when it could not be sent) or ``cancel`` (the person stopped the reply: what is shown
    partly goes away or says so). An update is best effort: one that fails costs a frame, never the reply.
    """

    def next_update_in(self) -> float:
        """Seconds to wait before the next ``update`` may go (the platform's pace; 0: now)."""
        ...

    async def update(self, text: str) -> None:
        """Show ``text`` (the reply so far, a prefix of what comes next as a rule, not always)."""
        ...

    async def finish(self, text: str) -> None:
        """Replace what is shown by the final ``text`` (one send step: raise on failure, like ``send``)."""
        ...

    async def cancel(self) -> None:
        """The reply ends without final text (stopped by the person)."""
        ...


# Awaited by a stream when it starts writing a platform message that outlives the process (a Telegram group
# message being edited, a Feishu card): the gateway keeps this handle with the message it answers.
RememberHandle = Callable[[str], Awaitable[None]]


@runtime_checkable
class StreamsReplies(Protocol):
    """Optional part of a channel: replies shown while they are written (Telegram drafts and edits, Feishu
    streaming cards, the terminal). Runtime-checkable, like ``ShowsWork``.

    ``open_stream`` is called before the reply is made; None means "send it whole" (a piped terminal, a
    platform that refused streaming). ``resume`` is the handle a stream of this message remembered before
    the gateway stopped ("" when none): the new stream completes or replaces that platform message instead
    of writing another. ``on_stopped`` is set by the gateway: the channel calls it with the chat key when
    the person stops a reply on the platform (Telegram's stop button); it cancels the reply like Ctrl-C.
    """

    on_stopped: Callable[[str], object] | None

    def open_stream(
        self, message: InboundMessage, *, resume: str, remember: RememberHandle
    ) -> ReplyStream | None:
        """A stream for the reply to ``message``, or None to have it sent whole with ``send``."""
        ...
