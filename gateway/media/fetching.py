"""Downloading a message's media through its channel, after the chat worker claimed the message (the inbox
row holds the references, so a crash before or during a download loses nothing: the message is claimed
again and fetched again).

A failure that may pass (network, timeout, 5xx, 429) is tried again with backoff, ``attempts`` tries in
all, like a model call; one that cannot (too big, empty, gone, refused) is final at once.
"""

from __future__ import annotations

import asyncio
import logging

from channels.base import Channel
from channels.media import FetchesMedia, MediaError, MediaRef

log = logging.getLogger("tierclaw.gateway")

BACKOFF_S = 0.5  # first pause between tries; doubles


async def fetch(
    channel: Channel | None,
    message_id: str,
    ref: MediaRef,
    *,
    limit: int,
    attempts: int,
    backoff: float = BACKOFF_S,
) -> bytes:
    """The bytes of ``ref``; ``MediaError`` when they cannot be had."""
    if ref.size > limit:
        raise MediaError("too_big", f"{ref.size} bytes")
    if not isinstance(channel, FetchesMedia):
        raise MediaError("refused", "this channel cannot download files")
    pause = backoff
    for attempt in range(1, attempts + 1):
        try:
            data = await channel.fetch_media(message_id, ref, limit)
        except MediaError as exc:
            if exc.permanent or attempt == attempts:
                raise
            log.info(
                "[gateway] download of a %s failed (%s); trying again in %.1f s", ref.kind, exc.reason, pause
            )
        except Exception as exc:  # a library error the channel did not sort: treat it as passing
            if attempt == attempts:
                raise MediaError("unreachable", type(exc).__name__) from None
            log.info("[gateway] download of a %s failed (%s); trying again", ref.kind, type(exc).__name__)
        else:
            if not data:
                raise MediaError("empty")
            if len(data) > limit:
                raise MediaError("too_big", f"{len(data)} bytes")
            return data
        await asyncio.sleep(pause)
        pause *= 2
    raise MediaError("unreachable", "no tries left")
