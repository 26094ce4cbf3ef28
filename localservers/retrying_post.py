"""What Telegram's webhook side and Feishu's callback side share: POST one payload, again after a short
pause until it is answered 2xx, and give up after a while (``telegram_webhook.py``,
``feishu_callback.py``). A refused connection, a timeout and any non-2xx answer are all "not received":
the platforms deliver again then, so an update is lost only if the bot never answers it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import aiohttp

# What to post for one try: (url, keyword arguments of ``ClientSession.post``), or None when there is no
# URL to post to yet (the try is not counted; the sender waits and asks again).
Attempt = tuple[str, dict[str, Any]] | None


class RetryingPoster:
    """Posts until 2xx on the caller's event loop; ``failed_attempts`` counts the posts that were not."""

    def __init__(self, *, retry_after: float, give_up_after: float, timeout: float) -> None:
        self.retry_after = retry_after
        self.give_up_after = give_up_after
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.failed_attempts = 0  # posts answered non-2xx or not at all
        self._session: aiohttp.ClientSession | None = None

    async def post_until_2xx(
        self, attempt: Callable[[], Attempt], gave_up: Callable[[int], Exception]
    ) -> int:
        """Post what ``attempt()`` gives until a 2xx answer; how many posts it took. After
        ``give_up_after`` seconds raises ``gave_up(posts so far)``."""
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self.timeout)
        deadline = time.monotonic() + self.give_up_after
        attempts = 0
        while True:
            request = attempt()
            if request is not None:
                attempts += 1
                url, kwargs = request
                try:
                    async with self._session.post(url, **kwargs) as answer:
                        await answer.read()
                        if 200 <= answer.status < 300:
                            return attempts
                except (aiohttp.ClientError, TimeoutError):
                    pass
                self.failed_attempts += 1
            if time.monotonic() >= deadline:
                raise gave_up(attempts)
            await asyncio.sleep(self.retry_after)

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
