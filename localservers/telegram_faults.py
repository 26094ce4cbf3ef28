"""The scripted answers the local Telegram server can give instead of carrying a call out
(``TelegramStub.fail``): API errors as the Bot API words them, and connections that hang or trickle."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Fault:
    """A scripted answer: an API error, or a connection that hangs / trickles instead of answering."""

    status: int = 400
    description: str = "Bad Request"
    retry_after: int | None = None
    hang: float = 0.0  # wait this long, then drop the connection without answering
    delay: float = 0.0  # carry the call out as usual, but answer only after this long
    trickle: float = 0.0  # send headers, then a byte every 0.2 s for this long (per-read timeouts never fire)


def rate_limited(retry_after: int) -> Fault:
    return Fault(429, f"Too Many Requests: retry after {retry_after}", retry_after=retry_after)


def cant_parse() -> Fault:
    return Fault(
        400, "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 4"
    )


def conflict() -> Fault:
    return Fault(
        409,
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    )


def webhook_active() -> Fault:
    return Fault(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete "
        "the webhook first",
    )


def slow(seconds: float) -> Fault:
    """The call takes effect at once (a sendMessage is delivered), the answer comes ``seconds`` later."""
    return Fault(200, "", delay=seconds)


def unauthorized() -> Fault:
    return Fault(401, "Unauthorized")
