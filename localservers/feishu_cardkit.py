"""CardKit for the local Feishu server: streaming cards as Feishu's open platform checks them.

Routes (``FeishuStub`` hands them here):
  * ``POST /open-apis/cardkit/v1/cards`` (``{"type": "card_json", "data": "<card JSON 2.0>"}``) → a card id;
    ``refuse_code`` != 0 refuses every create with it (99991672: the app lacks ``cardkit:card:write``);
  * ``PUT /open-apis/cardkit/v1/cards/{id}/elements/{element}/content`` (``content``, ``sequence``);
  * ``PATCH /open-apis/cardkit/v1/cards/{id}/settings`` (``settings``: a JSON string, ``sequence``);
  * ``PUT /open-apis/cardkit/v1/cards/{id}`` (``card``: ``{"type": "card_json", "data": …}``, ``sequence``):
    the whole card replaced, its config too (Feishu's "全量更新卡片实体");
  * ``DELETE /open-apis/im/v1/messages/{id}`` (a message taken back: ``deleted``).

Feishu's rules, with its codes: a card's ``sequence`` must rise with every operation (300317); content
goes only to a card in streaming mode (300309 "Card streaming closed") and to an element that exists
(300313); a settings change must be nested under ``config`` (anything else: 300309); streaming mode needs
``update_multi`` (300302); a card is at most 30 KB (200860); an unknown card is 200740. An interactive
message must reference its card as ``{"type": "card", "data": {"card_id": …}}`` — a bare card id is
refused with 200621 (``card_message``). Rate limits answer HTTP 429, code 99991400: 10 operations a
second per card, and ``app_limit`` (50 a second, 1000 a minute) content updates per app.

Each card keeps the texts its element showed (``history``) and when each came (``at``), for tests and
``bench.streaming``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CARDKIT_PATH = "/open-apis/cardkit/v1/cards"
MESSAGES_PATH = "/open-apis/im/v1/messages"
MAX_CARD_BYTES = 30 * 1024
SCOPE_MISSING = 99991672  # "Access denied. One of the following scopes is required: [cardkit:card:write]"
Answer = tuple[int, Any, dict[str, str] | None]


def _error(code: int, msg: str, status: int = 400) -> Answer:
    return status, {"code": code, "msg": msg}, None


def _ok(data: dict[str, Any] | None = None) -> Answer:
    return 200, {"code": 0, "msg": "success", "data": data or {}}, None


@dataclass
class StubCard:
    """A card entity and what it went through."""

    card_id: str
    config: dict[str, Any]
    elements: dict[str, str]  # element_id -> its text (markdown / plain_text elements)
    sequence: int = 0
    history: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, element text)
    closed_at: float | None = None  # when streaming mode was switched off

    @property
    def streaming(self) -> bool:
        return bool(self.config.get("streaming_mode"))

    @property
    def text(self) -> str:
        """What the card shows: its elements' texts, in order."""
        return "\n".join(self.elements.values())


