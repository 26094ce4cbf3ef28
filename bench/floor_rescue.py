"""The rescue of a message the gate refused (``memory.relevanceFloor.rescueLift``, ``rescueLiftZh``,
``rescueGap``) calibrated on training data only.

    python -m bench.floor_rescue [--data ../shared/data] [--lines 80] [--embedding local] [--json]

The head refuses some questions about the person's own life (issue 35: Chinese asks typed fast or in
dialect most of all); the reply path then still injects the one memory nearest to the message when it
stands ``rescueLift`` above the median of the person's memories and ``rescueGap`` above the next one
(``RelevanceFloor.rescues``, ``OwnerVectors.stand_out``). How far is "far enough" is chosen here on data no
evaluation reads: the written people of the re-ranker (``memory/retrieval/rerank_written.json``: their
memories and questions) and ``--lines`` seeded lines per person of the training halves of DailyDialog
(English) and LCCC (Chinese), in each person's language — every line, not only questions, since a refused
message may be anything.

Two crowds, since how far the nearest memory stands out depends on how many there are: each person alone
(~20 memories) and each language's people as one person (~170). Every question and line goes through the
real message path's gate (``Assistant._wants_memory`` and the rules of ``should_retrieve``); for each
message the nearest memory and its lift and gap are kept. For each cut of ``LIFTS`` × ``GAPS``, per language
and crowd: the questions whose own memory the cut would admit first (all questions, as if refused: the
cut's precision on questions, whatever the head said), those the head did refuse, questions given another
memory, and the chit-chat lines the head refused that would get a memory — the corpora's lines and the
head's written chatter (``memory/head/written.json``: its not-kept lines and questions about the world, in
chat registers, sharing words with everyday life as the corpora's lines seldom do) and chit-chat written near
each written person's memories (``memory/retrieval/rescue_written.json``: opinions, questions about the
world, requests near their topics, not about their lives — the hard case). ``chosen``: per language
the least lift whose chit-chat lines given a memory stay within ``CHAT_SHARE`` of each source's lines in
both crowds, with the one
gap of ``GAPS`` that admits the most questions' own memories over both languages (JSON ``chosen``:
{"gap", "en", "zh"}; a lift of 0: no cut within the share — the rescue stays off).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.conversation_recall import CHANNEL
from bench.embedding_option import add_embedding_args
from bench.floor_other import training_lines
from bench.message_path import open_path
from bench.report import emit_json, table
from bench.retrieval_quality import memory_fact
from gateway.app import relevance_floor
from gateway.config import Config
from memory.clock import to_db, utcnow
from memory.head.corpus import chitchat_split, written, written_examples
from memory.retrieval.gate import asks_about_themselves, should_retrieve
from memory.retrieval.rerank_written import WRITTEN_FILE
from memory.vectors.index import StandOut

LIFTS = (0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.14)
GAPS = (0.0, 0.01, 0.02, 0.03)
# The share of chit-chat lines the rescue may give a memory: a fifth of issue 35's bar for all chit-chat
# injection (0.05), the rest being the gate's and the floor's.
CHAT_SHARE = 0.01
CROWDS = ("person", "pooled")
SOURCES = ("corpus", "written", "near")
# Chit-chat written near each written person's memories (their topics, not their lives): training data.
NEAR_FILE = WRITTEN_FILE.with_name("rescue_written.json")
SEED = 20261202
CORPUS = {"en": "dailydialog", "zh": "lccc"}


@dataclass(slots=True)
class Line:
    """One message in one crowd: its language, its answer (None: a chit-chat line), whether the gate
    refused it (and no rule did), and its nearest memory."""

    crowd: str
    lang: str
    source: str  # "asks", or the chit-chat's: "corpus" (LCCC / DailyDialog), "written" (the head's), "near"
    answer: int | None
    refused: bool
    stand: StandOut | None


def _people(root: Path, lines: int) -> list[dict[str, Any]]:
    """Each written person with ``lines`` lines of their language's chit-chat training half
    (``corpus``), their share of the head's written chatter (``written``) and the chit-chat written near
    their memories (``near``)."""
    rng = random.Random(SEED)
    corpus_lines, chatter = {}, {}
    for lang, corpus in CORPUS.items():
        corpus_lines[lang] = chitchat_split(root, corpus, held_out=False)
        rng.shuffle(corpus_lines[lang])
        chatter[lang] = [e.text for e in written_examples(written()) if e.lang == lang and e.asks == "other"]
    people = json.loads(WRITTEN_FILE.read_text(encoding="utf-8"))["people"]
    near = json.loads(NEAR_FILE.read_text(encoding="utf-8"))["people"]
    used = dict.fromkeys(CORPUS, 0)
    for person in people:
        lang = person["lang"]
        person["near"] = near[person["id"]]
        person["corpus"] = corpus_lines[lang][used[lang] : used[lang] + lines]
        used[lang] += lines
    for lang in CORPUS:  # the written chatter dealt out like cards
        mine = [p for p in people if p["lang"] == lang]
        for n, person in enumerate(mine):
            person["written"] = chatter[lang][n :: len(mine)]
    return people


def _crowds(people: list[dict[str, Any]]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(crowd, owner name, the people whose memories and messages it holds): each person alone, then
    each language's people as one."""
    alone = [("person", f"p{n}", [person]) for n, person in enumerate(people)]
    pooled = [("pooled", f"all-{lang}", [p for p in people if p["lang"] == lang]) for lang in CORPUS]
    return alone + pooled


