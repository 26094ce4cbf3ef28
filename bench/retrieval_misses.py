"""Why an everyday question missed its fact, or did not show it first (issue 35: diagnose before fixing).

    python -m bench.retrieval_misses --data bench/data/everyday_dev.json [--embedding local|none] [--json]

Every ``ask`` of the set goes through the real message path as ``bench.everyday --mode ask`` sends it; each
one that misses its fact, or shows another memory first, is then looked at again, step by step, without
the floor, the cut to ``k`` or the re-ranker:

* ``gate``: the gate refused the message (no retrieval; the rescue took no memory, or not the answer);
  the row holds what the rescue read (``lift``, ``gap``, ``nearest``: that memory is the answer,
  counted as ``gate_nearest``) and ``gate_margin``, the head's log-odds less its cut (round 35);
* ``not_candidate``: the fact is not among the ranked candidates (no keyword match, no vector hit above
  ``ranking.DENSE_MIN_COSINE`` among the ``DENSE_CANDIDATES`` nearest);
* ``floor``: a candidate the relevance floor refused (``other_lift``: a message not read as an own-life
  question, whose fact the floor's share or cosine let in but which did not stand ``otherLift`` above the
  query's candidates; round 34);
* ``k``: admitted, but ranked below the ``k`` the question gets;
* ``budget``: among the top ``k`` but left out of the memory block;
* ``order`` (top-1 only): shown, but another memory first — ``reranked`` says whether the fusion had it
  first and the re-ranker moved it; ``no_signal`` that neither the fact's cosine nor its keyword match
  is above the memory shown first's (no positive weighting of the two can put it first: counted as
  ``order_no_signal``; bench/README.md, issue 35, "rank13").

For each, the fact's keyword match share, cosine, vector rank among all of the person's memories, and
the first memory shown. Prints a table of counts per kind and language, and the misses themselves.

Then each person's chit-chat lines of the set (after their questions, as ``bench.everyday`` sends them):
one that got a memory is put down to the rule of the relevance floor that admitted its first admitted
memory (``RelevanceFloor.admits``) — ``match`` (the keyword share), ``cosine`` (the absolute cosine cut)
or ``lift`` (a cosine standing out of the pool, own-life questions only), or ``rescue`` (the gate refused
it; its nearest memory stood far out, ``RelevanceFloor.rescues``), or ``named`` (the gate refused it; it names
someone its memories name, ``MemoryEngine.recall_named``, round 44) — and whether the gate read it as an
own-life question (``personal``). JSON ``chitchat_counts`` per language: ``n``, ``shown``, and of those
``personal`` and each rule; ``chitchat_rows`` the lines that got memories.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.conversation_recall import CHANNEL
from bench.database_option import add_database_option, scratch_memory
from bench.embedding_option import add_embedding_args, embedding_settings
from bench.everyday import as_dataset, load_everyday
from bench.message_path import open_path
from bench.report import emit_json, table
from bench.retrieval_quality import memory_fact
from channels.base import InboundMessage
from gateway.app import relevance_floor
from gateway.assistant import Assistant
from gateway.config import Config
from memory.engine import MemoryEngine
from memory.head.verdict import gate_margin
from memory.model.keeper import head_usable
from memory.records import Retrieved
from memory.retrieval import rerank
from memory.retrieval.gate import asks_about_themselves
from memory.retrieval.question import memories_wanted
from memory.retrieval.ranking import RelevanceFloor
from memory.text.names import person_names
from memory.text.tokenizer import is_mostly_chinese
from memory.vectors.embedding import EmbeddingSettings

# Counts beside the kinds of miss: order misses the re-ranker made or no signal can undo, gate misses whose
# nearest memory is the answer (what a rescue could reach).
EXTRA_COUNTS = ("reranked_away", "order_no_signal", "gate_nearest")
CHAT_COLUMNS = ("n", "shown", "personal", "match", "cosine", "lift", "rescue", "named")
ALL = 200  # "every candidate": more than any person of the sets has memories


def _place(hits: list[Retrieved], memory_id: int) -> int | None:
    return next((i for i, h in enumerate(hits, start=1) if h.id == memory_id), None)


async def _unfloored_and_admitted(
    engine: MemoryEngine, assistant: Assistant, owner: str, text: str, personal: bool | None
) -> tuple[list[Retrieved], list[Retrieved]]:
    """Every candidate of ``text`` without the floor, and those the message's floor admits; fused order,
    the re-ranker off (so a step's loss is the step's)."""
    floor = assistant.settings.floor.for_message(bool(personal))
    enabled = rerank.ENABLED
    rerank.ENABLED = False
    try:
        every = await engine.retrieve(owner, text, k=ALL, touch=False, related=bool(personal))
        admitted = await engine.retrieve(owner, text, k=ALL, touch=False, floor=floor, related=bool(personal))
    finally:
        rerank.ENABLED = enabled
    return every, admitted


async def _diagnose(
    engine: MemoryEngine,
    assistant: Assistant,
    owner: str,
    text: str,
    answer_id: int,
    shown: list[str],
    first: bool,
) -> dict[str, Any]:
    """The step at which the fact was lost (or put second), and its signals."""
    projects = await engine.known_projects(owner)
    personal = None if asks_about_themselves(text) else await assistant._wants_memory(text, projects)
    out: dict[str, Any] = {"personal": personal}
    k = memories_wanted(text, assistant.settings.top_k)
    every, admitted = await _unfloored_and_admitted(engine, assistant, owner, text, personal)
    fused = _place(every, answer_id)
    hit = next((h for h in every if h.id == answer_id), None)
    out.update(fused_rank=fused, admitted_rank=_place(admitted, answer_id), k=k, n_candidates=len(every))
    out["top_k"] = [[h.content, round(h.match, 4), round(h.cosine, 4), h.score] for h in admitted[:k]]
    if hit is not None:
        out.update(match=round(hit.match, 3), cosine=round(hit.cosine, 3))
        cosines = [h.cosine for h in every if h.cosine > 0]
        out["pool_median"] = round(float(np.median(cosines)), 3) if cosines else None
    embedder = engine.embedding.embedder
    if embedder is not None:
        vectors = await engine.vectors.cache.get(owner, embedder.model_key)
        query = await engine.embedding.query(text)
        if query is not None and len(vectors.ids):
            cos = vectors.matrix @ np.asarray(query, dtype=np.float32)
            order = vectors.ids[np.argsort(-cos)]
            where = np.nonzero(order == answer_id)[0]
            out["dense_rank"] = int(where[0]) + 1 if len(where) else None
            out["answer_cosine"] = round(float(cos[vectors.ids == answer_id][0]), 3) if len(where) else None
            out["best_cosine"] = round(float(cos.max()), 3)
    if first:
        pass
    elif personal is None:
        out["why"] = "gate"
        out.update(await _refused_signals(engine, owner, text, answer_id))
    elif fused is None:
        out["why"] = "not_candidate"
    elif out["admitted_rank"] is None:
        out["why"] = "other_lift" if _lift_alone_refused(assistant, hit, text, personal, every) else "floor"
    elif out["admitted_rank"] > k:
        out["why"] = "k"
    elif not shown or hit is None or hit.content not in shown:
        out["why"] = "budget"
    else:
        out["why"] = "order"
        out["reranked"] = out["admitted_rank"] == 1
        shown_first = next((h for h in every if h.content == shown[0]), None)
        if shown_first is not None:
            out["no_signal"] = shown_first.cosine >= hit.cosine and shown_first.match >= hit.match
    out["first_shown"] = shown[0] if shown else None
    return out


async def _refused_signals(engine: MemoryEngine, owner: str, text: str, answer_id: int) -> dict[str, Any]:
    """What a rescue of a refused question reads (``RelevanceFloor.rescues``): its nearest memory's ``lift``
    and ``gap``, whether that memory is the answer, and ``gate_margin`` (the head's log-odds less its cut:
    how near the gate came to letting it in; only for the vectors the head reads). Empty without vectors."""
    out: dict[str, Any] = {}
    stand = await engine.stand_out(owner, text)
    if stand is not None:
        out.update(lift=round(stand.lift, 3), gap=round(stand.gap, 3), nearest=stand.memory_id == answer_id)
    margin = await gate_margin(engine.embedding, text) if head_usable(engine.embedder) else None
    if margin is not None:
        out["gate_margin"] = round(margin, 2)
    return out


def _lift_alone_refused(
    assistant: Assistant, hit: Retrieved | None, text: str, personal: bool | None, every: list[Retrieved]
) -> bool:
    """Whether only ``otherLift`` kept ``hit`` out: an other message's floor without it lets the hit in."""
    if hit is None or personal is not False:
        return False
    cosines = [h.cosine for h in every if h.cosine > 0]
    median = float(np.median(cosines)) if cosines else 0.0
    floor = assistant.settings.floor.for_message(False)
    unlifted = replace(floor, other_lift=0.0, other_lift_zh=0.0)
    chinese = is_mostly_chinese(text)
    return unlifted.admits(hit, hybrid=True, chinese=chinese, pool_median=median) and not floor.admits(
        hit, hybrid=True, chinese=chinese, pool_median=median, pool=len(cosines)
    )