class CardKit:
    """The cards of one local Feishu server (see the module doc)."""

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self.cards: dict[str, StubCard] = {}
        self.deleted: list[str] = []  # message ids taken back (DELETE)
        self.refuse_code = 0  # != 0: card create refused with this code (SCOPE_MISSING: no scope)
        self.refuse_update = 0  # != 0: a full update (PUT of the card) refused with this code
        self.per_card_per_second = 10
        self.app_limit = (50, 1000)  # content updates per second, per minute (one app)
        self.rate_limited = 0  # 429s answered
        self.answers: list[tuple[str, str, int]] = []  # (method, path, code) of every answer, in order
        self._ids = itertools.count(7355372766134157313)
        self._ops: dict[str, deque[float]] = {}
        self._content_calls: deque[float] = deque()

    def route(self, method: str, path: str, body: Any) -> Answer:
        """Answer one CardKit request (or a message DELETE); its code is kept in ``answers``."""
        answer = self._route(method, path, body if isinstance(body, dict) else {})
        with self._lock:
            self.answers.append((method, path, int(answer[1].get("code", -1))))
        return answer

    def _route(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method == "DELETE" and path.startswith(MESSAGES_PATH + "/"):
            with self._lock:
                self.deleted.append(path.rsplit("/", 1)[-1])
            return _ok()
        rest = path[len(CARDKIT_PATH) :].strip("/").split("/")
        if method == "POST" and rest == [""]:
            return self._create(body)
        card_id = rest[0]
        if method == "PUT" and len(rest) == 4 and rest[1] == "elements" and rest[3] == "content":
            return self._content(card_id, rest[2], body)
        if method == "PATCH" and rest[1:] == ["settings"]:
            return self._settings(card_id, body)
        if method == "PUT" and len(rest) == 1:
            return self._update(card_id, body)
        return 404, {"code": 404, "msg": f"no route {method} {path}"}, None

    def card_message(self, body: dict[str, Any]) -> tuple[StubCard | None, Answer | None]:
        """The card an interactive message references as ``{"type": "card", "data": {"card_id"}}``, or
        the refusal (a bare card id: 200621). The caller holds the server's lock."""
        try:
            content = json.loads(body.get("content") or "")
        except ValueError:
            content = None
        if not isinstance(content, dict) or content.get("type") != "card":
            return None, _error(200621, "parse card json err, please check whether the card json is correct")
        card = self.cards.get(str((content.get("data") or {}).get("card_id")))
        return (card, None) if card is not None else (None, _error(200740, "The card entity does not exist"))

    def text_of(self, card_id: str) -> str:
        with self._lock:
            card = self.cards.get(card_id)
            return card.text if card else ""

    # --- the operations ------------------------------------------------------------------------------

    def _create(self, body: dict[str, Any]) -> Answer:
        if self.refuse_code:
            return _error(
                self.refuse_code,
                "Access denied. One of the following scopes is required: [cardkit:card:write]",
            )
        refused, config, elements = _card_json(body)
        if refused is not None:
            return refused
        with self._lock:
            card_id = str(next(self._ids))
            stub = StubCard(card_id, dict(config), elements)
            stub.history.append((time.monotonic(), stub.text))
            self.cards[card_id] = stub
        return _ok({"card_id": card_id})

    def _content(self, card_id: str, element_id: str, body: dict[str, Any]) -> Answer:
        content, sequence = body.get("content"), body.get("sequence")
        if not isinstance(content, str) or not 1 <= len(content) <= 100_000 or not isinstance(sequence, int):
            return _error(10002, "Your request contains an invalid request parameter.")

        def refused(card: StubCard) -> Answer | None:
            if not card.streaming:
                return _error(300309, "Card streaming closed")
            if element_id not in card.elements:
                return _error(300313, f"not find elementID: {element_id}")
            return None

        with self._lock:
            card, answer = self._operation(card_id, sequence, refused, content=True)
            if card is None:
                return answer
            card.elements[element_id] = content
            card.history.append((time.monotonic(), card.text))
        return answer

    def _settings(self, card_id: str, body: dict[str, Any]) -> Answer:
        try:
            settings = json.loads(body.get("settings") or "")
        except ValueError:
            settings = None
        sequence = body.get("sequence")
        if not isinstance(settings, dict) or not isinstance(sequence, int):
            return _error(10002, "Your request contains an invalid request parameter.")

        def refused(_card: StubCard) -> Answer | None:
            if not isinstance(settings.get("config"), dict):  # {"streaming_mode": false} at the top level
                return _error(300309, "streaming_mode must be set under config")
            return None

        with self._lock:
            card, answer = self._operation(card_id, sequence, refused)
            if card is not None:
                _configured(card, {**card.config, **settings["config"]})
        return answer

    def _update(self, card_id: str, body: dict[str, Any]) -> Answer:
        """The whole card replaced: its elements and its config (streaming mode too)."""
        if self.refuse_update:
            return _error(self.refuse_update, "Your request contains an invalid request parameter.")
        card_body, sequence = body.get("card"), body.get("sequence")
        if not isinstance(card_body, dict) or not isinstance(sequence, int):
            return _error(10002, "Your request contains an invalid request parameter.")
        refused, config, elements = _card_json(card_body)
        if refused is not None:
            return refused
        with self._lock:
            card, answer = self._operation(card_id, sequence)
            if card is not None:
                card.elements = elements
                card.history.append((time.monotonic(), card.text))
                _configured(card, config)
        return answer

    def _operation(
        self,
        card_id: str,
        sequence: int,
        refused: Callable[[StubCard], Answer | None] = lambda _card: None,
        *,
        content: bool = False,
    ) -> tuple[StubCard | None, Answer]:
        """The checks every operation on a card meets, in Feishu's order: the card exists (200740), the
        rate limits (429), the operation's own (``refused``), a rising ``sequence`` (300317). The card,
        its sequence taken, and the success answer; or None and the refusal. The caller holds the lock."""
        card = self.cards.get(card_id)
        if card is None:
            return None, _error(200740, "The card entity does not exist")
        if self._limited(card_id, content=content):
            reset = {"x-ogw-ratelimit-reset": "1"} if content else None
            return None, (429, {"code": 99991400, "msg": "request trigger frequency limit"}, reset)
        answer = refused(card)
        if answer is not None:
            return None, answer
        if sequence <= card.sequence:
            return None, _error(300317, "The sequence number for operating on the card did not increment")
        card.sequence = sequence
        return card, _ok()

    def _limited(self, card_id: str, *, content: bool) -> bool:
        """Over 10 operations a second on this card, or (content) over the app's budget: counted as a 429."""
        now = time.monotonic()
        ops = self._ops.setdefault(card_id, deque())
        while ops and now - ops[0] >= 1.0:
            ops.popleft()
        calls = self._content_calls
        while calls and now - calls[0] >= 60.0:
            calls.popleft()
        per_second, per_minute = self.app_limit
        over_app = content and (
            sum(1 for at in calls if now - at < 1.0) >= per_second or len(calls) >= per_minute
        )
        if len(ops) >= self.per_card_per_second or over_app:
            self.rate_limited += 1
            return True
        ops.append(now)
        if content:
            calls.append(now)
        return False


def _configured(card: StubCard, config: dict[str, Any]) -> None:
    """The card's config is ``config`` now; switching streaming mode off is noted (``closed_at``)."""
    was_streaming = card.streaming
    card.config = dict(config)
    if was_streaming and not card.streaming:
        card.closed_at = time.monotonic()


def _card_json(body: dict[str, Any]) -> tuple[Answer | None, dict[str, Any], dict[str, str]]:
    """The refusal of a ``{"type": "card_json", "data": …}`` body — not a card JSON 2.0 (200220), over
    30 KB (200860), streaming without ``update_multi`` (300302) — or None, its config and its elements'
    texts."""
    data = body.get("data") or ""
    try:
        card = json.loads(data) if body.get("type") == "card_json" and isinstance(data, str) else None
    except ValueError:
        card = None
    if not isinstance(card, dict) or card.get("schema") != "2.0":
        return _error(200220, "Failed to generate card content"), {}, {}
    if len(data.encode("utf-8")) > MAX_CARD_BYTES:
        return _error(200860, "Card content exceeds limit."), {}, {}
    config = card.get("config") or {}
    if config.get("streaming_mode") and config.get("update_multi") is False:
        return _error(300302, "update_multi property is false"), {}, {}
    elements = {
        str(e["element_id"]): str(e.get("content", ""))
        for e in (card.get("body") or {}).get("elements", [])
        if isinstance(e, dict) and e.get("element_id")
    }
    return None, dict(config), elements
