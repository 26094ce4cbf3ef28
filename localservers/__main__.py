"""``python -m localservers telegram|feishu|openai``: run one local server until Ctrl-C.

Prints the base URL on the first line (scripts read it), then the tierclaw config that points at it.
The Telegram and Feishu servers also play the user: each line typed on standard input becomes a private
message (Telegram: from user 42; Feishu: from ou_alice, on the websocket — or ``POST /local/say``
``{"text": "…"}`` to the printed URL), and every message the bot sends is printed.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any


def _start(kind: str) -> tuple[Any, dict[str, Any]]:
    """The started server and the config snippet that points tierclaw at it."""
    if kind == "telegram":
        from localservers.telegram_server import TOKEN, TelegramStub

        stub: Any = TelegramStub().start()
        url = stub.base_url
        snippet = {
            "channels": {"telegram": {"enabled": True, "token": TOKEN, "baseUrl": url, "allowFrom": ["*"]}}
        }
        return stub, {"url": url, "config": snippet}
    if kind == "feishu":
        from localservers.feishu_server import FeishuStub

        stub = FeishuStub().start()
        url = stub.domain
        feishu = {
            "enabled": True,
            "appId": "cli_local",
            "appSecret": "local",
            "domain": url,
            "allowFrom": ["*"],
        }
        return stub, {"url": url, "config": {"channels": {"feishu": feishu}}}
    from localservers.openai_server import OpenAIStub

    stub = OpenAIStub().start()
    url = stub.base_url
    return stub, {"url": url, "config": {"provider": {"apiKey": "local", "baseUrl": url}}}


def _type_as_user(kind: str, stub: Any, stopped: threading.Event) -> None:
    """stdin lines become a user's messages (Telegram: user 42; Feishu: ou_alice); the bot's replies
    are printed as they arrive."""
    if kind == "telegram":
        print("Type a message for the bot (you are user 42):", flush=True)
    else:
        print(
            'Type a message for the bot (you are ou_alice), or POST one: curl -d \'{"text": "hi"}\' '
            f"{stub.domain}/local/say",
            flush=True,
        )
    shown = 0
    for line in sys.stdin:
        if line.strip():
            try:
                _say(kind, stub, line.rstrip("\n"))
            except AssertionError as exc:  # Feishu: no gateway connected yet
                print(f"not sent: {exc}", flush=True)
                continue
        while not stopped.wait(0.5):
            replies = _replies(kind, stub)
            for text in replies[shown:]:
                print(f"bot> {text}", flush=True)
            if len(replies) > shown:
                shown = len(replies)
                break


def _say(kind: str, stub: Any, text: str) -> None:
    if kind == "telegram":
        stub.push(stub.message(text))
    else:
        stub.say(text)


def _replies(kind: str, stub: Any) -> list[str]:
    """Every message the bot sent so far, as text."""
    if kind == "telegram":
        return [str(call.params.get("text", "")) for call in stub.sent()]
    return [sent.text for sent in list(stub.sent)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m localservers", description=__doc__)
    parser.add_argument("kind", choices=("telegram", "feishu", "openai"), help="which server to run")
    args = parser.parse_args(argv)
    stub, info = _start(args.kind)
    stopped = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        print(info["url"], flush=True)
        print("tierclaw config to use it:", json.dumps(info["config"], indent=2), sep="\n", flush=True)
        print("Ctrl-C stops it.", flush=True)
        if args.kind in ("telegram", "feishu"):
            threading.Thread(target=_type_as_user, args=(args.kind, stub, stopped), daemon=True).start()
        stopped.wait()
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
