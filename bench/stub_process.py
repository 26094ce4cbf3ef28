"""The local OpenAI-compatible stub (localservers/openai_server.py) as a benchmark's model server: in a child
process (``python -m bench.stub_process [--delay S] [--notes]``, the default) or a thread of the benchmark,
and the environment that lets ``python -m bench…`` children import the repository from any directory.

``--delay`` makes every chat reply take that long (a real model's latency; bench/replicas.py); ``--notes``
makes the memory model extract one fact per ``note:WORD`` in what it is given, so a trial can count
duplicate memories (bench/replicas.py). ``--reply-tokens N`` answers every chat with a Markdown reply of
about N tokens (``bench/streaming/reply_text.py``), streamed at ``--tokens-per-second`` after
``--first-token`` seconds — and, asked without streaming, whole after as long as the stream would take
(bench/streaming)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from localservers.openai_server import OpenAIStub, StubReply, default_reply, is_json_request
from localservers.openai_sse import StreamPace

REPO = Path(__file__).resolve().parent.parent


NOTE_RE = re.compile(r"\bnote:(\w+)")


def model_responder(delay: float, notes: bool) -> Callable[[dict], StubReply]:
    """Chat replies after ``delay`` seconds; with ``notes``, extraction gives one fact per ``note:WORD``."""

    def respond(body: dict) -> StubReply:
        reply = default_reply(body)
        if not is_json_request(body):
            return StubReply(content=reply.content, delay=delay)
        if not notes:
            return reply
        words = sorted(set(NOTE_RE.findall(json.dumps(body.get("messages") or [], ensure_ascii=False))))
        facts = [{"content": f"Noted {w}", "category": "event", "importance": 0.5} for w in words]
        return StubReply(content=json.dumps({"facts": facts, "summary": ""}))

    return respond


def long_replies(pace: StreamPace, tokens: int) -> Callable[[dict], StubReply]:
    """Chat replies of about ``tokens`` tokens from the last user line; the memory model's as usual."""
    from bench.streaming.reply_text import reply_for

    whole_after = pace.first_token_s + tokens / (pace.tokens_per_second or float("inf"))

    def respond(body: dict) -> StubReply:
        reply = default_reply(body)
        if is_json_request(body):
            return reply
        seed = (reply.content or "").removeprefix("stub reply: ")
        return StubReply(content=reply_for(seed, tokens), delay=0.0 if body.get("stream") else whole_after)

    return respond


def serve_stub(argv: list[str] | None = None) -> int:
    """Run the stub, print its base URL, serve until stdin closes (the child process of ``stub_server``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.stub_process")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each chat reply")
    parser.add_argument("--notes", action="store_true", help="extract one fact per 'note:WORD'")
    parser.add_argument("--reply-tokens", type=int, default=0, help="chat replies of about N tokens")
    parser.add_argument("--first-token", type=float, default=0.0, help="seconds before a reply's first token")
    parser.add_argument("--tokens-per-second", type=float, default=None, help="how fast a reply streams")
    args = parser.parse_args(argv)
    pace = StreamPace(args.first_token, args.tokens_per_second)
    responder = (
        long_replies(pace, args.reply_tokens)
        if args.reply_tokens
        else model_responder(args.delay, args.notes)
    )
    stub = OpenAIStub(responder=responder, pace=pace).start()
    try:
        print(stub.base_url, flush=True)
        sys.stdin.read()
    finally:
        stub.stop()
    return 0


@contextlib.contextmanager
def stub_server(where: str, *options: str) -> Iterator[str]:
    """The stub's base URL, served from a child process (default; ``options`` are ``serve_stub``'s) or a
    thread of this process (plain ``OpenAIStub()``).

    In a child process the stub's own CPU work (HTTP parsing, JSON) does not compete with the gateway
    for this interpreter's GIL, as a remote model server would not; in a thread it does, adding the same
    cost to both modes' messages (measured here: about the same ratio, lower rates).
    """
    if where == "thread":
        with OpenAIStub() as stub:
            yield stub.base_url
        return
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.stub_process", *options],
        cwd=REPO,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the stub process did not start (exit {proc.poll()})")
        yield url
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def child_env() -> dict[str, str]:
    """This environment with the repository first on PYTHONPATH (``-m bench…`` from any cwd)."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": str(REPO) + (os.pathsep + path if path else "")}


if __name__ == "__main__":
    raise SystemExit(serve_stub())
