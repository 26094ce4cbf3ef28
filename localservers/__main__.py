"""``python -m localservers telegram|feishu|openai``: run one local server until Ctrl-C.

``python -m localservers round-robin --listen PORT --to URL --to URL …`` runs the load-balancer stand-in
(localservers/round_robin.py) in front of several gateways.

Prints the base URL on the first line (scripts read it), then the tierclaw config that points at it.
The Telegram and Feishu servers also play the user: each line typed on standard input becomes a private
message (Telegram: from user 42; Feishu: from ou_alice, on the websocket — or ``POST /local/say``
``{"text": "…"}`` to the printed URL), ``/file PATH`` sends a file from disk as a voice note (.ogg, .wav),
a photo (.png, .jpg) or a document (or ``POST /local/send-file`` ``{"path": "…"}``), and every message
the bot sends is printed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any


def _start(kind: str, pace: tuple[float, float | None] = (0.0, None)) -> tuple[Any, dict[str, Any]]:
    """The started server and the config snippet that points tierclaw at it (``pace``: the model's first
    token delay and tokens per second when it streams)."""
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
    from localservers.openai_sse import StreamPace

    stub = OpenAIStub(pace=StreamPace(*pace)).start()
    url = stub.base_url
    return stub, {"url": url, "config": {"provider": {"apiKey": "local", "baseUrl": url}}}


def merge_config(path: Path, snippet: dict[str, Any]) -> None:
    """Merge ``snippet`` into the JSON object in ``path`` (made 0600: it holds the stand-in keys), under
    a lock, so servers started at the same time with the same file both land in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as file:
        os.chmod(path, 0o600)
        fcntl.flock(file, fcntl.LOCK_EX)
        file.seek(0)
        text = file.read()
        merged = _deep_merge(json.loads(text) if text.strip() else {}, snippet)
        file.seek(0)
        file.truncate()
        file.write(json.dumps(merged, indent=2) + "\n")


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = _deep_merge(out[key], value) if both else value
    return out


def _type_as_user(kind: str, stub: Any) -> None:
    """stdin lines become a user's messages (Telegram: user 42; Feishu: ou_alice)."""
    if kind == "telegram":
        print("Type a message for the bot (you are user 42):", flush=True)
    else:
        print(
            'Type a message for the bot (you are ou_alice), or POST one: curl -d \'{"text": "hi"}\' '
            f"{stub.domain}/local/say",
            flush=True,
        )
    for line in sys.stdin:
        if line.startswith("/file "):  # a voice note, photo or file from disk
            status, answer, *_ = (
                stub.files.send_local_file(stub, {"path": line[6:].strip()})
                if kind == "telegram"
                else stub.media.send_local_file(stub, {"path": line[6:].strip()})
            )
            print("sent" if status == 200 else f"not sent: {answer}", flush=True)
        elif line.strip():
            try:
                _say(kind, stub, line.rstrip("\n"))
            except AssertionError as exc:  # Feishu: no gateway connected yet
                print(f"not sent: {exc}", flush=True)


def _print_replies(kind: str, stub: Any, stopped: threading.Event) -> None:
    """Print each message the bot sends, as it arrives (to typed and POSTed messages alike)."""
    shown = 0
    while not stopped.wait(0.2):
        replies = _replies(kind, stub)
        for text in replies[shown:]:
            print(f"bot> {text}", flush=True)
        shown = len(replies)


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
    parser.add_argument(
        "kind", choices=("telegram", "feishu", "openai", "round-robin"), help="which server to run"
    )
    parser.add_argument(
        "--write-config",
        metavar="PATH",
        help="also merge the config that points tierclaw at this server into the JSON file PATH "
        "(created if absent; run each server with the same PATH, then tierclaw gateway --config PATH)",
    )
    parser.add_argument(
        "--first-token", type=float, default=0.0, help="openai: seconds before a streamed reply"
    )
    parser.add_argument(
        "--tokens-per-second", type=float, help="openai: how fast a reply streams (default: at once)"
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
    stub, info = _start(args.kind, (args.first_token, args.tokens_per_second))
    if args.write_config:
        merge_config(Path(args.write_config).expanduser(), info["config"])
    try:
        print(info["url"], flush=True)
        print("tierclaw config to use it:", json.dumps(info["config"], indent=2), sep="\n", flush=True)
        print("Ctrl-C stops it.", flush=True)
        if args.kind in ("telegram", "feishu"):
            threading.Thread(target=_type_as_user, args=(args.kind, stub), daemon=True).start()
            threading.Thread(target=_print_replies, args=(args.kind, stub, stopped), daemon=True).start()
        stopped.wait()
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
