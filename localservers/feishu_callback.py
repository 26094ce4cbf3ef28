"""Feishu's side of HTTP-callback mode: POST each event to the app's callback URL, again until it is
answered 2xx.

Feishu signs and (with an encrypt key) encrypts each event (``feishu_payloads.signed_body``) and, when the
callback answers anything but 2xx — or nothing (a refused connection, a timeout) — delivers it again
later; the real platform waits minutes between tries, this sender ``retry_after`` seconds, so a trial
finds out in seconds whether an event was lost. Each try is signed afresh (new timestamp and nonce), as
each of Feishu's is.

    sender = CallbackSender(url, encrypt_key="...")
    attempts = await sender.deliver(message_event("hi"))   # returns once answered 2xx

Runs on the caller's event loop; one ``deliver`` at a time per chat keeps a chat's events in order
(bench/replicas/feishu.py).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from localservers.feishu_payloads import signed_body


class CallbackGaveUp(Exception):
    """An event had no 2xx answer within the sender's ``give_up_after``."""


class CallbackSender:
    """Posts events to ``url`` as Feishu does, retrying each until a 2xx answer."""

    def __init__(
        self,
        url: str,
        *,
        encrypt_key: str,
        retry_after: float = 0.2,
        give_up_after: float = 300.0,
        timeout: float = 30.0,
    ) -> None:
        self.url = url
        self.encrypt_key = encrypt_key
        self.retry_after = retry_after
        self.give_up_after = give_up_after
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.failed_attempts = 0  # posts answered non-2xx or not at all
        self._session: aiohttp.ClientSession | None = None

    async def deliver(self, event: dict[str, Any]) -> int:
        """Post ``event`` until a 2xx answer; returns how many posts it took."""
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self.timeout)
        deadline = time.monotonic() + self.give_up_after
        attempts = 0
        while True:
            attempts += 1
            body, headers = signed_body(event, self.encrypt_key)
            try:
                async with self._session.post(self.url, data=body, headers=headers) as answer:
                    await answer.read()
                    if 200 <= answer.status < 300:
                        return attempts
            except (aiohttp.ClientError, TimeoutError):
                pass
            self.failed_attempts += 1
            if time.monotonic() >= deadline:
                event_id = (event.get("header") or {}).get("event_id")
                raise CallbackGaveUp(f"event {event_id} had no 2xx answer after {attempts} posts")
            await asyncio.sleep(self.retry_after)

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