def _admitting_rule(floor: RelevanceFloor, hit: Retrieved, chinese: bool, median: float, hybrid: bool) -> str:
    """The first rule of ``RelevanceFloor.admits`` that lets ``hit`` through (keyword-only: the match)."""
    if not hybrid or hit.match >= floor.hybrid_match:
        return "match"
    if hit.cosine >= (floor.hybrid_cosine_zh if chinese else floor.hybrid_cosine):
        return "cosine"
    return "lift" if floor.admits(hit, hybrid=True, chinese=chinese, pool_median=median) else "none"


async def _chitchat_row(engine: MemoryEngine, assistant: Assistant, owner: str, text: str) -> dict[str, Any]:
    """Why a chit-chat line got memories: the gate's reading and the floor's rule for its first one."""
    projects = await engine.known_projects(owner)
    personal = await assistant._wants_memory(text, projects)
    chinese = is_mostly_chinese(text)
    row: dict[str, Any] = {"chitchat": text, "personal": personal, "zh": chinese}
    if personal is None:  # the gate refused it: only the rescue gives it a memory (``Assistant._rescue``)
        names = person_names(text)
        k = memories_wanted(text, assistant.settings.top_k)
        if names and await engine.recall_named(
            owner, text, names, k=k, floor=assistant.settings.floor, touch=False
        ):
            row["rule"] = "named"  # its first way: memories that name whom the line names
            return row | {"names": list(names)}
        stand = await engine.stand_out(owner, text)
        row["rule"] = "rescue"
        return row | ({"lift": round(stand.lift, 3), "gap": round(stand.gap, 3)} if stand else {})
    floor = assistant.settings.floor.for_message(bool(personal))
    every, admitted = await _unfloored_and_admitted(engine, assistant, owner, text, personal)
    cosines = [h.cosine for h in every if h.cosine > 0]
    median = float(np.median(cosines)) if cosines else 0.0
    first = admitted[0] if admitted else None
    if first is not None:
        hybrid = engine.embedding.embedder is not None
        row.update(rule=_admitting_rule(floor, first, chinese, median, hybrid), first=first.content)
        row.update(match=round(first.match, 3), cosine=round(first.cosine, 3), pool_median=round(median, 3))
    return row


