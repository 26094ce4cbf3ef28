"""What the local Feishu server records and the errors it can be scripted to answer: ``ApiError`` (an HTTP
status with Feishu's code and message), a ``Sent`` message, a ``StubRequest`` as it arrived."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localservers.feishu_cardkit import StubCard


@dataclass(frozen=True)
class ApiError:
    """One scripted failure: HTTP ``status``, Feishu ``code`` and ``msg``, extra response headers."""

    status: int
    code: int
    msg: str
    headers: dict[str, str] = field(default_factory=dict)


RATE_LIMITED = ApiError(429, 99991400, "request trigger frequency limit", {"x-ogw-ratelimit-reset": "0"})
SERVER_ERROR = ApiError(500, 1000, "internal error")
POST_REFUSED = ApiError(
    400, 230001, "Your request contains an invalid request parameter: invalid post content"
)
BOT_NOT_IN_CHAT = ApiError(400, 230002, "Bot/User can NOT be out of the chat.")


@dataclass
class Sent:
    """A message the stub really posted."""

    kind: str  # "reply", "create" or "update"
    target: str  # replied-to message id, chat id, or updated message id
    msg_type: str
    content: dict[str, Any]
    uuid: str
    message_id: str
    at: float = 0.0  # time.monotonic() when it was posted (the round-trip benchmark reads it)
    card: StubCard | None = None  # an interactive message's card (feishu_cardkit.py)

    @property
    def text(self) -> str:
        """The words: a card's text now, a text message's text, a post's ``md``/``text`` elements joined
        by newlines, or ""."""
        if self.card is not None:
            return self.card.text
        if self.msg_type != "post":  # text; an image, a file, an audio have no words
            return str(self.content.get("text", ""))
        body: dict[str, Any] = self.content.get("zh_cn") or next(iter(self.content.values()), {})
        return "\n".join(
            str(e.get("text", "")) for paragraph in body.get("content", []) for e in paragraph if "text" in e
        )


@dataclass
class StubRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: Any
    raw: bytes = b""  # the body as sent (uploads are multipart: feishu_media.py)
