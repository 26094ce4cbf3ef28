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

from typing import Any

from localservers.feishu_payloads import signed_body
from localservers.retrying_post import Attempt, RetryingPoster


class CallbackGaveUp(Exception):
    """An event had no 2xx answer within the sender's ``give_up_after``."""


class CallbackSender(RetryingPoster):
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
        super().__init__(retry_after=retry_after, give_up_after=give_up_after, timeout=timeout)
        self.url = url
        self.encrypt_key = encrypt_key

    async def deliver(self, event: dict[str, Any]) -> int:
        """Post ``event`` until a 2xx answer, signed afresh each time; returns how many posts it took."""

        def attempt() -> Attempt:
            body, headers = signed_body(event, self.encrypt_key)
            return self.url, {"data": body, "headers": headers}

        def gave_up(posts: int) -> Exception:
            event_id = (event.get("header") or {}).get("event_id")
            return CallbackGaveUp(f"event {event_id} had no 2xx answer after {posts} posts")

        return await self.post_until_2xx(attempt, gave_up)