async def run(data: dict[str, Any], db_path: Path | str, embedding: EmbeddingSettings | None) -> list[dict]:
    """Every ask of the set through the message path; each miss or second place diagnosed; then each
    person's chit-chat lines (rows with ``chitchat``)."""
    rows: list[dict] = []
    async with open_path(db_path, embedding, relevance_floor(Config())) as path:
        engine, assistant, model = path.engine, path.assistant, path.model
        for number, block in enumerate(as_dataset(data)["owners"]):
            sender = f"o{number}"
            owner = f"{CHANNEL}:{sender}"
            facts = [memory_fact(m) for m in block["memories"]]
            results = await engine.write_many(owner, facts)
            id_of = {str(f.source_ref): r.id for f, r in zip(facts, results, strict=True)}
            content_of = {m["id"]: m["content"] for m in block["memories"]}
            for index, query in enumerate(block["queries"]):
                before = len(model.requests)
                message = InboundMessage(
                    channel=CHANNEL,
                    chat_id=sender,
                    sender_id=sender,
                    text=query["text"],
                    message_id=str(index),
                )
                await assistant.handle(message)
                await engine.touches.flush()
                if len(model.requests) == before:
                    continue
                request = model.requests[-1]
                shown = [m.content for m in request.memories]
                answer = query["relevant"][0]
                carried = request.memory_block + "\n" + request.system
                recalled = content_of[answer] in carried
                top1 = bool(shown) and shown[0] == content_of[answer]
                row = {"kind": query["kind"], "ask": query["text"], "tell": content_of[answer]}
                row.update(recalled=recalled, top1=top1, zh=is_mostly_chinese(query["text"]))
                row.update(
                    await _diagnose(engine, assistant, owner, query["text"], id_of[answer], shown, top1)
                )
                rows.append(row)
            lang = block["queries"][0]["kind"].split("/", 1)[0] if block["queries"] else ""
            lines = [c["text"] for c in data.get("chitchat", []) if c["lang"] == lang]
            for index, text in enumerate(lines):
                before = len(model.requests)
                message = InboundMessage(
                    channel=CHANNEL, chat_id=sender, sender_id=sender, text=text, message_id=f"c{index}"
                )
                await assistant.handle(message)
                await engine.touches.flush()
                got = len(model.requests) > before and bool(model.requests[-1].memories)
                line: dict[str, Any] = {"lang": lang, "shown": got}
                if got:
                    line.update(await _chitchat_row(engine, assistant, owner, text))
                rows.append(line)
    return rows


