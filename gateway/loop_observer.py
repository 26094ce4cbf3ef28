"""What the process loop tells the metrics (gateway/metrics.py): a message taken in, its answer gone out."""

from __future__ import annotations

from typing import Protocol

from channels.base import InboundMessage


class LoopObserver(Protocol):
    """Told what the loop does, for the metrics (gateway/metrics.py); must not raise or block."""

    def received(self, message: InboundMessage) -> None:
        """A message was taken in (stored first, with an inbox) or resumed at start."""

    def finished(
        self, message: InboundMessage, reply: str | None, send_error: str | None, seconds: float
    ) -> None:
        """Its answer went out (``reply`` None: nothing to send); ``seconds`` since it was taken in here,
        or since it was stored when another replica took it in."""
