"""Feishu replies as CardKit streaming cards, shown while the model writes (channels/README.md, "Streamed
replies"; Feishu's "流式更新卡片" guide, summed up in the shared notes "media-and-streaming.md").

1. **Create** a card entity (``cardkit.v1.card.create``: card JSON 2.0, one ``markdown`` element,
   ``config.streaming_mode`` and ``update_multi`` on) holding the text so far;
2. **send** it as an ``interactive`` message that references the card (``{"type": "card", "data":
   {"card_id": …}}`` — a bare card id is refused with 200621), replying to the person's message, with a
   ``uuid`` so a retried (or restarted) send never posts twice;
3. **update** the element's full text (``card_element.content``) with a strictly rising ``sequence``, at
   most every ``every`` seconds per card (Feishu allows 10 a second) and within the app's budget for
   that API (Feishu's 50 a second, 1000 a minute, with a margin: ``Budget``); a frame that finds no room
   is dropped, not queued;
4. **close**: the final text with streaming mode off and the chat list's summary set, in one call —
   ``card.update`` (a full update: the card JSON again, ``streaming_mode: false``) — or the chat list
   shows "generating…" for the card for good. One call, not two (the final text, then ``card.settings``
   with ``{"config": {"streaming_mode": false, …}}``): lark-oapi opens a new connection for each call
   (bench/README.md, "Streaming"). Where the full update is refused, or the card already shows the final
   text, the two-step way (``settings`` under ``config``: elsewhere it is refused, 300309).

A ``sequence`` is the milliseconds since the card was created (at least one more than the last sent):
it keeps rising across a restart with nothing to keep. The cards made (id, creation time, message id)
are kept on the inbox row as they are made, so a restarted gateway writes the final text into them
instead of sending a second reply. A reply longer than ``CARD_LIMIT`` continues in a new card.

Where CardKit is refused — the app lacks the scope ``cardkit:card:write`` (99991672), or its card message
is not accepted — the reply is sent whole at the end as usual (``Sender.send``), CardKit is left off
until a restart, and the log says so once; ``tierclaw doctor`` checks the scope. ``streamCards: false``
does the same from the start (for Feishu clients older than 7.20, which cannot show JSON 2.0 cards).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lark_oapi as lark
from lark_oapi.api.cardkit.v1 import Card as CardEntity
from lark_oapi.api.cardkit.v1 import (
    ContentCardElementRequest,
    ContentCardElementRequestBody,
    CreateCardRequest,
    CreateCardRequestBody,
    SettingsCardRequest,
    SettingsCardRequestBody,
    UpdateCardRequest,
    UpdateCardRequestBody,
)
from lark_oapi.api.im.v1 import DeleteMessageRequest

from channels.base import InboundMessage, OutboundMessage, RememberHandle
from channels.chunks import split_text
from channels.feishu.events import CHANNEL_NAME, message_uuid
from channels.feishu.open_api import FeishuApiError, http_status, retryable
from channels.feishu.sending import CHUNK_LIMIT, Sender

log = logging.getLogger("tierclaw.channels")

CARD_LIMIT = CHUNK_LIMIT  # characters of one card: as many as a plain message (a card is at most 30 KB)
ELEMENT_ID = "reply"
STREAMING_CLOSED = frozenset({300309, 200850})  # streaming mode off, or timed out (10 minutes)
SEQUENCE_NOT_RISING = 300317
SEQUENCE_LEAP = 600_000  # ten minutes of milliseconds: past any clock difference between two gateways
SUMMARY_CHARS = 60


class CardRefused(RuntimeError):
    """Feishu refused a card or its message for good (not a rate limit, not an outage)."""


def card_json(text: str, *, streaming: bool) -> str:
    """A card JSON 2.0 with one markdown element holding ``text``."""
    config = {"streaming_mode": streaming, "update_multi": True, "summary": {"content": summary(text)}}
    element = {"tag": "markdown", "element_id": ELEMENT_ID, "content": text}
    return json.dumps(
        {"schema": "2.0", "config": config, "body": {"elements": [element]}}, ensure_ascii=False
    )


def summary(text: str) -> str:
    """What the chat list shows of a card: its first line, shortened."""
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


class Budget:
    """At most ``per_second`` calls in any second and ``per_minute`` in any minute (one API's limits
    for one app)."""

    def __init__(self, per_second: int, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = ((1.0, per_second), (60.0, per_minute))
        self._clock = clock
        self._calls: deque[float] = deque()

    def wait(self) -> float:
        """Seconds until a call fits (0: now). Asked before every frame of every card, so it looks at
        one call per window: the calls are in time order, and a window is full when the ``limit``-th
        latest call is still inside it."""
        now = self._clock()
        while self._calls and now - self._calls[0] >= 60.0:
            self._calls.popleft()
        wait = 0.0
        for window, limit in self._limits:
            if len(self._calls) >= limit and now - (at := self._calls[-limit]) < window:
                wait = max(wait, at + window - now)
        return wait

    def take(self) -> bool:
        """Count a call if it fits now."""
        if self.wait() > 0:
            return False
        self._calls.append(self._clock())
        return True


@dataclass
class Card:
    """One card of a reply: its entity, its message, the last sequence and text sent to it."""

    card_id: str
    created_ms: int
    message_id: str = ""
    sequence: int = 0
    shown: str | None = None  # None: unknown (made before a restart)
    streaming: bool = True

    def next_sequence(self) -> int:
        """Milliseconds since creation, and more than the last one (see the module doc)."""
        self.sequence = max(self.sequence + 1, int(time.time() * 1000) - self.created_ms)
        return self.sequence


class FeishuCards:
    """The channel's streaming cards: whether CardKit is used, and the app's update budget."""

    def __init__(self, sender: Sender, *, enabled: bool, every: float) -> None:
        self.sender = sender
        self.enabled = enabled  # channels.feishu.streamCards
        self.every = every  # seconds between updates of one card (channels.feishu.streamEvery)
        self.refused = ""  # why CardKit is off until a restart ("" = it is used)
        # Feishu allows 50 content updates a second and 1000 a minute per app; a margin keeps the frames of
        # many cards at once clear of its 429s (its clock and ours count the same calls a little apart).
        self.budget = Budget(per_second=40, per_minute=900)

    def open(self, message: InboundMessage, resume: str, remember: RememberHandle) -> CardStream | None:
        """A card stream for the reply, or None (sent whole) while CardKit is off — unless cards of it
        were made before a restart: those are completed."""
        cards = cards_of(resume)
        if not cards and (not self.enabled or self.refused):
            return None
        return CardStream(self, message, remember, cards)

    def refuse(self, reason: str) -> None:
        """CardKit refused: replies go whole from now on (said once)."""
        if not self.refused:
            log.warning(
                "[feishu] streaming cards refused (%s): replies are sent whole at the end until a restart; "
                "grant the app the scope cardkit:card:write (tierclaw doctor checks it) or set "
                "channels.feishu.streamCards to false",
                reason,
            )
        self.refused = reason

    async def call(
        self, request: Callable[[], lark.BaseResponse], *, retry: bool = True
    ) -> lark.BaseResponse:
        """One CardKit or message call (retried on rate limits and outages unless a mere frame)."""
        return await self.sender.call(request, attempts=4 if retry else 1)


class CardStream:
    """One reply's cards (see the module doc)."""

    def __init__(
        self, cards: FeishuCards, message: InboundMessage, remember: RememberHandle, resumed: list[Card]
    ) -> None:
        self._kit = cards
        self._message = message
        self._remember = remember
        self.cards = resumed
        self._last = float("-inf")
        self._whole = False  # CardKit failed for this reply: it is sent whole at the end

    def next_update_in(self) -> float:
        since = time.monotonic() - self._last
        return max(self._kit.every - since, self._kit.budget.wait(), 0.0)

    async def update(self, text: str) -> None:
        if self._whole:
            return
        self._last = time.monotonic()
        try:
            await self._show(split_text(text, CARD_LIMIT), final=False)
        except CardRefused as exc:
            self._kit.refuse(str(exc))
            self._whole = True

    async def finish(self, text: str) -> None:
        pieces = split_text(text, CARD_LIMIT)
        shown = any(card.message_id for card in self.cards)
        if not self.cards or (self._whole and not shown):  # nothing shown: sent whole as usual
            await self._kit.sender.send(self._outbound(text))
            return
        # A card whose message is not known to be sent (its send failed midway) is sent again with the
        # same uuid below: Feishu answers with the message it already posted, never a second one.
        try:
            if self._whole:
                raise CardRefused(self._kit.refused)
            await self._show(pieces, final=True)
        except CardRefused as exc:
            self._kit.refuse(str(exc))
            await self._finish_without_cards(pieces)
        for card in self.cards[len(pieces) :]:  # the final text is shorter than what was shown
            await self._delete(card)
        for card in self.cards[: len(pieces)]:
            if card.streaming and card.message_id:
                await self._close(card, card.shown or "")

    async def _finish_without_cards(self, pieces: list[str]) -> None:
        """CardKit refused midway: the cards shown (a prefix of the reply) get their final text, the rest
        of the reply goes as plain messages."""
        shown = [card for card in self.cards if card.message_id]
        for card, piece in zip(shown, pieces, strict=False):
            if card.shown != piece:
                await self._put(card, piece, final=True)
        for index, piece in enumerate(pieces[len(shown) :], start=len(shown)):
            await self._kit.sender.send(self._outbound(piece, f":piece {index}"))

    async def cancel(self) -> None:
        for card in self.cards:
            await self._delete(card)

    async def _show(self, pieces: list[str], *, final: bool) -> None:
        """Each card holds its piece (and has its message); a piece without a card gets a new one."""
        for index, piece in enumerate(pieces):
            if index >= len(self.cards):
                await self._new_card(piece, streaming=not final)
            elif self.cards[index].shown != piece:
                card = self.cards[index]
                if not (final and card.streaming and card.message_id and await self._replace(card, piece)):
                    await self._put(card, piece, final=final)
            if not self.cards[index].message_id:
                await self._send(self.cards[index], index)

    async def _new_card(self, text: str, *, streaming: bool) -> None:
        body = (
            CreateCardRequestBody.builder()
            .type("card_json")
            .data(card_json(text, streaming=streaming))
            .build()
        )
        request = CreateCardRequest.builder().request_body(body).build()
        resp = await self._kit.call(lambda: self._kit.sender.client.cardkit.v1.card.create(request))
        card_id = getattr(resp.data, "card_id", None) if resp.success() else None
        if not card_id:
            raise _failure("create a card", resp)
        self.cards.append(Card(card_id, int(time.time() * 1000), shown=text, streaming=streaming))
        await self._keep()

    async def _send(self, card: Card, index: int) -> None:
        """The card's message (a reply to the person's message); the uuid makes a resend after a restart
        the same message."""
        content = json.dumps({"type": "card", "data": {"card_id": card.card_id}})
        uuid = message_uuid(self._message.message_id or self._message.chat_id, index, card.card_id)
        resp = await self._kit.sender.post(self._outbound(""), "interactive", content, uuid)
        message_id = getattr(resp.data, "message_id", None) if resp.success() else None
        if not message_id:
            raise _failure("send a card", resp)
        card.message_id = message_id
        await self._keep()

    async def _put(self, card: Card, text: str, *, final: bool) -> None:
        """The element's full text; a frame without room in the budget is dropped, the final text waits
        for room."""
        if not final and not self._kit.budget.take():
            return
        while final and not self._kit.budget.take():  # the final text waits for room instead
            await asyncio.sleep(self._kit.budget.wait())
        resp = await self._kit.call(lambda: self._content(card, text), retry=final)
        if not resp.success() and final and resp.code in STREAMING_CLOSED:  # timed out: open it again
            await self._settings(card, {"streaming_mode": True})
            card.streaming = True
            resp = await self._kit.call(lambda: self._content(card, text))
        elif not resp.success() and final and resp.code == SEQUENCE_NOT_RISING:
            card.sequence += SEQUENCE_LEAP  # another gateway's clock ran ahead of this one's
            resp = await self._kit.call(lambda: self._content(card, text))
        if resp.success():
            card.shown = text
        elif final:
            raise FeishuApiError("write a card's final text", resp.code, resp.msg, http_status(resp))

    def _content(self, card: Card, text: str) -> lark.BaseResponse:
        body = ContentCardElementRequestBody.builder().content(text).sequence(card.next_sequence()).build()
        request = (
            ContentCardElementRequest.builder()
            .card_id(card.card_id)
            .element_id(ELEMENT_ID)
            .request_body(body)
            .build()
        )
        return self._kit.sender.client.cardkit.v1.card_element.content(request)

    async def _replace(self, card: Card, text: str) -> bool:
        """The final text and streaming mode off in one call (a full update, see the module doc); False
        when Feishu refused it for good (the caller writes the text and closes the card the two-step way)."""
        while not self._kit.budget.take():  # counted as the final text's update would be
            await asyncio.sleep(self._kit.budget.wait())
        resp = await self._kit.call(lambda: self._update(card, text))
        if not resp.success() and resp.code == SEQUENCE_NOT_RISING:
            card.sequence += SEQUENCE_LEAP  # another gateway's clock ran ahead of this one's
            resp = await self._kit.call(lambda: self._update(card, text))
        if not resp.success() and retryable(resp):  # still limited or out after the retries
            raise FeishuApiError("write a card's final text", resp.code, resp.msg, http_status(resp))
        if not resp.success():
            log.info("[feishu] a card's full update was refused (code %s): two steps", resp.code)
            return False
        card.shown, card.streaming = text, False
        return True

    def _update(self, card: Card, text: str) -> lark.BaseResponse:
        entity = CardEntity.builder().type("card_json").data(card_json(text, streaming=False)).build()
        body = UpdateCardRequestBody.builder().card(entity).sequence(card.next_sequence()).build()
        request = UpdateCardRequest.builder().card_id(card.card_id).request_body(body).build()
        return self._kit.sender.client.cardkit.v1.card.update(request)

    async def _close(self, card: Card, text: str) -> None:
        """Streaming mode off, the chat list's summary set to the reply's first line."""
        resp = await self._settings(card, {"streaming_mode": False, "summary": {"content": summary(text)}})
        if not resp.success():
            raise FeishuApiError("close a streaming card", resp.code, resp.msg, http_status(resp))
        card.streaming = False

    async def _settings(self, card: Card, config: dict[str, Any]) -> lark.BaseResponse:
        settings = json.dumps({"config": config}, ensure_ascii=False)

        def patch() -> lark.BaseResponse:
            body = SettingsCardRequestBody.builder().settings(settings).sequence(card.next_sequence()).build()
            request = SettingsCardRequest.builder().card_id(card.card_id).request_body(body).build()
            return self._kit.sender.client.cardkit.v1.card.settings(request)

        return await self._kit.call(patch)

    async def _delete(self, card: Card) -> None:
        if not card.message_id:
            return
        request = DeleteMessageRequest.builder().message_id(card.message_id).build()
        try:
            resp = await self._kit.call(lambda: self._kit.sender.client.im.v1.message.delete(request))
        except Exception as exc:  # it stays as it was
            log.info("[feishu] could not delete a stopped reply's card: %s", exc)
            return
        if not resp.success():
            log.info("[feishu] could not delete a stopped reply's card: code %s", resp.code)

    async def _keep(self) -> None:
        """The cards made so far on the inbox row (gateway/streaming.py)."""
        kept = [{"card": c.card_id, "at": c.created_ms, "message": c.message_id} for c in self.cards]
        await self._remember(json.dumps({"cards": kept}))

    def _outbound(self, text: str, part: str = "") -> OutboundMessage:
        """A plain message of this reply (cards refused), keyed by the message it answers like a reply
        sent whole (gateway/loop.py ``_queue_reply``): a replica that takes the reply over after a crash
        posts it once, whatever the model said the second time. ``part`` tells the pieces apart."""
        inbox_id = self._message.inbox_id
        key = f"answer:{inbox_id}{part}" if inbox_id else ""
        return OutboundMessage(CHANNEL_NAME, self._message.chat_id, text, self._message.message_id, key)


def _failure(action: str, resp: lark.BaseResponse) -> Exception:
    """A failed card call: ``CardRefused`` when it is final, else the API error (retried already)."""
    if retryable(resp):
        return FeishuApiError(action, resp.code, resp.msg, http_status(resp))
    return CardRefused(f"could not {action}: code {resp.code} ({resp.msg or 'no message'})")


def cards_of(handle: str) -> list[Card]:
    """The cards a stream kept (``{"cards": [...]}``); [] for anything else."""
    try:
        kept = json.loads(handle).get("cards") if handle else None
    except (ValueError, AttributeError):
        return []
    if not isinstance(kept, list):
        return []
    return [
        Card(str(k["card"]), int(k.get("at") or 0), str(k.get("message") or ""))
        for k in kept
        if isinstance(k, dict) and k.get("card")
    ]
