"""The loop a person lives: tell the assistant things, later ask — is the answer in the model's request?

    python -m bench.conversation_recall --data FILE --chitchat FILE.jsonl [--embedding none|local]
        [--per-owner N] [--top-k K] [--sweep] [--per-question FILE] [--json]

``--data`` is the retrieval-benchmark format (``python -m bench.datasets``; for LoCoMo use
``--first-person``: people ask their own assistant "what did I…"). Each owner's memories go in through
the real write path; each query is then sent as that owner's message through the real message path
(``gateway.assistant.Assistant.handle``: identity, gate, retrieval, relevance floor, prompt building) with
a main model that only records the request it receives.

* ``recall``: share of queries whose model request contains the content of at least one relevant memory;
  ``by_kind`` the same per query kind.
* ``--chitchat``: JSON lines ``{"text", "lang"}`` (lines with ``"needs_memory": true`` are skipped, so the
  gate set of ``bench.datasets gate`` works as is). Up to ``--per-owner`` lines in the owner's language
  (Chinese when most of their memories are) are sent the same way. ``chitchat_injection_rate``: share of
  those whose request got any retrieved memory (the profile in the system prompt does not count);
  ``mean_injected_chars``: the memory block's mean length over them.
* ``p95_ms``: the message path without the model (``Assistant.memory_timing``), over every message.
* ``--per-question FILE``: one JSON line per message sent (``owner``, ``id``, ``kind``, ``text``,
  ``recalled``, ``injected``, ``relevant`` ids, the memories the owner's own messages had added by then,
  ``kept_so_far``, and the ``hits`` the request carried: id, content, score, match, cosine), so that two
  runs (e.g. two heads) can be compared question by question.
* ``--sweep``: runs once without a floor and prints recall and chit-chat injection for a grid of floors
  (how the defaults in ``memory.retrieval.ranking.RelevanceFloor`` were chosen).

JSON keys: ``recall``, ``n``, ``by_kind``, ``chitchat_injection_rate``, ``chitchat_n``,
``mean_injected_chars``, ``p95_ms`` (and ``floor``, ``embedding``, ``top_k``, ``memories``, ``load_s``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.database_option import add_database_option, scratch_memory, store_name
from bench.dataset_format import load_dataset, read_jsonl
from bench.embedding_option import add_embedding_args, embedding_settings
from bench.message_path import default_top_k, open_path
from bench.report import emit_json, percentile, require_file, table
from bench.retrieval_quality import memory_fact
from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.app import relevance_floor
from gateway.config import Config
from memory.engine import MemoryEngine
from memory.records import Retrieved
from memory.retrieval.ranking import NO_FLOOR, RelevanceFloor
from memory.text.tokenizer import is_mostly_chinese
from memory.vectors.embedding import EmbeddingSettings

CHANNEL = "bench"
DEFAULT_PER_OWNER = 50
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# The grid --sweep prints (keyword match floors; hybrid match and cosine floors).
SWEEP_MATCH = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
SWEEP_COSINE = (0.75, 0.8, 0.82, 0.84, 0.85, 0.86, 0.865, 0.87, 0.875, 0.88, 1.01)


@dataclass(slots=True)
class Sent:
    """One message sent through the path and what its model request carried."""

    kind: str  # the query kind, or "chitchat"
    relevant_contents: list[str]  # empty for chit-chat
    request: ChatRequest
    hits: list[Retrieved] = field(default_factory=list)
    chinese: bool = False
    owner: str = ""  # the owner's number in the file ("o0", …): with ``ident``, names the message
    ident: str = ""  # the query's id, or "chitchat-<n>" for the n-th chit-chat line of the owner
    text: str = ""
    relevant_ids: list[str] = field(default_factory=list)
    kept_so_far: int = 0  # memories the owner's own messages had added by the time this one was answered

    def recalled(self) -> bool:
        carried = self.request.memory_block + "\n" + self.request.system
        return any(content in carried for content in self.relevant_contents)


def is_chinese(texts: list[str]) -> bool:
    """Whether most of ``texts`` are Chinese (the owner's language, for picking chit-chat lines)."""
    return sum(1 for t in texts if _HAN.search(t)) * 2 > len(texts)


async def run(
    data: dict[str, Any],
    chitchat: list[dict[str, Any]],
    db_path: str | Path,
    embedding: EmbeddingSettings | None,
    *,
    per_owner: int,
    floor: RelevanceFloor,
    top_k: int | None = None,
    track: bool = False,
) -> tuple[list[Sent], list[float], float]:
    """Load every owner's memories, send their queries and chit-chat; returns what was sent, the
    message-path times (ms) and the load time (s). ``top_k``: memory.topK (default: the config's);
    ``track``: count, after each message, the memories the owner's own messages have added
    (``Sent.kept_so_far``; off by default, it costs a count query per message)."""
    sent: list[Sent] = []
    load_s = 0.0
    async with open_path(db_path, embedding, floor, top_k) as path:
        engine, assistant, model = path.engine, path.assistant, path.model
        for number, block in enumerate(data["owners"]):
            sender = f"o{number}"
            owner = f"{CHANNEL}:{sender}"
            facts = [memory_fact(m) for m in block["memories"]]
            t0 = time.perf_counter()
            results = await engine.write_many(owner, facts)
            load_s += time.perf_counter() - t0
            content_of: dict[str, str] = {}
            for fact, result in zip(facts, results, strict=True):
                stored = await engine.get(owner, result.id)
                if stored is not None and not stored.is_archived:
                    content_of[str(fact.source_ref)] = stored.content
            zh = is_chinese([m["content"] for m in block["memories"]])
            lines = [c for c in chitchat if c.get("lang") == ("zh" if zh else "en")][:per_owner]
            messages = [(q["text"], q["kind"], q["relevant"], str(q["id"])) for q in block["queries"]]
            messages += [(c["text"], "chitchat", [], f"chitchat-{n}") for n, c in enumerate(lines)]
            loaded = await _live(engine, owner) if track else 0
            for index, (text, kind, relevant, ident) in enumerate(messages):
                before = len(model.requests)
                await assistant.handle(
                    InboundMessage(
                        channel=CHANNEL,
                        chat_id=sender,
                        sender_id=sender,
                        text=text,
                        message_id=str(index),
                    )
                )
                # The recalled memories' access marks are written in the background; the next message
                # waits for them, so whether they landed first is not a race and two runs agree.
                await engine.touches.flush()
                # An extraction the message made due runs before the next message, as it would before a
                # person's next one: without this, whether its memories are there was a race (stop 54:
                # two runs of LoCoMo differed by a question).
                if assistant.extraction is not None:
                    await assistant.extraction.settle()
                if len(model.requests) == before:
                    continue  # a line the path does not answer (e.g. a command): not a measurement
                request = model.requests[-1]
                contents = [content_of[r] for r in relevant if r in content_of]
                kept = await _live(engine, owner) - loaded if track else 0
                hits = list(request.memories)
                chinese = is_mostly_chinese(text)
                sent.append(
                    Sent(kind, contents, request, hits, chinese, sender, ident, text, list(relevant), kept)
                )
        times_ms = list(assistant.memory_timing.samples_ms)
    return sent, times_ms, load_s


async def _live(engine: MemoryEngine, owner: str) -> int:
    """The owner's live memories (profile and tier 2)."""
    counts = await engine.stats(owner)
    return counts["tier1"] + counts["tier2"]


def per_question(sent: list[Sent]) -> list[dict[str, Any]]:
    """One row per message sent (``--per-question``): which owner and query, recalled or not, what the
    request carried (the hits, best first)."""
    return [
        {
            "owner": s.owner,
            "id": s.ident,
            "kind": s.kind,
            "text": s.text,
            "recalled": s.recalled() if s.kind != "chitchat" else None,
            "injected": bool(s.request.memories),
            "relevant": s.relevant_ids,
            "kept_so_far": s.kept_so_far,
            "hits": [
                {
                    "id": h.id,
                    "content": h.content,
                    "score": round(h.score, 4),
                    "match": round(h.match, 4),
                    "cosine": round(h.cosine, 4),
                }
                for h in s.hits
            ],
        }
        for s in sent
    ]


def summarise(sent: list[Sent]) -> dict[str, Any]:
    """recall (overall and by kind) over the queries; injection rate and size over the chit-chat."""
    queries = [s for s in sent if s.kind != "chitchat"]
    chat = [s for s in sent if s.kind == "chitchat"]
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for s in queries:
        by_kind[s.kind].append(s.recalled())
    recalled = [s.recalled() for s in queries]
    return {
        "recall": sum(recalled) / len(recalled) if recalled else 0.0,
        "n": len(queries),
        "by_kind": {k: {"recall": sum(v) / len(v), "n": len(v)} for k, v in sorted(by_kind.items())},
        "chitchat_injection_rate": sum(bool(s.request.memories) for s in chat) / len(chat) if chat else 0.0,
        "chitchat_n": len(chat),
        "mean_injected_chars": sum(len(s.request.memory_block) for s in chat) / len(chat) if chat else 0.0,
    }


def sweep(sent: list[Sent], hybrid: bool) -> list[list[Any]]:
    """Recall and chit-chat injection if a floor had been applied to the unfloored hits (rows of a table).

    An estimate: a real floor is applied before the top k, so it may let a lower-ranked hit in.
    """
    rows: list[list[Any]] = []
    queries = [s for s in sent if s.kind != "chitchat"]
    chat = [s for s in sent if s.kind == "chitchat"]
    grid = [(m, c) for m in SWEEP_MATCH for c in SWEEP_COSINE] if hybrid else [(m, 1.01) for m in SWEEP_MATCH]
    for match, cosine in grid:
        floor = RelevanceFloor(match, match, cosine, match, cosine)

        def admitted(s: Sent, floor: RelevanceFloor = floor) -> list[Retrieved]:
            return [h for h in s.hits if floor.admits(h, hybrid=hybrid, chinese=s.chinese)]

        recall = sum(any(h.content in s.relevant_contents for h in admitted(s)) for s in queries)
        injected = sum(bool(admitted(s)) for s in chat)
        rows.append(
            [match, cosine if hybrid else "-", recall / max(len(queries), 1), injected / max(len(chat), 1)]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.conversation_recall", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="a benchmark file made by python -m bench.datasets")
    parser.add_argument("--chitchat", required=True, help='JSON lines {"text", "lang"} (e.g. the gate set)')
    parser.add_argument("--per-owner", type=int, default=DEFAULT_PER_OWNER, help="chit-chat lines per owner")
    parser.add_argument("--sweep", action="store_true", help="no floor; print recall/injection per floor")
    parser.add_argument(
        "--top-k", type=int, default=None, help="memories a question gets (default: memory.topK's default)"
    )
    parser.add_argument(
        "--per-question",
        metavar="FILE",
        default=None,
        help="write one JSON line per message sent (id, kind, recalled, hits) to FILE",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_embedding_args(parser)
    add_database_option(parser)
    args = parser.parse_args(argv)
    if args.per_owner < 0:
        parser.error("--per-owner must be 0 or more")
    if args.top_k is not None and args.top_k < 1:
        parser.error("--top-k must be 1 or more")
    data = load_dataset(require_file(args.data, "benchmark file"))
    chitchat = [
        r for r in read_jsonl(require_file(args.chitchat, "chit-chat file")) if not r.get("needs_memory")
    ]
    try:
        settings = embedding_settings(args)
    except ValueError as exc:
        parser.error(str(exc))
    embedding = settings if args.embedding != "none" else None
    floor = NO_FLOOR if args.sweep else relevance_floor(Config())  # the product's defaults
    with scratch_memory(args.database) as target:
        sent, times_ms, load_s = asyncio.run(
            run(
                data,
                chitchat,
                target,
                embedding,
                per_owner=args.per_owner,
                floor=floor,
                top_k=args.top_k,
                track=args.per_question is not None,
            )
        )
    if args.per_question is not None:
        each = per_question(sent)
        Path(args.per_question).write_text(
            "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in each),
            encoding="utf-8",
        )
    result = summarise(sent)
    result["p95_ms"] = percentile(times_ms, 95) if times_ms else 0.0
    print(
        f"{data['name']}: {sum(len(b['memories']) for b in data['owners'])} memories, {result['n']} queries, "
        f"{result['chitchat_n']} chit-chat lines; embedding {args.embedding}; "
        f"floor {'none (sweep)' if args.sweep else floor}"
    )
    rows = [["all", result["recall"], result["n"]]]
    rows += [[f"  {kind}", b["recall"], b["n"]] for kind, b in result["by_kind"].items()]
    print(table(["queries", "recall", "n"], rows))
    print(
        f"chit-chat injection {result['chitchat_injection_rate']:.3f} "
        f"(mean {result['mean_injected_chars']:.0f} chars); message path p95 {result['p95_ms']:.1f} ms"
    )
    if args.sweep:
        print()
        print(
            table(
                ["match floor", "cosine floor", "recall", "chit-chat injection"],
                sweep(sent, embedding is not None),
            )
        )
    if args.json:
        result["floor"] = {
            "keyword_match": floor.keyword_match,
            "hybrid_match": floor.hybrid_match,
            "hybrid_cosine": floor.hybrid_cosine,
        }
        result["embedding"] = args.embedding
        result["top_k"] = args.top_k if args.top_k is not None else default_top_k()
        result["store"] = store_name(args.database)
        result["memories"] = sum(len(b["memories"]) for b in data["owners"])
        result["load_s"] = round(load_s, 3)
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
