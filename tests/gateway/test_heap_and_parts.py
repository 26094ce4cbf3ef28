"""What a started gateway does once to spare every later message some CPU: the heap alive after start is
frozen out of the garbage collector's walks (gateway/heap.py), and a channel's optional parts are asked
once per channel (gateway/channel_parts.py)."""

from __future__ import annotations

import gc
import weakref
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from channels.base import InboundMessage, ShowsWork, StreamsReplies
from gateway.channel_parts import ChannelParts
from gateway.heap import freeze_startup_heap


class _Node:
    def __init__(self) -> None:
        self.other: Any = None


def test_freezing_collects_the_garbage_first_and_keeps_the_living_out_of_later_walks() -> None:
    kept = _Node()
    garbage = _Node()
    garbage.other = _Node()
    garbage.other.other = garbage  # a cycle only the collector frees
    gone = weakref.ref(garbage)
    del garbage
    try:
        frozen = freeze_startup_heap()
        assert gone() is None  # collected, not frozen for good
        assert frozen > 0 and gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # frozen: no collection walks it
        made_later = _Node()
        assert any(o is made_later for o in gc.get_objects())  # what comes after is collected as before
    finally:
        gc.unfreeze()  # the rest of the suite's heap as it was
    assert any(o is kept for o in gc.get_objects())


class _Plain:
    name = "plain"


class _Typing:
    name = "typing"

    def working(self, message: InboundMessage) -> AbstractAsyncContextManager[None]:
        return nullcontext()


class _Streams:
    name = "streams"

    def __init__(self) -> None:
        self.on_stopped: Any = None

    def open_stream(self, message: InboundMessage, *, resume: str, remember: Any) -> None:
        return None


def test_a_channels_parts_are_the_isinstance_answers_kept_per_channel_object() -> None:
    parts = ChannelParts()
    plain, typing, streams = _Plain(), _Typing(), _Streams()
    assert parts.has(typing, ShowsWork) is isinstance(typing, ShowsWork) is True
    assert parts.has(plain, ShowsWork) is isinstance(plain, ShowsWork) is False
    assert parts.has(typing, StreamsReplies) is False
    assert parts.has(None, ShowsWork) is False
    assert parts.has(streams, StreamsReplies) is isinstance(streams, StreamsReplies) is True
    # Kept: the same object is not asked again (an attribute it drops later is not seen)…
    del streams.on_stopped
    assert not isinstance(streams, StreamsReplies)
    assert parts.has(streams, StreamsReplies) is True
    # …but another object is asked afresh.
    other = _Streams()
    del other.on_stopped
    assert parts.has(other, StreamsReplies) is False
