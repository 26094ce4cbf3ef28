"""``python -m bench.streaming [--json]``: how soon a streamed reply is visible, how soon it is whole, what it
costs, and what a crash mid-stream does (issue 34; bench/README.md, "Streaming").

1. The stand-in model (``bench/stub_process.py``, its own process): first token after ``--first-token``
   (0.3 s), ``--tokens-per-second`` (40), replies of about ``--reply-tokens`` (300) tokens of Markdown.
2. A ``tierclaw gateway`` process serving Telegram and Feishu from the local servers in this process
   (``load.py``). Per surface — ``telegram_private`` (drafts), ``telegram_group`` (edited messages),
   ``feishu`` (streaming cards) — ``--chats`` (50) chats at once, ``--rounds`` (2) messages each, one after
   another. Then the same in a new gateway with ``agent.stream`` off: the gateway's CPU per reply, streamed
   against whole.
3. ``terminal``: ``tierclaw chat`` on a pseudo-terminal, ``--terminal-replies`` (6) questions in a row.
4. The crash (``kill.py``): ``--kill-chats`` (10) chats of each surface, SIGKILL mid-stream, a restart.

Per surface: ``first_visible_s`` and ``full_s`` (p50, p95; from the message reaching the platform to the first
words shown / the whole reply shown) — on Telegram split at ``received_s`` (the message reaching the platform
→ a ``getUpdates`` answer carrying it: the local server's thread and the gateway's poll) and
``first_after_received_s`` (→ the first words: the gateway, the model, the server taking the call) —,
``cpu_ms_per_reply`` of the gateway, ``bench_cpu_ms_per_reply`` (this process: the local Telegram and Feishu
servers, the watchers) and ``model_cpu_ms_per_reply`` (the stand-in model's process), ``updates_per_reply``
(times what the person sees changed), ``platform_calls_per_reply`` (HTTP calls the gateway made to the
platform: sends, frames, typing signs, card operations; long polls and token fetches left out),
``rate_limited`` (429s the servers answered; the gateway waits them
out), ``unhandled_errors`` (ERROR lines and tracebacks in the gateway's log during the surface's run, plus
replies that never became whole), ``replies``. Then ``lost`` and ``answered_twice`` over the crash,
``cpu_ms_per_reply`` (streamed, whole, ratio) and the machine's load (the machine is shared: read the figures
beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.replicas.cpu import matching, process_cpu
from bench.report import emit_json, percentile, table
from bench.streaming.kill import kill_trial
from bench.streaming.load import SURFACES, Gateway, Model, Platforms, converse
from bench.streaming.terminal import terminal_replies
from bench.streaming.watch import Reply
from bench.stub_process import stub_server


def _p(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def summary(
    replies: list[Reply], rate_limited: int, errors: int, handed: dict[int, float] | None = None
) -> dict[str, Any]:
    """The surface's figures (see the module doc); ``handed``: when the local Telegram server handed each
    message id to the gateway."""
    whole = [r for r in replies if r.full_at is not None and r.first_at is not None]
    first = [r.first_at - r.sent_at for r in whole if r.first_at is not None]
    full = [r.full_at - r.sent_at for r in whole if r.full_at is not None]
    split: dict[str, Any] = {}
    if handed is not None:
        got = [(r, handed[int(r.incoming)]) for r in whole if int(r.incoming) in handed]
        split["received_s"] = _p([at - r.sent_at for r, at in got])
        split["first_after_received_s"] = _p([r.first_at - at for r, at in got if r.first_at is not None])
    return {
        "first_visible_s": _p(first),
        **split,
        "full_s": _p(full),
        "updates_per_reply": round(sum(r.updates for r in whole) / len(whole), 2) if whole else 0.0,
        "rate_limited": rate_limited,
        "unhandled_errors": errors + len(replies) - len(whole),
        "replies": len(replies),
    }


async def gateway_surfaces(
    model: Model, workdir: Path, args: argparse.Namespace, *, stream: bool
) -> tuple[dict[str, dict[str, Any]], float]:
    """Every surface of one gateway, one after the other; their figures (each with the gateway's CPU ms
    per reply) and the CPU ms per reply over all of them."""
    platforms = Platforms()
    gateway = Gateway(platforms, model, workdir, stream=stream)
    results: dict[str, dict[str, Any]] = {}
    try:
        await gateway.start(platforms)
        await asyncio.gather(  # warm-up (first imports, caches): one chat per surface, not measured
            *(converse(platforms, gateway, surface, range(900 + i, 901 + i), 1, model.reply_tokens)
              for i, surface in enumerate(SURFACES))
        )  # fmt: skip
        spent, answered = 0.0, 0
        for index, surface in enumerate(SURFACES):
            log_at, limited, cpu, others, calls = (
                len(gateway.log_text()),
                sum(platforms.rate_limited().values()),
                gateway.cpu(),
                _others_cpu(),
                platforms.calls(),
            )
            chats = range(1000 * (index + 1), 1000 * (index + 1) + args.chats)
            replies = await converse(platforms, gateway, surface, chats, args.rounds, model.reply_tokens)
            cpu = gateway.cpu() - cpu
            bench_cpu, model_cpu = (end - start for start, end in zip(others, _others_cpu(), strict=True))
            limited = sum(platforms.rate_limited().values()) - limited
            handed = platforms.tg.handed if surface.startswith("telegram") else None
            results[surface] = summary(replies, limited, gateway.errors(log_at), handed)
            whole = max(sum(r.full_at is not None for r in replies), 1)
            results[surface]["cpu_ms_per_reply"] = round(cpu * 1000 / whole, 2)
            results[surface]["bench_cpu_ms_per_reply"] = round(bench_cpu * 1000 / whole, 2)
            results[surface]["model_cpu_ms_per_reply"] = round(model_cpu * 1000 / whole, 2)
            results[surface]["platform_calls_per_reply"] = round((platforms.calls() - calls) / whole, 2)
            whole = sum(r.full_at is not None for r in replies)
            spent, answered = spent + cpu, answered + whole
            print(
                f"[bench] {'streamed' if stream else 'whole'} {surface}: {results[surface]}", file=sys.stderr
            )
    finally:
        gateway.stop()
        await platforms.close()
    return results, spent * 1000 / max(answered, 1)


def _others_cpu() -> tuple[float, float]:
    """CPU seconds so far of this process (the local servers, the watchers) and of the stand-in model's
    (0 where /proc is not there)."""
    model = sum(process_cpu(pid) or 0.0 for pid in matching("bench.stub_process", parent=os.getpid()))
    return process_cpu(os.getpid()) or 0.0, model


async def run(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    pace = ["--first-token", str(args.first_token), "--tokens-per-second", str(args.tokens_per_second)]
    with stub_server("process", "--reply-tokens", str(args.reply_tokens), *pace) as url:
        model = Model(url, args.first_token, args.tokens_per_second, args.reply_tokens)
        with tempfile.TemporaryDirectory(prefix="bench-streaming-") as tmp:
            root = Path(args.workdir or tmp)
            result: dict[str, Any] = {}
            surfaces, streamed_cpu = await gateway_surfaces(model, root / "streamed", args, stream=True)
            result.update(surfaces)
            if args.only == "streamed":
                return {**result, "cpu_ms_per_reply": {"streamed": round(streamed_cpu, 2)}}
            whole, whole_cpu = await gateway_surfaces(model, root / "whole", args, stream=False)
            replies, errors = await asyncio.to_thread(
                terminal_replies, url, root / "terminal", args.terminal_replies, args.reply_tokens
            )
            result["terminal"] = summary(replies, 0, errors)
            platforms = Platforms()
            try:
                crash = await kill_trial(platforms, model, root / "crash", args.kill_chats)
            finally:
                await platforms.close()
    result.update(
        lost=crash["lost"],
        answered_twice=crash["answered_twice"],
        crash=crash,
        cpu_ms_per_reply={
            "streamed": round(streamed_cpu, 2),
            "whole": round(whole_cpu, 2),
            "ratio": round(streamed_cpu / whole_cpu, 2) if whole_cpu else None,
            **{f"whole_{surface}": whole[surface]["cpu_ms_per_reply"] for surface in SURFACES},
        },
        model={"first_token_s": args.first_token, "tokens_per_second": args.tokens_per_second,
               "reply_tokens": args.reply_tokens},
        chats=args.chats,
        rounds=args.rounds,
        machine={"cores": os.cpu_count(), "load_1m_before": round(load_before, 2),
                 "load_1m_after": round(os.getloadavg()[0], 2)},
    )  # fmt: skip
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.streaming",
        description="Streamed replies (issue 34): how soon the first words and the whole reply are visible "
        "per surface, updates and 429s, a kill -9 mid-stream, and the gateway's CPU per reply streamed "
        "against whole. bench/README.md, 'Streaming', says how it measures.",
    )
    parser.add_argument("--json", action="store_true", help="print only one JSON line")
    parser.add_argument("--chats", type=int, default=50, help="chats at once per surface (50)")
    parser.add_argument("--rounds", type=int, default=2, help="messages per chat, one after another (2)")
    parser.add_argument("--first-token", type=float, default=0.3, help="the model's first token, s (0.3)")
    parser.add_argument("--tokens-per-second", type=float, default=40.0, help="the model's pace (40)")
    parser.add_argument("--reply-tokens", type=int, default=300, help="tokens per reply (300)")
    parser.add_argument("--terminal-replies", type=int, default=6, help="questions in the terminal (6)")
    parser.add_argument("--kill-chats", type=int, default=10, help="chats per surface in the crash (10)")
    parser.add_argument("--workdir", help="keep the gateways' databases and logs here (default: a temp dir)")
    parser.add_argument("--only", choices=("streamed", "all"), default="all", help="streamed: skip the rest")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    if not args.json:
        rows = [
            [s, r["first_visible_s"]["p50"], r["first_visible_s"]["p95"], r["full_s"]["p50"],
             r["full_s"]["p95"], r["updates_per_reply"], r["rate_limited"], r["unhandled_errors"]]
            for s, r in ((s, result[s]) for s in (*SURFACES, "terminal"))
        ]  # fmt: skip
        headers = ["surface", "first p50", "first p95", "full p50", "full p95", "updates", "429s", "errors"]
        print(table(headers, rows))
        print(f"crash: {result['crash']}; cpu ms per reply: {result['cpu_ms_per_reply']}")
    emit_json(result)
    return 0
