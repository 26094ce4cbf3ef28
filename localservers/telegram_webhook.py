"""Telegram's side of webhook mode: POST each update to the URL the bot set, again until it answers 2xx.

``TelegramStub`` (telegram_server.py) records what ``setWebhook`` set (``stub.webhook``: ``url`` and
``secret_token``); ``WebhookSender`` posts updates there the way Telegram does — JSON body, the secret in
``X-Telegram-Bot-Api-Secret-Token`` — and retries an update that got no 2xx answer (a refused
connection, a 5xx from a load balancer with no replica up, a timeout) after a short pause, so an update
is lost only if the bot never answers it. Telegram does the same for a while (docs/scale-out.md).

    sender = WebhookSender(stub)
    attempts = await sender.deliver(stub.update(stub.message("hi")))   # returns once answered 2xx

Runs on the caller's event loop (aiohttp client); one ``deliver`` at a time per chat keeps a chat's
updates in order, as a benchmark needs (bench/replicas.py).
"""

from __future__ import annotations

import asyncio
import time

import aiohttp

from localservers.telegram_server import TelegramStub

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookGaveUp(Exception):
    """An update had no 2xx answer within the sender's ``give_up_after``."""


class WebhookSender:
    """Posts updates to ``stub.webhook`` (or an explicit ``url``/``secret``), retrying until 2xx."""

    def __init__(
        self,
        stub: TelegramStub | None = None,
        *,
        url: str = "",
        secret: str = "",
        retry_after: float = 0.2,
        give_up_after: float = 300.0,
        timeout: float = 30.0,
    ) -> None:
        self.stub = stub
        self.url = url
        self.secret = secret
        self.retry_after = retry_after
        self.give_up_after = give_up_after
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.failed_attempts = 0  # posts answered non-2xx or not at all
        self._session: aiohttp.ClientSession | None = None

    def target(self) -> tuple[str, str]:
        """The URL and secret to post to: as given, else what the bot set with ``setWebhook``."""
        if self.url:
            return self.url, self.secret
        hook = self.stub.webhook if self.stub is not None else {}
        return hook.get("url", ""), hook.get("secret_token", "")

    async def deliver(self, update: dict) -> int:
        """Post ``update`` until a 2xx answer; returns how many posts it took."""
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self.timeout)
        deadline = time.monotonic() + self.give_up_after
        attempts = 0
        while True:
            url, secret = self.target()
            if url:
                attempts += 1
                headers = {SECRET_HEADER: secret} if secret else {}
                try:
                    async with self._session.post(url, json=update, headers=headers) as answer:
                        if 200 <= answer.status < 300:
                            return attempts
                except (aiohttp.ClientError, TimeoutError):
                    pass
                self.failed_attempts += 1
            if time.monotonic() >= deadline:
                raise WebhookGaveUp(
                    f"update {update.get('update_id')} had no 2xx answer after {attempts} posts"
                )
            await asyncio.sleep(self.retry_after)

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
