"""Telegram replies shown while they are written (channels/README.md, "Streamed replies").

- **Private chats: drafts.** ``sendMessageDraft`` (Bot API 9.5+) animates a preview of the text so far —
  one ``draft_id`` per reply, ``can_stop`` so the person gets a stop button — every ``draft_every``
  seconds; the reply is then sent as usual (``sendMessage``, which also clears the draft). A draft is not
  a message: nothing is left half-written if the gateway dies. Only the piece being written shows (the
  tail past the last full message), so the preview never exceeds one message.
- **Groups, and private chats that refuse drafts: one message, edited.** The first words are sent at once
  (replying to the person's message); ``editMessageText`` then shows the rest no more often than
  ``every`` seconds per chat (``channels.telegram.streamEvery``, default 1.5 s). A reply longer than one
  message continues in a new one. The message ids are kept on the inbox row (``remember``) as soon as each
  is sent, so a restarted gateway edits them (``resume``) instead of writing the reply again.
- **Partial Markdown** is rendered by the same renderer as a final reply (``html.py``: balanced tags by
  construction, an unclosed ``**`` stays text) and re-tried as plain text if Telegram still cannot parse
  it; a piece is cut on the same boundaries as ``send`` cuts (``channels/chunks.py``).
- **429**: a frame that meets ``RetryAfter`` is dropped and the whole chat pauses (``pace.py``); the final
  text waits the pause out (``sending.call``). "Stop" (``stopped_message_generation``) cancels the reply.

The final text is rendered and split exactly as ``TelegramChannel.send`` does (``sending.Outbox``).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time

from telegram import Update
from telegram.constants import ParseMode
from telegram.error import BadRequest, InvalidToken, RetryAfter, TelegramError

from channels.base import InboundMessage, RememberHandle, ReplyStream
from channels.chunks import split_text
from channels.telegram.failures import retry_after
from channels.telegram.html import DraftRenderer
from channels.telegram.sending import Outbox

log = logging.getLogger("tierclaw.channels")

PIECE = 3000  # characters of one streamed message (room under 4096 for what rendering adds: lists, tables)
STOPPED_UPDATE = "stopped_message_generation"  # Bot API 10.3: the person tapped stop on a draft
_WIDE = re.compile("[\U00010000-\U0010ffff]")  # characters outside the BMP (two UTF-16 units each)


def pieces_of(text: str) -> list[str]:
    """``text`` as the messages it takes; half as many characters each when it has characters Telegram
    counts twice (UTF-16 surrogate pairs: emoji), so no piece is refused as too long."""
    return split_text(text, PIECE // 2 if _WIDE.search(text) else PIECE)


class DraftStream:
    """A private chat's reply as a draft while it is written, then sent (see the module doc)."""

    def __init__(
        self, outbox: Outbox, message: InboundMessage, remember: RememberHandle, streams: TelegramStreams
    ) -> None:
        self._outbox = outbox
        self._message = message
        self._remember = remember  # for the edited message, if drafts are refused
        self._streams = streams
        self.draft_id = secrets.randbelow(2**31 - 2) + 1  # non-zero, one per reply
        self._last = float("-inf")  # when the last draft went
        self._edit: EditStream | None = None  # drafts refused: the reply is edited in instead
        self._html = DraftRenderer()  # each draft re-parses only the reply's open end

    def next_update_in(self) -> float:
        if self._edit is not None:
            return self._edit.next_update_in()
        since = time.monotonic() - self._last
        every = self._streams.draft_every
        return max(self._outbox.pace.paused_for(self._outbox.chat_id), every - since, 0.0)

    async def update(self, text: str) -> None:
        if self._edit is not None:
            await self._edit.update(text)
            return
        self._last = time.monotonic()
        piece = pieces_of(text)[-1]
        try:
            await self._draft(self._html.render(piece), ParseMode.HTML)
            self._streams.showing(self._outbox.chat_id, self)
        except (BadRequest, InvalidToken) as exc:  # a server without the method answers 404 (InvalidToken)
            if "can't parse entities" in exc.message.casefold():
                await self._draft(piece, None)
                return
            chat = self._outbox.chat_id
            log.info("[telegram] drafts refused in chat %s (%s); editing a message instead", chat, exc)
            self._streams.refuse_drafts(chat)
            self._edit = self._streams.edit_stream(self._outbox, self._message, self._remember, ())
            await self._edit.update(text)
        except RetryAfter as exc:  # this frame is dropped; the chat waits (pace.py)
            self._outbox.pace.pause(self._outbox.chat_id, retry_after(exc))

    async def _draft(self, text: str, parse_mode: str | None) -> None:
        await self._outbox.bot.send_message_draft(
            int(self._outbox.chat_id),
            self.draft_id,
            text,
            parse_mode=parse_mode,
            api_kwargs={"can_stop": True},  # Bot API 10.3; python-telegram-bot 22.8 predates it
        )

    async def finish(self, text: str) -> None:
        self._streams.closed(self._outbox.chat_id, self.draft_id, self)
        if self._edit is not None:
            await self._edit.finish(text)
            return
        # The drafts' renderer has the reply's settled blocks rendered already (the same HTML as whole).
        await self._outbox.send_text(text, self._message.message_id, render=self._html.render)

    async def cancel(self) -> None:
        self._streams.closed(self._outbox.chat_id, self.draft_id, self)
        if self._edit is not None:
            await self._edit.cancel()