def _chitchat_counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for lang in ("en", "zh"):
        mine = [r for r in rows if r.get("lang") == lang]
        shown = [r for r in mine if r["shown"]]
        counts = Counter(r.get("rule", "none") for r in shown)
        counts.update(n=len(mine), shown=len(shown), personal=sum(1 for r in shown if r.get("personal")))
        out[lang] = dict(counts)
    return out


def _counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for lang in ("en", "zh"):
        mine = [r for r in rows if r.get("kind", "").startswith(lang + "/")]
        kinds = Counter(r.get("why", "top1") for r in mine)
        kinds["n"] = len(mine)
        kinds["reranked_away"] = sum(1 for r in mine if r.get("reranked"))
        kinds["order_no_signal"] = sum(1 for r in mine if r.get("no_signal"))
        kinds["gate_nearest"] = sum(1 for r in mine if r.get("why") == "gate" and r.get("nearest"))
        out[lang] = dict(kinds)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_misses", description=__doc__)
    parser.add_argument("--data", required=True, help="an everyday file (bench/data/everyday*.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_embedding_args(parser)
    add_database_option(parser)
    args = parser.parse_args(argv)
    data = load_everyday(Path(args.data))
    embedding = embedding_settings(args) if args.embedding != "none" else None
    with scratch_memory(args.database) as db_path:
        rows = asyncio.run(run(data, db_path, embedding))
    counts = _counts(rows)
    kinds = ("top1", "order", "budget", "k", "floor", "other_lift", "not_candidate", "gate")
    print(
        table(
            ["lang", "n", *kinds, *EXTRA_COUNTS],
            [
                [lang, c.get("n", 0), *(c.get(k, 0) for k in (*kinds, *EXTRA_COUNTS))]
                for lang, c in counts.items()
            ],
        )
    )
    chat = _chitchat_counts(rows)
    print(
        table(
            ["chit-chat", *CHAT_COLUMNS],
            [[lang, *(c.get(k, 0) for k in CHAT_COLUMNS)] for lang, c in chat.items()],
        )
    )
    for r in rows:
        if "why" in r:
            signals = {
                k: r.get(k)
                for k in (
                    "fused_rank",
                    "admitted_rank",
                    "k",
                    "match",
                    "cosine",
                    "pool_median",
                    "dense_rank",
                    "answer_cosine",
                    "best_cosine",
                    "personal",
                    "lift",
                    "gap",
                    "nearest",
                    "gate_margin",
                )
            }
            print(f"\n[{r['why']}{'*' if r.get('reranked') else ''}] {r['kind']} ask: {r['ask']}")
            print(f"  tell: {r['tell']}\n  first shown: {r.get('first_shown')}\n  {signals}")
    if args.json:
        asks = [r for r in rows if "kind" in r]
        chitchat_rows = [r for r in rows if r.get("shown")]
        emit_json({"counts": counts, "rows": asks, "chitchat_counts": chat, "chitchat_rows": chitchat_rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