async def collect(root: Path, lines: int, embedding: Any, db: Path) -> list[Line]:
    """Every written question and chit-chat line of every crowd through the gate, and its nearest memory."""
    out: list[Line] = []
    told = to_db(utcnow())
    async with open_path(db, embedding, relevance_floor(Config())) as path:
        engine, assistant = path.engine, path.assistant
        for crowd, name, members in _crowds(_people(root, lines)):
            owner = f"{CHANNEL}:{name}"
            messages: list[tuple[str, str, str, int | None]] = []
            for person in members:
                memories = [
                    {"id": f"{person['id']}-{i}", "content": m, "created_at": told}
                    for i, m in enumerate(person["memories"])
                ]
                ids = [r.id for r in await engine.write_many(owner, [memory_fact(m) for m in memories])]
                lang = person["lang"]
                messages += [(lang, "asks", q, ids[i]) for q, i in person["asks"]]
                messages += [(lang, part, t, None) for part in SOURCES for t in person[part]]
            projects = await engine.known_projects(owner)
            for lang, source, text, answer in messages:
                ruled_out = asks_about_themselves(text) or not should_retrieve(text, projects, learned=True)
                refused = not ruled_out and await assistant._wants_memory(text, projects) is None
                stand = await engine.stand_out(owner, text)
                out.append(Line(crowd, lang, source, answer, refused, stand))
    return out


def outcome(lines: list[Line], lift: float, gap: float) -> dict[str, dict[str, dict[str, int]]]:
    """Per crowd and language: questions, those whose own memory the cut admits (``own``; ``refused_own``
    of those the gate refused), those given another memory (``other``), and each source's chit-chat lines
    with the refused ones given a memory (``corpus_shown``, ``written_shown``, ``near_shown``)."""
    keys = ("asks", "own", "refused_own", "other", *SOURCES, *(f"{s}_shown" for s in SOURCES))
    result = {c: {lang: dict.fromkeys(keys, 0) for lang in CORPUS} for c in CROWDS}
    for line in lines:
        counts = result[line.crowd][line.lang]
        stand = line.stand
        admitted = stand is not None and stand.lift >= lift and stand.gap >= gap
        if line.answer is None:
            counts[line.source] += 1
            counts[f"{line.source}_shown"] += admitted and line.refused
            continue
        counts["asks"] += 1
        right = admitted and stand is not None and stand.memory_id == line.answer
        counts["own"] += right
        counts["refused_own"] += right and line.refused
        counts["other"] += admitted and not right
    return result


def sweep(lines: list[Line]) -> dict[str, Any]:
    """Every cut's outcome, and the chosen cut (module docstring)."""
    cuts = {(lift, gap): outcome(lines, lift, gap) for gap in GAPS for lift in LIFTS}
    best: dict[str, Any] = {"gap": 0.0, "en": 0.0, "zh": 0.0}
    best_own = -1
    for gap in GAPS:
        chosen = {lang: _least_lift(cuts, gap, lang) for lang in CORPUS}
        own = sum(
            cuts[(lift, gap)][crowd][lang]["own"]
            for lang, lift in chosen.items()
            if lift > 0
            for crowd in CROWDS
        )
        if own > best_own:
            best, best_own = {"gap": gap, **chosen}, own
    rows = {f"{lift}/{gap}": result for (lift, gap), result in cuts.items()}
    return {"cuts": rows, "chosen": best, "chat_share": CHAT_SHARE}


def _least_lift(cuts: dict[tuple[float, float], Any], gap: float, lang: str) -> float:
    """The least lift at ``gap`` whose refused chit-chat lines given a memory stay within the share of
    each source's lines in every crowd (0.0: none does)."""
    for lift in LIFTS:
        crowds = [cuts[(lift, gap)][crowd][lang] for crowd in CROWDS]
        if all(c[f"{s}_shown"] <= CHAT_SHARE * c[s] for c in crowds for s in SOURCES):
            return lift
    return 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_rescue", description=__doc__)
    parser.add_argument("--data", default="../shared/data", help="the public data (chat/ corpora)")
    parser.add_argument("--lines", type=int, default=80, help="chit-chat lines per written person")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_embedding_args(parser)
    args = parser.parse_args(argv)
    if args.embedding == "none":
        parser.error("the rescue measures vectors: --embedding local (or openai)")
    lines = training_lines(args, collect)
    if lines is None:
        return 1
    result = sweep(lines)
    columns = ("own", "refused_own", "other", *(f"{s}_shown" for s in SOURCES))
    for crowd in CROWDS:
        cuts = result["cuts"].items()
        rows = [[cut, *(r[crowd][lang][k] for lang in CORPUS for k in columns)] for cut, r in cuts]
        headers = ["lift/gap", *(f"{lang} {k.replace('_shown', '')}" for lang in CORPUS for k in columns)]
        first = next(iter(result["cuts"].values()))[crowd]
        counts = "; ".join(
            f"{g} {first[g]['asks']} asks, " + " + ".join(str(first[g][s]) for s in SOURCES) + " lines"
            for g in CORPUS
        )
        print(f"crowd {crowd}: {counts}")
        print(table(headers, rows))
    chosen = result["chosen"]
    print(f"chosen rescueLift / rescueLiftZh / rescueGap: {chosen['en']} / {chosen['zh']} / {chosen['gap']}")
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
