"""The Feishu event callback's HTTP side: the server (``listen``) and its door check (``refusal``), which
refuses a bad request cheaply, before lark sees it.

A callback endpoint is public. lark's dispatcher answers every request it refuses with HTTP 500, its own
error text in the body and a full traceback in the log — one per request, so a scanner floods the log.
``refusal`` runs the same checks first (the body is JSON; it decrypts with the encrypt key; the
verification token matches; the ``X-Lark-Signature`` matches) and says which failed, so the channel can
answer 400/401/403 with a fixed body and log one line. What passes goes on to lark, which checks it again
and dispatches it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

URL_VERIFICATION = "url_verification"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a callback request is refused: the HTTP status and a short reason for the log."""

    status: int
    reason: str

    def body(self) -> bytes:
        """A fixed answer: nothing from the request or a library goes back to the sender."""
        return json.dumps(
            {"msg": {400: "bad request", 401: "unauthorized"}.get(self.status, "forbidden")}
        ).encode()


def _decrypt(encrypted: str, encrypt_key: str) -> str | None:
    from lark_oapi.core.utils.decryptor import AESCipher  # lark's own cipher: the same decryption

    try:
        return AESCipher(encrypt_key).decrypt_str(encrypted)
    except Exception:  # bad base64, padding, length, UTF-8: all one answer
        return None


def _signature_ok(headers: Mapping[str, str], body: bytes, encrypt_key: str) -> bool:
    timestamp = headers.get("X-Lark-Request-Timestamp", "")
    nonce = headers.get("X-Lark-Request-Nonce", "")
    signature = headers.get("X-Lark-Signature", "")
    expected = hashlib.sha256((timestamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


def _token_of(event: dict[str, Any]) -> Any:
    header = event.get("header")
    return header.get("token") if isinstance(header, dict) else event.get("token")


def refusal(
    body: bytes, headers: Mapping[str, str], *, encrypt_key: str, verification_token: str
) -> Refusal | None:
    """None when the request may go on to lark; else why it is refused (``headers`` case-insensitive)."""
    try:
        outer = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return Refusal(400, "malformed JSON")
    if not isinstance(outer, dict):
        return Refusal(400, "not a JSON object")
    event = outer
    encrypted = outer.get("encrypt")
    if encrypted is not None:
        if not encrypt_key:
            return Refusal(400, "encrypted event but no encryptKey configured")
        plaintext = _decrypt(str(encrypted), encrypt_key) if isinstance(encrypted, str) else None
        if plaintext is None:
            return Refusal(403, "cannot decrypt with the configured encryptKey")
        try:
            event = json.loads(plaintext)
        except ValueError:
            return Refusal(400, "malformed JSON inside the encrypted event")
        if not isinstance(event, dict):
            return Refusal(400, "not a JSON object inside the encrypted event")
    token = _token_of(event)
    # lark's rule: with a verification token configured, it must match whenever the event carries one,
    # and always without an encrypt key or for the address check; without one, no token may be sent.
    is_check = event.get("type") == URL_VERIFICATION
    if verification_token and (token is not None or not encrypt_key or is_check):
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), verification_token.encode()):
            return Refusal(403, "wrong or missing verification token")
    elif not verification_token and token is not None and token != verification_token:
        return Refusal(403, "a verification token was sent but none is configured")
    if event.get("type") == URL_VERIFICATION:
        return None  # Feishu does not sign the address check; the token above is its proof
    if encrypt_key and not _signature_ok(headers, body, encrypt_key):
        return Refusal(401, "bad or missing X-Lark-Signature")
    return None


async def listen(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]], host: str, port: int, path: str
) -> tuple[web.AppRunner, int]:
    """Serve ``handler`` for POSTs to ``path``; the runner and the port it got (``port`` 0 picks one)."""
    from channels.base import ChannelError

    app = web.Application()
    app.router.add_post(path, handler)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:  # address in use, not an address of this machine, no permission
        await runner.cleanup()
        raise ChannelError(f"Feishu callback cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return runner, int(runner.addresses[0][1])
