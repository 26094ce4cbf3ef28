"""Which optional parts a channel has (the runtime-checkable protocols of channels/base.py: ``ShowsWork``,
``StreamsReplies``…), asked once per channel instead of on every message.

``isinstance(channel, ShowsWork)`` against a runtime-checkable protocol walks the protocol's members and
looks each one up on the object every time it is asked — 20–50 µs on Python 3.11 on this project's
machine, where an ordinary ``isinstance`` is well under one — and the loop asked it three times a message
(the "typing" sign twice, the streamed reply once: bench/README.md, "Gateway CPU", stop 51). A channel's
parts are its class's methods and the attributes it set when it was made, so the answer is kept per
channel object and protocol; another object under the same name is asked afresh.
"""

from __future__ import annotations

from typing import Any


class ChannelParts:
    """``has(channel, Protocol)``: ``isinstance`` kept per channel object and protocol."""

    def __init__(self) -> None:
        # (id(channel), protocol) -> (the channel, the answer): the channel is kept so its id is not reused.
        self._known: dict[tuple[int, type], tuple[object, bool]] = {}

    def has(self, channel: object, part: Any) -> bool:
        """Whether ``channel`` has the optional ``part`` (a runtime-checkable protocol); False for None."""
        if channel is None:
            return False
        known = self._known.get((id(channel), part))
        if known is not None and known[0] is channel:
            return known[1]
        answer = isinstance(channel, part)
        self._known[(id(channel), part)] = (channel, answer)
        return answer
