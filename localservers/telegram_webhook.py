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

from localservers.retrying_post import Attempt, RetryingPoster
from localservers.telegram_server import TelegramStub

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookGaveUp(Exception):
    """An update had no 2xx answer within the sender's ``give_up_after``."""


class WebhookSender(RetryingPoster):
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
        super().__init__(retry_after=retry_after, give_up_after=give_up_after, timeout=timeout)
        self.stub = stub
        self.url = url
        self.secret = secret

    def target(self) -> tuple[str, str]:
        """The URL and secret to post to: as given, else what the bot set with ``setWebhook``."""
        if self.url:
            return self.url, self.secret
        hook = self.stub.webhook if self.stub is not None else {}
        return hook.get("url", ""), hook.get("secret_token", "")

    async def deliver(self, update: dict) -> int:
        """Post ``update`` until a 2xx answer; returns how many posts it took (none while no webhook is
        set: it waits for one)."""

        def attempt() -> Attempt:
            url, secret = self.target()
            headers = {SECRET_HEADER: secret} if secret else {}
            return (url, {"json": update, "headers": headers}) if url else None

        def gave_up(posts: int) -> Exception:
            return WebhookGaveUp(f"update {update.get('update_id')} had no 2xx answer after {posts} posts")

        return await self.post_until_2xx(attempt, gave_up)
