"""The Telegram webhook server: an update is answered 200 only once the gateway has stored it.

python-telegram-bot's own webhook server answers 200 as soon as it has queued an update in memory, before
any handler ran; a process killed in between loses that update, because Telegram never sends a 2xx'd
update again (`bench.replicas` measured it: docs/scale-out.md, "Channels"). Here, as with polling (whose
offset is confirmed only after storing) and Feishu's callback (feishu/callback.py), the update is handed
to the gateway inside the request and the answer waits for it: 200 when stored (or not for the gateway),
500 when it could not be stored, so Telegram delivers it again — to this replica or, behind a load
balancer, another one, where the inbox's unique update id answers it once.

The checks are python-telegram-bot's: the secret in ``X-Telegram-Bot-Api-Secret-Token`` and a
``Content-Type`` of exactly ``application/json``, else 403. A body that is not JSON is 400; an update
PTB cannot parse is skipped (200: a resent copy would not parse either), as polling skips it.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from telegram import Bot, Update

log = logging.getLogger("tierclaw.channels")

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

# Handles one update; returns once it is stored or found not for the gateway; raises when it could not be
# stored.
UpdateHandler = Callable[[Update], Awaitable[None]]


class WebhookServer:
    """An aiohttp server for ``POST /<path>`` on ``listen:port``; ``stop`` waits for requests in flight."""

    def __init__(
        self, handle: UpdateHandler, bot: Bot, *, listen: str, port: int, path: str, secret: str
    ) -> None:
        self._handle = handle
        self._bot = bot
        self._listen, self._port = listen, port
        self._path = "/" + path.lstrip("/")
        self._secret = secret.encode()
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Listen; OSError when the address cannot be taken (nothing is left listening then)."""
        app = web.Application()
        app.router.add_post(self._path, self._post)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self._listen, self._port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner

    async def stop(self) -> None:
        """Stop listening (new connections are refused) after the requests in flight were answered."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _post(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            return web.Response(status=403)
        if request.headers.get("Content-Type") != "application/json":
            return web.Response(status=403)
        try:
            data = json.loads(await request.read())
        except ValueError:
            return web.Response(status=400)
        if not isinstance(data, dict):
            return web.Response(status=400)
        try:
            update = Update.de_json(data, self._bot)
        except Exception as exc:
            log.warning("[telegram] skipped update %s: %s", data.get("update_id"), type(exc).__name__)
            return web.Response(status=200)
        try:
            await self._handle(update)
        except Exception as exc:  # not stored: Telegram delivers it again
            log.warning("[telegram] a webhook update could not be stored (%s); Telegram will resend it", exc)
            return web.Response(status=500)
        return web.Response(status=200)
