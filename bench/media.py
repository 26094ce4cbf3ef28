"""Voice notes, photos and files through the real gateway: heard, seen, read, kept, found and sent back.

    python -m bench.media [--json] [--queued 100] [--workdir DIR]

What runs: ``tierclaw gateway`` in a child process, configured as a user would, with Telegram (long polling)
and Feishu (websocket) pointed at the local servers, and the model, the transcriber and the vision
stand-in on the local OpenAI server at zero latency (this process's threads). The data is
``bench/data/media.json``: 72 attachments (36 English, 36 Chinese; photos, voice notes, PDF / DOCX / text
files), every other one through Feishu, each with a paraphrased ask for it back.

1. **Understanding**, one message at a time: each attachment, then a short text message on the same
   channel. ``transcribed`` / ``described`` / ``documents_read``: the share of voice notes whose kept
   transcription is their words, of photos whose description is what they show, of files whose text was
   read. ``overhead_ms``: each media message's round trip (platform in → reply out) minus the median
   text message's on its channel — the download, the transcription or description call and the storage.
2. **Asks**: each ask as a message; the stand-in model calls ``attachment_search`` with it and
   ``attachment_send`` with the top hit. ``attachment_recall``: R@3 of the search per language;
   ``sent_back``: the share of sends whose file reached the platform intact (Telegram by file id — a
   third of the ids are forgotten first, so those are uploaded again —, Feishu uploaded);
   ``sent_back_right``: the share of asks whose file sent is the one asked for (R@1 and the send).
3. **Bad inputs** (issue 33 item 5) on Telegram: ``clear_reply`` counts replies that start with the plain
   sentence for that problem; ``tracebacks`` counts "Traceback" in the gateway's log.
4. **kill -9** with ``--queued`` voice notes waiting in 10 chats: the gateway is killed after the first
   20 replies and started again; ``lost`` (never answered) and ``answered_twice``; ``in_flight_at_kill``:
   the replies whose send intent the killed gateway had recorded and not yet marked answered (read from
   the database before the restart). Telegram's Bot API has no idempotency key and no way to read what a
   bot sent, so a reply that reached Telegram in the instant before the kill, before its mark was
   written, is sent again by the restarted gateway (never lost): ``answered_twice`` can reach
   ``in_flight_at_kill`` and no more (the same window ``bench.replicas`` reports; docs/scale-out.md,
   "Fencing"). The kill comes right after a reply was seen, which is when that window is open.

The machine is shared and has 2 cores: timings move with what else runs (bench/README.md, "Media").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.media_cases import Case, bad_inputs, load_cases, model_server
from bench.replicas.counting import in_flight
from bench.report import emit_json, percentile, table
from bench.stub_process import REPO, child_env
from localservers.feishu_server import FeishuStub, message_event
from localservers.telegram_server import TelegramStub, check_html

READY_S = 60.0
REPLY_S = 60.0
KILLED_REPLICA = "media-killed"  # gateway.replicaId of the process the kill trial kills


def config_for(tg: TelegramStub, feishu: FeishuStub, model_url: str, workdir: Path) -> dict[str, Any]:
    return {
        "provider": {"apiKey": "sk-bench-0000", "baseUrl": model_url, "maxRetries": 0, "timeoutSeconds": 10},
        "agent": {"model": "bench-model", "workspace": str(workdir / "ws")},
        "memory": {"dbPath": str(workdir / "memory.db"), "embedding": {"provider": "none"}},
        "media": {"attempts": 2, "transcription": {"timeoutSeconds": 1}},
        "channels": {
            "telegram": {"enabled": True, "token": tg.token, "baseUrl": tg.base_url, "allowFrom": ["*"]},
            "feishu": {
                "enabled": True,
                "appId": "cli_bench_media",
                "appSecret": "bench",
                "domain": feishu.domain,
                "allowFrom": ["*"],
            },
        },
        "timezone": "UTC",
    }


class Platforms:
    """The two local platform servers, and how one message's reply is waited for."""

    def __init__(self, tg: TelegramStub, feishu: FeishuStub) -> None:
        self.tg, self.feishu = tg, feishu

    def replies(self, channel: str) -> list[tuple[str, float, str]]:
        """(replied-to message id, when, text) of every reply sent on ``channel``."""
        if channel == "telegram":
            out = []
            for call in self.tg.sent():
                target = call.json("reply_parameters") or {}
                out.append((str(target.get("message_id", "")), call.at, check_html(call.params["text"])[0]))
            return out
        return [(sent.target, sent.at, sent.text) for sent in list(self.feishu.sent) if sent.kind == "reply"]

    async def send(self, channel: str, case: Case | None, text: str = "") -> tuple[str, float]:
        """Put one message in (a case's file, or ``text``); its message id and when."""
        if channel == "telegram":
            if case is None:
                message = self.tg.message(text)
            else:
                kind = "document" if case.kind == "document" else case.kind
                message = self.tg.files.message(
                    self.tg, kind, case.data, caption=case.caption or None, mime=case.mime, name=case.name
                )
                case.file_key = (message[kind][-1] if kind == "photo" else message[kind])["file_id"]
            at = time.monotonic()
            return str(self.tg.push(message)), at
        kinds = {"photo": "image", "voice": "audio", "document": "file"}
        event = (
            message_event(text)
            if case is None
            else self.feishu.media.event(kinds[case.kind], case.data, name=case.name, text=case.caption)
        )
        at = time.monotonic()
        await self.feishu.push_event(event)
        return str(event["event"]["message"]["message_id"]), at

    async def reply_to(self, channel: str, message_id: str, after: float) -> tuple[float, str]:
        """The first reply to ``message_id``: (seconds from ``after``, its text)."""
        deadline = time.monotonic() + REPLY_S
        while time.monotonic() < deadline:
            for target, at, text in self.replies(channel):
                if target == message_id:
                    return at - after, text
            await asyncio.sleep(0.002)
        raise TimeoutError(f"no reply to {channel} message {message_id}")


