"""``python -m localservers telegram|feishu|openai``: run one local server until Ctrl-C.

``python -m localservers round-robin --listen PORT --to URL --to URL …`` runs the load-balancer stand-in
(localservers/round_robin.py) in front of several gateways.

Prints the base URL on the first line (scripts read it), then the tierclaw config that points at it.
The Telegram server also plays the user: each line typed on its standard input becomes a private
message from user 42, and every message the bot sends is printed.
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


def _type_as_user(stub: Any, stopped: threading.Event) -> None:
    """Telegram: stdin lines become user 42's messages; the bot's replies are printed as they arrive."""
    print("Type a message for the bot (you are user 42):", flush=True)
    shown = 0
    for line in sys.stdin:
        if line.strip():
            stub.push(stub.message(line.rstrip("\n")))
        while not stopped.wait(0.5):
            sent = stub.sent()
            for call in sent[shown:]:
                print(f"bot> {call.params.get('text', '')}", flush=True)
            if len(sent) > shown:
                shown = len(sent)
                break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m localservers", description=__doc__)
    parser.add_argument(
        "kind", choices=("telegram", "feishu", "openai", "round-robin"), help="which server to run"
    )
    parser.add_argument("--listen", type=int, default=0, help="round-robin: the port (0: a free one)")
    parser.add_argument(
        "--to", action="append", default=[], metavar="URL", help="round-robin: a backend (repeat)"
    )
    args = parser.parse_args(argv)
    stopped = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    if args.kind == "round-robin":
        from localservers.round_robin import serve

        return serve(args.listen, args.to, stopped)
    if args.to or args.listen:
        parser.error("--listen and --to are for round-robin")
    stub, info = _start(args.kind)
    try:
        print(info["url"], flush=True)
        print("tierclaw config to use it:", json.dumps(info["config"], indent=2), sep="\n", flush=True)
        print("Ctrl-C stops it.", flush=True)
        if args.kind == "telegram":
            threading.Thread(target=_type_as_user, args=(stub, stopped), daemon=True).start()
        stopped.wait()
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
