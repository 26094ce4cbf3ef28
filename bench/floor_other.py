"""The floor for other messages (``memory.relevanceFloor.otherMatch``, ``otherCosine``, ``otherCosineZh``)
calibrated on training data only.

    python -m bench.floor_other [--data ../shared/data] [--lines 40] [--embedding local] [--json]

A message the gate lets through but the head does not read as asking about the person's own life (a
question about the world, chatter, narrative) gets a memory only when it shares enough of its words with it
(``RelevanceFloor.for_message``). How much is "enough" is chosen here on data no evaluation reads: the
written people of the re-ranker (``memory/retrieval/rerank_written.json``: their memories and questions, a
training set of the re-ranker, never of the floor before) and the chit-chat questions of the training halves
of DailyDialog (English) and LCCC (Chinese) — ``--lines`` seeded lines per person, each person's language.
Every question and line goes through the real message path's gate (``Assistant._wants_memory``) and
retrieval without a floor; each share of ``SHARES`` is then applied with ``RelevanceFloor.admits`` to the
same hits. Printed per language: the questions whose memory is still among the first ``k`` admitted, and
the chit-chat lines that got any memory; ``chosen``: the largest share that loses no training question in
either language against the configured floor (bench/README.md, issue 35, "ask35"). Then the same for the
cosine such a message's memory needs (``COSINES``, per language, the configured share kept; chosen: the
least cut with the fewest chit-chat lines shown of those that lose no training question — JSON
``cosines``, ``chosen_cosine``; round 25, memory/retrieval/DATA_CARD_RERANK.md). Then how far above the
median cosine of the query's candidates such a message's memory must stand (``LIFTS``, per language, the
configured share and cosine kept; chosen: the largest lift that loses no training question of the language
— JSON ``lifts``, ``chosen_lift``; round 34, same card).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from bench.conversation_recall import CHANNEL
from bench.embedding_option import add_embedding_args, embedding_settings
from bench.inputs import MissingInputError, note, require_input
from bench.message_path import open_path
from bench.report import emit_json, table
from bench.retrieval_quality import memory_fact
from gateway.app import relevance_floor
from gateway.config import Config
from memory.clock import to_db, utcnow
from memory.head.corpus import chitchat_split
from memory.records import Retrieved
from memory.retrieval.gate import asks, asks_about_themselves
from memory.retrieval.question import memories_wanted
from memory.retrieval.ranking import RelevanceFloor
from memory.retrieval.rerank_written import WRITTEN_FILE

SHARES = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8, 1.01)
# The cosine cut for other messages (round 25), per language, the configured otherMatch kept: 0 leaves
# hybridCosine / hybridCosineZh alone, 1.0 lets no other message in by its cosine.
COSINES = (0.0, 0.86, 0.87, 0.88, 0.89, 0.9, 0.91, 0.92, 0.94, 1.0)
# The stand-out lift a memory of an other message needs (round 34), per language; 0 asks none.
LIFTS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08)
SEED = 20261201
CORPUS = {"en": "dailydialog", "zh": "lccc"}
T = TypeVar("T")


@dataclass(slots=True)
class Line:
    """One message's gate verdict and its unfloored hits (``answer`` None: a chit-chat line)."""

    lang: str
    text: str
    answer: int | None
    personal: bool | None
    hits: list[Retrieved]
    median: float


def _people(root: Path, lines: int) -> list[dict[str, Any]]:
    """Each written person with ``lines`` chit-chat questions of their language's training half."""
    rng = random.Random(SEED)
    chat = {}
    for lang, corpus in CORPUS.items():
        chat[lang] = [t for t in chitchat_split(root, corpus, held_out=False) if asks(t)]
        rng.shuffle(chat[lang])
    people = json.loads(WRITTEN_FILE.read_text(encoding="utf-8"))["people"]
    used = dict.fromkeys(CORPUS, 0)
    for person in people:
        lang = person["lang"]
        person["chat"] = chat[lang][used[lang] : used[lang] + lines]
        used[lang] += lines
    return people


async def collect(root: Path, lines: int, embedding: Any, db: Path) -> list[Line]:
    """Every written question and chit-chat line through the gate, and its hits without a floor."""
    out: list[Line] = []
    told = to_db(utcnow())
    async with open_path(db, embedding, relevance_floor(Config())) as path:
        engine, assistant = path.engine, path.assistant
        for number, person in enumerate(_people(root, lines)):
            owner = f"{CHANNEL}:w{number}"
            memories = [
                {"id": f"{person['id']}-{i}", "content": m, "created_at": told}
                for i, m in enumerate(person["memories"])
            ]
            facts = [memory_fact(m) for m in memories]
            ids = [r.id for r in await engine.write_many(owner, facts)]
            messages = [(q, ids[i]) for q, i in person["asks"]] + [(t, None) for t in person["chat"]]
            projects = await engine.known_projects(owner)
            for text, answer in messages:
                own = None if asks_about_themselves(text) else await assistant._wants_memory(text, projects)
                hits = await engine.retrieve(owner, text, k=200, touch=False, related=bool(own))
                cosines = [h.cosine for h in hits if h.cosine > 0]
                median = statistics.median(cosines) if cosines else 0.0
                out.append(Line(person["lang"], text, answer, own, hits, median))
    return out


