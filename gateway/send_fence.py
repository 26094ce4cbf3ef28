"""The fence of the message being answered, for sends made while it is answered (docs/scale-out.md,
"Fencing"): a file a tool sends back through the channel mid-answer goes out only while this replica
still holds the chat at the claim's generation, like the reply itself (``ProcessLoop.may_send``).

The process loop sets the fence around the handler of each claimed message (``fenced``); a context
variable carries it into the handler's task and whatever that calls. Outside a claimed message (the
terminal's own loop without an inbox, tests) there is no fence and every send may go.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Iterator

Fence = Callable[[], Awaitable[bool]]  # True: this replica may still send for the message (intent recorded)

_CURRENT: contextvars.ContextVar[Fence | None] = contextvars.ContextVar("tierclaw_send_fence", default=None)


@contextlib.contextmanager
def fenced(fence: Fence) -> Iterator[None]:
    """Sends made by the code run inside (and the tasks it starts) ask ``fence`` first."""
    token = _CURRENT.set(fence)
    try:
        yield
    finally:
        _CURRENT.reset(token)


async def may_send() -> bool:
    """Right before a send on behalf of the message being answered: whether it may still go out (False:
    its chat was taken over by another replica while this one stalled; send nothing)."""
    fence = _CURRENT.get()
    return True if fence is None else await fence()