async def understanding(platforms: Platforms, cases: list[Case]) -> dict[str, Any]:
    """Phase 1: each attachment, then a text; the round trips."""
    media_ms: list[tuple[Case, float]] = []
    text_ms: dict[str, list[float]] = {"telegram": [], "feishu": []}
    for case in cases:
        case.message_id, at = await platforms.send(case.channel, case)
        seconds, _ = await platforms.reply_to(case.channel, case.message_id, at)
        media_ms.append((case, seconds * 1000))
        text_id, at = await platforms.send(case.channel, None, "谢谢" if case.lang == "zh" else "thanks")
        seconds, _ = await platforms.reply_to(case.channel, text_id, at)
        text_ms[case.channel].append(seconds * 1000)
    base = {channel: percentile(values, 50) for channel, values in text_ms.items()}
    overhead = [ms - base[case.channel] for case, ms in media_ms]
    by_kind = {
        kind: round(percentile([ms - base[c.channel] for c, ms in media_ms if c.kind == kind], 95), 1)
        for kind in ("photo", "voice", "document")
    }
    return {
        "overhead_ms": {"p50": round(percentile(overhead, 50), 1), "p95": round(percentile(overhead, 95), 1)},
        "overhead_p95_ms_by_kind": by_kind,
        "text_round_trip_ms": {c: round(v, 1) for c, v in base.items()},
    }


async def asks(platforms: Platforms, cases: list[Case]) -> None:
    """Phase 2: every ask, one at a time (a third of Telegram's file ids forgotten first: uploads)."""
    for index, case in enumerate(c for c in cases if c.channel == "telegram"):
        if index % 3 == 0:
            platforms.tg.files.forget(case.file_key)
    for case in (c for c in cases if c.ask):
        message_id, at = await platforms.send(case.channel, None, case.ask)
        await platforms.reply_to(case.channel, message_id, at)


async def bad(platforms: Platforms, model: Any, limit: int) -> dict[str, int]:
    """Phase 3: each bad input on Telegram; a reply that starts with the plain sentence counts."""
    from localservers.openai_server import StubReply

    tried = clear = 0
    for item in bad_inputs(limit):
        if item.refuse:
            model.audio.refuse.add(hashlib.sha256(item.data).hexdigest())
        if item.slow:
            model.audio.script(StubReply(delay=2.5), StubReply(delay=2.5))
        message = platforms.tg.files.message(
            platforms.tg,
            item.kind,
            item.data,
            mime=item.mime,
            name=item.file_name,
            size=item.size,
            sender=platforms.tg.user(77, first_name="Eve"),  # a new chat: English from the start
        )
        at = time.monotonic()
        message_id = str(platforms.tg.push(message))
        _, text = await platforms.reply_to("telegram", message_id, at)
        tried += 1
        clear += int(text.startswith(item.expected))
    return {"tried": tried, "clear_reply": clear}


