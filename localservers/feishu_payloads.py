"""What Feishu sends to an app, built for tests and benchmarks: message events (with mentions), the
callback address check, the event encryption and signature, and posting an event to a callback URL."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
import uuid as uuid_module
from typing import Any

import aiohttp
from Crypto.Cipher import AES

BOT_OPEN_ID = "ou_stub_bot"
BOT_NAME = "StubBot"


def mention(key: str = "@_user_1", open_id: str = BOT_OPEN_ID, name: str = BOT_NAME) -> dict[str, Any]:
    """One entry of a message's ``mentions`` (default: the stub's bot)."""
    return {
        "key": key,
        "id": {"union_id": "on_x", "user_id": None, "open_id": open_id},
        "name": name,
        "tenant_key": "tk",
    }


def message_event(
    text: str = "hello",
    *,
    sender: str = "ou_alice",
    chat_id: str = "oc_chat_alice",
    chat_type: str = "p2p",
    message_type: str = "text",
    content: dict[str, Any] | None = None,
    mentions: list[dict[str, Any]] | None = None,
    event_id: str | None = None,
    message_id: str | None = None,
    token: str = "",
    app_id: str = "cli_stub",
    sender_type: str = "user",
    create_time: int | None = None,
) -> dict[str, Any]:
    """An ``im.message.receive_v1`` event (schema 2.0); ``content`` defaults to ``{"text": text}``.
    ``create_time`` (ms) defaults to now, and rises with every event made here, as two messages of one
    person never carry the same time on Feishu (the gateway answers a chat in this order)."""
    now = str(create_time if create_time is not None else _next_create_time())
    body = content if content is not None else {"text": text}
    return {
        "schema": "2.0",
        "header": {
            "event_id": event_id or uuid_module.uuid4().hex,
            "event_type": "im.message.receive_v1",
            "create_time": now,
            "token": token,
            "app_id": app_id,
            "tenant_key": "tk",
        },
        "event": {
            "sender": {
                "sender_id": {"union_id": "on_" + sender, "user_id": "u_" + sender, "open_id": sender},
                "sender_type": sender_type,
                "tenant_key": "tk",
            },
            "message": {
                "message_id": message_id or "om_" + uuid_module.uuid4().hex[:20],
                "root_id": "",
                "parent_id": "",
                "create_time": now,
                "update_time": now,
                "chat_id": chat_id,
                "thread_id": "",
                "chat_type": chat_type,
                "message_type": message_type,
                "content": json.dumps(body, ensure_ascii=False),
                "mentions": mentions or [],
                "user_agent": "",
            },
        },
    }


_last_create_time = 0
_create_time_lock = threading.Lock()


def _next_create_time() -> int:
    global _last_create_time
    with _create_time_lock:
        _last_create_time = max(int(time.time() * 1000), _last_create_time + 1)
        return _last_create_time


def url_verification(challenge: str, token: str) -> dict[str, Any]:
    return {"challenge": challenge, "token": token, "type": "url_verification"}


def encrypt(encrypt_key: str, plaintext: str) -> str:
    """Feishu's event encryption: AES-256-CBC, key sha256(encrypt_key), random IV first, base64."""
    key = hashlib.sha256(encrypt_key.encode("utf-8")).digest()
    iv = os.urandom(16)
    data = plaintext.encode("utf-8")
    pad = 16 - len(data) % 16
    cipher = AES.new(key, AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(data + bytes([pad]) * pad)).decode("ascii")


def signed_body(
    event: dict[str, Any], encrypt_key: str, *, bad_signature: bool = False
) -> tuple[bytes, dict[str, str]]:
    """The raw body (encrypted when ``encrypt_key`` is set) and Feishu's signature headers."""
    plaintext = json.dumps(event, ensure_ascii=False)
    body = json.dumps({"encrypt": encrypt(encrypt_key, plaintext)} if encrypt_key else event).encode()
    timestamp, nonce = str(int(time.time())), uuid_module.uuid4().hex
    signature = hashlib.sha256((timestamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()
    if bad_signature:
        signature = "0" * 64
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": signature,
    }
    return body, headers


async def post_callback(
    url: str,
    event: dict[str, Any],
    *,
    encrypt_key: str,
    bad_signature: bool = False,
    lowercase_headers: bool = False,
) -> tuple[int, Any]:
    """POST an event to the channel's callback URL as Feishu does; returns (status, parsed JSON body)."""
    body, headers = signed_body(event, encrypt_key, bad_signature=bad_signature)
    if lowercase_headers:
        headers = {k.lower(): v for k, v in headers.items()}
    async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as resp:
        text = await resp.text()
        try:
            return resp.status, json.loads(text)
        except json.JSONDecodeError:
            return resp.status, text