def outcome(lines: list[Line], floor: RelevanceFloor) -> dict[str, dict[str, int]]:
    """Per language: questions whose memory is admitted within ``k``, and chit-chat lines given any."""
    result = {lang: {"asks": 0, "recalled": 0, "chat": 0, "shown": 0} for lang in CORPUS}
    for line in lines:
        counts = result[line.lang]
        counts["chat" if line.answer is None else "asks"] += 1
        if line.personal is None:
            continue  # the gate refused it: nothing shown whatever the floor
        mine = floor.for_message(line.personal)
        chinese = line.lang == "zh"
        pool = sum(h.cosine > 0 for h in line.hits)
        admitted = [
            h.id
            for h in line.hits
            if mine.admits(h, hybrid=True, chinese=chinese, pool_median=line.median, pool=pool)
        ]
        if line.answer is None:
            counts["shown"] += bool(admitted)
        else:
            counts["recalled"] += line.answer in admitted[: memories_wanted(line.text, 7)]
    return result


def sweep(lines: list[Line]) -> dict[str, Any]:
    """Each share's outcome, and the largest share that loses no training question. The share and the
    cosine are swept without the lift (chosen before it, round 34), the lift with both as configured."""
    configured = replace(relevance_floor(Config()), other_lift=0.0, other_lift_zh=0.0)
    base = outcome(lines, replace(configured, other_match=0.0))
    rows = {share: outcome(lines, replace(configured, other_match=share)) for share in SHARES}
    kept = [s for s, r in rows.items() if all(r[lang]["recalled"] >= base[lang]["recalled"] for lang in r)]
    result = {"base": base, "shares": {str(s): r for s, r in rows.items()}, "chosen": max(kept, default=0.0)}
    return result | cosine_sweep(lines, configured) | lift_sweep(lines, configured)


def cosine_sweep(lines: list[Line], configured: RelevanceFloor) -> dict[str, Any]:
    """Each language's cosine cut for other messages (``COSINES``, the configured share kept): the
    outcome of each, and the least cut that shows the fewest chit-chat lines of those that lose no
    training question of the language (0: no cut changes what the lines get)."""
    base = outcome(lines, replace(configured, other_cosine=0.0, other_cosine_zh=0.0))
    rows = {c: outcome(lines, replace(configured, other_cosine=c, other_cosine_zh=c)) for c in COSINES}
    chosen = {}
    for lang in CORPUS:
        safe = [c for c, r in rows.items() if r[lang]["recalled"] >= base[lang]["recalled"]]
        fewest = min(rows[c][lang]["shown"] for c in safe)
        chosen[lang] = min(c for c in safe if rows[c][lang]["shown"] == fewest)
    return {"cosines": {str(c): r for c, r in rows.items()}, "chosen_cosine": chosen}


def lift_sweep(lines: list[Line], configured: RelevanceFloor) -> dict[str, Any]:
    """Each language's stand-out lift for other messages' memories (``LIFTS``, the configured share and
    cosine kept): the outcome of each, and the largest that loses no training question of the language."""
    rows = {x: outcome(lines, replace(configured, other_lift=x, other_lift_zh=x)) for x in LIFTS}
    base = rows[0.0]
    chosen = {}
    for lang in CORPUS:
        chosen[lang] = max(x for x, r in rows.items() if r[lang]["recalled"] >= base[lang]["recalled"])
    return {"lifts": {str(x): r for x, r in rows.items()}, "chosen_lift": chosen}


def training_lines(
    args: argparse.Namespace, collect: Callable[..., Coroutine[Any, Any, list[T]]]
) -> list[T] | None:
    """A calibration's messages: ``collect(data, lines, embedding, db)`` on a scratch memory (this bench's
    and ``bench.floor_rescue``'s), or None when the shared data is missing (one line on stderr)."""
    try:
        require_input(Path(args.data) / "chat")  # the corpora's training halves
    except MissingInputError as exc:
        note(str(exc))
        return None
    with tempfile.TemporaryDirectory() as scratch:
        return asyncio.run(
            collect(Path(args.data), args.lines, embedding_settings(args), Path(scratch) / "m.db")
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_other", description=__doc__)
    parser.add_argument("--data", default="../shared/data", help="the public data (chat/ corpora)")
    parser.add_argument("--lines", type=int, default=40, help="chit-chat questions per written person")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_embedding_args(parser)
    args = parser.parse_args(argv)
    if args.embedding == "none":
        parser.error("the other share is a hybrid floor: --embedding local (or openai)")
    lines = training_lines(args, collect)
    if lines is None:
        return 1
    result = sweep(lines)
    rows = [["none", *(result["base"][lang][k] for lang in CORPUS for k in ("recalled", "shown"))]]
    rows += [
        [s, *(r[lang][k] for lang in CORPUS for k in ("recalled", "shown"))]
        for s, r in result["shares"].items()
    ]
    print(
        table(["otherMatch", "en asks recalled", "en chat shown", "zh asks recalled", "zh chat shown"], rows)
    )
    base = result["base"]
    asked = ", ".join(f"{lang} {base[lang]['asks']}" for lang in CORPUS)
    chat = ", ".join(f"{lang} {base[lang]['chat']}" for lang in CORPUS)
    print(f"asks: {asked}; chit-chat lines: {chat}; chosen otherMatch {result['chosen']}")
    rows = [
        [c, *(r[lang][k] for lang in CORPUS for k in ("recalled", "shown"))]
        for c, r in result["cosines"].items()
    ]
    print(
        table(["otherCosine", "en asks recalled", "en chat shown", "zh asks recalled", "zh chat shown"], rows)
    )
    chosen = result["chosen_cosine"]
    print(f"chosen otherCosine / otherCosineZh: {chosen['en']} / {chosen['zh']}")
    lifts = result["lifts"].items()
    rows = [[x, *(r[lang][k] for lang in CORPUS for k in ("recalled", "shown"))] for x, r in lifts]
    print(
        table(["otherLift", "en asks recalled", "en chat shown", "zh asks recalled", "zh chat shown"], rows)
    )
    chosen = result["chosen_lift"]
    print(f"chosen otherLift / otherLiftZh: {chosen['en']} / {chosen['zh']}")
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