def scores(cases: list[Case], rows: list[dict[str, Any]], tools: Any, platforms: Platforms) -> dict[str, Any]:
    """What the kept rows and the sends say about each case."""
    by_message = {(r["channel"], r["message_id"]): r for r in rows if r["direction"] == "in"}
    row_of = {c.id: by_message.get((c.channel, c.message_id)) for c in cases}

    def share(kind: str, ok: Any) -> float:
        group = [c for c in cases if c.kind == kind]
        return round(
            sum(1 for c in group if (row := row_of[c.id]) is not None and ok(c, row)) / len(group), 3
        )

    recall = {}
    asked = [c for c in cases if c.ask]
    for lang in ("en", "zh"):
        group = [c for c in asked if c.lang == lang]
        hits = sum(
            1
            for c in group
            if (row := row_of[c.id]) is not None and row["id"] in tools.found.get(c.ask, [])[:3]
        )
        recall[lang] = round(hits / len(group), 3)
    missed = [
        c.id for c in asked if not ((row := row_of[c.id]) is not None and tools.sends.get(c.ask) == row["id"])
    ]
    intact, sends = _sent_files(platforms, cases)
    right = len(asked) - len(missed)
    return {
        "transcribed": share("voice", lambda c, r: r["transcription"] == c.content),
        "described": share("photo", lambda c, r: r["description"] == c.content),
        "documents_read": share(
            "document", lambda c, r: " ".join(c.content.split()) in " ".join(r["extracted_text"].split())
        ),
        "attachment_recall": recall,
        "sent_back": round(intact / sends, 3) if sends else 0.0,
        "sent_back_right": round(right / len(asked), 3),
        "sends": sends,
        "missed_at_1": missed,
    }


def _sent_files(platforms: Platforms, cases: list[Case]) -> tuple[int, int]:
    """(files that reached the platform intact — a known file id or bytes equal to a case's —, files sent)."""
    digests = {c.digest for c in cases}
    keys = {c.file_key for c in cases}
    telegram = [s for s in platforms.tg.files.sent]
    ok = sum(
        1
        for s in telegram
        if (s.file.file_id in keys and not s.uploaded) or hashlib.sha256(s.file.data).hexdigest() in digests
    )
    feishu = list(platforms.feishu.media.uploads)
    ok += sum(1 for u in feishu if hashlib.sha256(u.data).hexdigest() in digests)
    return ok, len(telegram) + len(feishu)


async def kill_and_restart(
    platforms: Platforms, config_path: Path, workdir: Path, queued: int
) -> dict[str, Any]:
    """Phase 4: ``queued`` voice notes in 10 chats, kill -9 after 20 replies, start again, count."""
    from localservers.sample_media import speech_wav

    tg = platforms.tg
    before = len(tg.sent())
    ids = []
    for n in range(queued):
        sender = tg.user(2000 + n % 10)
        ids.append(str(tg.push(tg.files.message(tg, "voice", speech_wav(f"queued note {n}"), sender=sender))))
    config = json.loads(config_path.read_text())
    killed = {**config, "gateway": {**config.get("gateway", {}), "replicaId": KILLED_REPLICA}}
    with gateway_process(killed, workdir, name="gateway-killed") as proc:
        await _wait(lambda: len(tg.sent()) - before >= 20, "20 replies before the kill")
        proc.kill()
        proc.wait()
    answered_before = len(tg.sent()) - before
    flying = await in_flight(config["memory"]["dbPath"], KILLED_REPLICA)
    started = time.monotonic()
    with gateway_process(config, workdir, name="gateway-restarted"):
        await _wait(lambda: all(t in _targets(tg) for t in ids), "every queued note answered", 180)
        recovered = time.monotonic() - started
    counts = Counter(t for t in _targets(tg) if t in set(ids))
    return {
        "lost": sum(1 for t in ids if counts[t] == 0),
        "answered_twice": sum(1 for t in ids if counts[t] > 1),
        "in_flight_at_kill": flying,
        "kill": {
            "queued": queued,
            "answered_before_kill": answered_before,
            "seconds_to_all": round(recovered, 1),
        },
    }