class EditStream:
    """A reply written into messages that are edited as it grows (see the module doc)."""

    def __init__(
        self,
        outbox: Outbox,
        reply_to: str,
        remember: RememberHandle,
        ids: tuple[int, ...],
        streams: TelegramStreams,
    ) -> None:
        self._outbox = outbox
        self._reply_to = reply_to
        self._every = streams.every
        self._remember = remember
        self._streams = streams
        self.ids = list(ids)  # the reply's messages so far (from the inbox row after a restart)
        self._shown: list[str | None] = [None] * len(ids)  # what each shows (unknown after a restart)
        # Each message's text grows edit by edit: its renderer re-parses only the open end (html.py).
        self._html: list[DraftRenderer] = [DraftRenderer() for _ in ids]
        self._started = float("-inf")  # when the last update began (the chat's pace counts from its end)

    def next_update_in(self) -> float:
        """The chat's pace, and ``every`` from when the last update began: asked while an edit is on its
        way, the next one is not due at once (gateway/model_turn.py reads the model's stream then)."""
        pace, chat = self._outbox.pace, self._outbox.chat_id
        if not self.ids:
            return pace.paused_for(chat)
        return max(pace.next_in(chat, self._every), self._every - (time.monotonic() - self._started))

    async def update(self, text: str) -> None:
        self._started = time.monotonic()
        try:
            await self._show(pieces_of(text))
        except RetryAfter as exc:  # this frame is dropped; the chat waits (pace.py)
            self._outbox.pace.pause(self._outbox.chat_id, retry_after(exc))
        finally:
            if self.ids:
                self._streams.showing(self._outbox.chat_id, self)

    async def finish(self, text: str) -> None:
        self._streams.closed(self._outbox.chat_id, 0, self)
        if not self.ids:  # nothing shown yet: a plain send
            await self._outbox.send_text(text, self._reply_to)
            return
        pieces = pieces_of(text)
        await self._show(pieces)
        for message_id in self.ids[len(pieces) :]:  # the final text is shorter than what was shown
            await self._delete(message_id)

    async def cancel(self) -> None:
        self._streams.closed(self._outbox.chat_id, 0, self)
        for message_id in self.ids:
            await self._delete(message_id)

    async def _show(self, pieces: list[str]) -> None:
        """Each message shows its piece (an earlier one changes when the cut moves), new ones follow."""
        for index, piece in enumerate(pieces):
            if index < len(self.ids):
                if self._shown[index] != piece:
                    await self._edit(index, piece)
                continue
            reply_to = self._reply_to if not self.ids else ""
            for message in await self._outbox.send_piece(piece, reply_to):
                self.ids.append(message.message_id)
                self._shown.append(piece)
                self._html.append(DraftRenderer())
            await self._remember(json.dumps({"messages": self.ids}))

    async def _edit(self, index: int, piece: str) -> None:
        try:
            await self._outbox.edit_piece(self.ids[index], piece, render=self._html[index].render)
        except BadRequest as exc:
            reason = exc.message.casefold()
            if "message to edit not found" not in reason and "message can't be edited" not in reason:
                raise
            # Deleted, or too old to edit (a restart long after the crash): the piece is written anew.
            (message, *_) = await self._outbox.send_piece(piece, "")
            self.ids[index] = message.message_id
            await self._remember(json.dumps({"messages": self.ids}))
        self._shown[index] = piece

    async def _delete(self, message_id: int) -> None:
        try:
            await self._outbox.bot.delete_message(self._outbox.chat_id, message_id)
        except TelegramError as exc:  # too old to delete, or gone already: it stays as it is
            log.info("[telegram] could not delete a stopped reply's message %s: %s", message_id, exc)


class TelegramStreams:
    """The channel's streamed replies: which kind a chat gets, the open drafts (for "stop"), the chats
    where a reply shows as it is written (no "typing…" sign needed there: typing_sign.py)."""

    def __init__(self, every: float, draft_every: float) -> None:
        self.every = every  # seconds between edits of a chat (channels.telegram.streamEvery)
        self.draft_every = draft_every  # seconds between drafts (channels.telegram.draftEvery)
        self._no_drafts: set[str] = set()  # chats that refused a draft
        self._drafts: dict[tuple[str, int], str] = {}  # (chat id, draft id) -> chat key, while open
        self._showing: dict[str, ReplyStream] = {}  # chat id -> the stream whose words show there now
        # A reply was streamed here: the gateway streams them (agent.stream is one setting for the process),
        # so a "typing…" sign waits for the first words a moment first (typing_sign.py).
        self.streamed = False

    def open(
        self, outbox: Outbox, message: InboundMessage, resume: str, remember: RememberHandle
    ) -> ReplyStream:
        """A draft in a private chat, else an edited message (resumed from ``resume``'s message ids)."""
        ids = _message_ids(resume)
        self._showing.pop(outbox.chat_id, None)  # a new reply: nothing of it shows yet
        self.streamed = True
        if message.is_group or ids or outbox.chat_id in self._no_drafts:
            return self.edit_stream(outbox, message, remember, ids)
        draft = DraftStream(outbox, message, remember, self)
        self._drafts[(outbox.chat_id, draft.draft_id)] = message.chat_key
        return draft

    def edit_stream(
        self, outbox: Outbox, message: InboundMessage, remember: RememberHandle, ids: tuple[int, ...]
    ) -> EditStream:
        """The reply to ``message`` written into edited messages (``ids``: those written before)."""
        return EditStream(outbox, message.message_id, remember, ids, self)

    def refuse_drafts(self, chat_id: str) -> None:
        """The chat refused a draft: its replies are edited in from now on (until a restart)."""
        self._no_drafts.add(chat_id)

    def showing(self, chat_id: str, stream: ReplyStream) -> None:
        """``stream``'s words show in the chat (a draft, a message being edited)."""
        self._showing[chat_id] = stream

    def shown(self, chat_id: str) -> bool:
        """Whether a reply shows in the chat as it is written."""
        return chat_id in self._showing

    def closed(self, chat_id: str, draft_id: int, stream: ReplyStream) -> None:
        """``stream``'s reply ended (its final text goes now, or it was stopped): a "stop" for its draft
        comes too late, and the chat has no reply showing."""
        self._drafts.pop((chat_id, draft_id), None)
        if self._showing.get(chat_id) is stream:
            del self._showing[chat_id]

    def stopped(self, update: Update) -> str | None:
        """The chat key of the reply a ``stopped_message_generation`` update stops (None: not such an
        update, or the reply is done already)."""
        stop = (update.api_kwargs or {}).get(STOPPED_UPDATE)
        if not isinstance(stop, dict):
            return None
        chat = stop.get("chat") or {}
        return self._drafts.get((str(chat.get("id")), int(stop.get("draft_id") or 0)))

    def is_stop(self, update: Update) -> bool:
        """Whether ``update`` is a "stop" (for a reply open here or not): it is no message to answer."""
        return isinstance((update.api_kwargs or {}).get(STOPPED_UPDATE), dict)


def _message_ids(handle: str) -> tuple[int, ...]:
    """The message ids an edited reply kept (``{"messages": [...]}``); () for anything else."""
    try:
        ids = json.loads(handle).get("messages") if handle else None
    except (ValueError, AttributeError):
        return ()
    return tuple(i for i in ids if isinstance(i, int)) if isinstance(ids, list) else ()