def _targets(tg: TelegramStub) -> list[str]:
    return [str((c.json("reply_parameters") or {}).get("message_id", "")) for c in tg.sent()]


async def _wait(check: Any, what: str, timeout: float = READY_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


@contextlib.contextmanager
def gateway_process(
    config: dict[str, Any], workdir: Path, name: str = "gateway"
) -> Iterator[subprocess.Popen]:
    """``tierclaw gateway --config <file>`` in a child process (log: ``<name>.log``); SIGTERM at the end."""
    path = workdir / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    log = (workdir / f"{name}.log").open("w", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "gateway", "--config", str(path)],
        cwd=REPO,
        env={**child_env(), "HOME": str(workdir)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


async def kept_rows(db: Path) -> list[dict[str, Any]]:
    """Every kept attachment of the two senders (read after the gateway stopped)."""
    import dataclasses

    from memory.engine import MemoryEngine

    engine = await MemoryEngine.open(db, create=False, warm_text=False)
    try:
        rows = []
        for owner in ("telegram:42", "feishu:ou_alice"):
            rows += [dataclasses.asdict(r) for r in await engine.attachments.list(owner, limit=10_000)]
        return rows
    finally:
        await engine.close()


async def run(queued: int, workdir: Path, holdout: bool = False) -> dict[str, Any]:
    cases = load_cases(holdout=holdout)
    model, tools = model_server({c.ask for c in cases if c.ask})
    tg, feishu = TelegramStub().start(), FeishuStub().start()
    platforms = Platforms(tg, feishu)
    try:
        config = config_for(tg, feishu, model.base_url, workdir)
        with gateway_process(config, workdir):
            await _wait(
                lambda: bool(feishu.open_connections()) and bool(tg.requests("getUpdates")), "the gateway"
            )
            timing = await understanding(platforms, cases)
            await asks(platforms, cases)
            bad_result = await bad(platforms, model, 20 * 1024 * 1024)
        rows = await kept_rows(workdir / "memory.db")
        result = {**scores(cases, rows, tools, platforms), **timing}
        logs = (workdir / "gateway.log").read_text(encoding="utf-8", errors="replace")
        result["bad_inputs"] = {**bad_result, "tracebacks": logs.count("Traceback")}
        killed = await kill_and_restart(platforms, workdir / "config.json", workdir, queued)
        for name in ("gateway-killed.log", "gateway-restarted.log"):
            result["bad_inputs"]["tracebacks"] += (
                (workdir / name).read_text(errors="replace").count("Traceback")
            )
        result.update(killed)
        result["n"] = len(cases)
        result["asks"] = "holdout" if holdout else "dev"
        result["asked"] = sum(1 for c in cases if c.ask)
        result["n_by_kind"] = dict(Counter(c.kind for c in cases))
        return result
    finally:
        tg.stop()
        feishu.stop()
        model.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.media", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON line at the end")
    parser.add_argument("--queued", type=int, default=100, help="voice notes waiting at the kill -9 (100)")
    parser.add_argument("--workdir", type=Path, help="keep the config, logs and database here")
    parser.add_argument(
        "--holdout", action="store_true", help="ask with the second asks of bench/data/media_holdout.json"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-media-") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        result = asyncio.run(run(args.queued, workdir, args.holdout))
    rows = [
        ("transcribed", result["transcribed"]),
        ("described", result["described"]),
        ("documents_read", result["documents_read"]),
        ("recall@3 en / zh", f"{result['attachment_recall']['en']} / {result['attachment_recall']['zh']}"),
        ("sent_back (right file)", f"{result['sent_back']} ({result['sent_back_right']})"),
        ("overhead ms p50 / p95", f"{result['overhead_ms']['p50']} / {result['overhead_ms']['p95']}"),
        (
            "bad inputs clear / tried, tracebacks",
            "{clear_reply} / {tried}, {tracebacks}".format(**result["bad_inputs"]),
        ),
        (
            "kill -9: lost, answered twice (in flight at the kill)",
            f"{result['lost']}, {result['answered_twice']} ({result['in_flight_at_kill']})",
        ),
    ]
    print(table(("measure", "value"), rows))
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
