"""Why a tell was not kept, and why a kept tell was not recalled (issue 35, round 12): the tell mode of
``bench.everyday`` on one set, pair by pair, with the head's scores beside each verdict.

    python -m bench.everyday_misses --data bench/data/everyday_blind9.json [--json] [--show N]

Each pair is said to the offline stand-in and extracted exactly as ``bench.everyday --mode tell`` does
(``TellRun``), then asked in a new chat. Beside it, the keeper's own steps are replayed on the same
embedder (``candidates``, ``Head.fact_verdicts``, ``decide``) so every miss gets one kind:

* ``refused``: no clause left after the rules (a question, too long, code, a secret, too short);
* ``clause``: the best clause's keep score is under the keep threshold while the message's tell score
  reaches the tell threshold (the keep classifier does not see a fact);
* ``message``: the best clause reaches the keep threshold, the message's tell score does not (the chatter
  around the fact pulls it down);
* ``both``: neither reaches its threshold;
* ``weighing``: both reach their thresholds, the combined score still refuses;
* ``stored``: the head kept a clause but no memory appeared or changed (a duplicate, a supersede, the
  buffer).

The kinds compare each score with a threshold of its own, which a head with a combined row does not read;
``held_back_by`` (stop 63) counts, per language, the lost tells that one term of the combined score
(``weighed``: keep, tell, spread, n-gram) would have kept at its median over the kept tells.

For a kept pair not recalled: ``nothing shown`` (the gate or the floor: no memory in the request) or
``other shown`` (memories, not this one: order or ``k``), and whether the kept text is the whole tell.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.database_option import scratch_memory
from bench.embedding_option import attach_embedder
from bench.everyday import TellRun, load_everyday, owner_of
from bench.report import emit_json
from memory.engine import MemoryEngine
from memory.head.latent_terms import message_score
from memory.head.model import Combined, language, load_head, spread
from memory.model.keeper import FactKeeper
from memory.model.quick_extract import candidates, decide, head_verdicts, worded_questions
from memory.text.script import to_simplified
from memory.vectors.embedding import EmbeddingSettings
from memory.vectors.usage import MemoryEmbedder

KINDS = ("refused", "clause", "message", "both", "weighing", "stored")


async def replay(embedder: MemoryEmbedder, text: str) -> dict[str, Any]:
    """The keeper's steps on one message (``FactKeeper.head_inputs``, ``Head.fact_verdicts``): its
    clauses with their keep scores and combined margins, the tell score of each clause's sentence (the
    lowest of the message's as ``tell``), and what ``decide`` keeps (the head only; no store)."""
    simple = to_simplified(text)
    keeper = FactKeeper(embedder)
    worded = worded_questions(simple)  # round 46: those the gate reads as told are judged as statements
    found = candidates(simple, await keeper.told(worded)) if worded else candidates(simple)
    if not found:
        return {"clauses": [], "tell": None, "kept": []}
    head = load_head()
    passages, queries, said = await keeper.head_inputs(found, simple)
    latents = await keeper.message_latents(said)  # round 36: a head that reads them
    message = await keeper.message_query(simple)  # round 13: a head that weighs both
    scores = head.keep_scores(passages, [language(t) for c in found for t in c.texts()])
    lang = language(simple)
    told = head.told(queries, lang)
    whole = head.told(message, lang) if message is not None else told
    rows: list[dict[str, Any]] = []
    for i, candidate in enumerate(found):
        for t in candidate.texts():
            score, lang = float(scores[len(rows)]), language(t)
            comb = head.combined[lang] if head.combined else None
            keep_th = round(head.thresholds[lang].keep, 2)
            row: dict[str, Any] = {"text": t, "keep": round(score, 2), "keep_th": keep_th, "margin": None}
            if comb is not None:
                grams = head.message_grams(lang, said[i] or t) if comb.h else 0.0
                latent = message_score(head.latent_w.get(lang), latents, said[i] or t) if comb.k else 0.0
                told_here = (float(told[i]), float(whole[min(i, len(whole) - 1)]))
                row["terms"] = weighed(comb, score, told_here, spread(t, said[i]), (grams, latent))
                row["margin"] = sum(row["terms"].values()) + comb.c - comb.threshold
            rows.append(row)
    verdicts = head_verdicts(found, passages, queries, message, said=said, latents=latents)
    kept = [f.content for f in decide(found, verdicts)]
    return {
        "clauses": rows,
        "tell": round(float(told.min()), 2),
        "tell_th": round(head.thresholds[lang].tell, 2),
        "kept": kept,
    }


def weighed(
    comb: Combined, keep: float, told: tuple[float, float], share: float, terms: tuple[float, float]
) -> dict[str, float]:
    """What each reading adds to a clause's combined score (``Combined.passes``, before ``c`` and the cut):
    the clause's keep log-odds, the tell log-odds of its sentence and of the message, the spread terms and
    the message's n-gram and latent-term log-odds (``terms``; rounds 22, 36). They show which reading held
    a refused clause back, which the kinds of ``kind_of`` cannot (module docstring); before stop 63 the
    margin left the n-gram term out."""
    own, message = told
    grams, latent = terms
    return {
        "keep": comb.a * keep,
        "tell": comb.g * own + comb.b * message,
        "spread": (comb.d + comb.e * keep + comb.f * message) * share,
        "grams": comb.h * grams,
        "latent": comb.k * latent,
    }


def kind_of(steps: dict[str, Any]) -> str:
    """The kind of a miss (``KINDS``) from ``replay``'s steps."""
    if not steps["clauses"]:
        return "refused"
    if steps["kept"]:
        return "stored"
    best = max(steps["clauses"], key=lambda r: r["keep"] - r["keep_th"])
    clause_ok = best["keep"] >= best["keep_th"]
    message_ok = steps["tell"] >= steps["tell_th"]
    if clause_ok and message_ok:
        return "weighing"
    if clause_ok:
        return "message"
    return "clause" if message_ok else "both"


async def diagnose(data: dict[str, Any], db_path: Path | str) -> list[dict[str, Any]]:
    """One row per pair: kept, recalled, the replayed steps and, for a miss, its kind."""
    engine = await MemoryEngine.open(db_path)
    embedder = attach_embedder(engine, EmbeddingSettings(provider="local"))
    assert embedder is not None
    rows: list[dict[str, Any]] = []
    try:
        await embedder.embed_query("warm up")
        with tempfile.TemporaryDirectory() as workspace:
            run = TellRun(engine, Path(workspace))
            try:
                kept_ids: dict[str, list[int]] = {}
                for pair in data["pairs"]:
                    _, kept_ids[pair["id"]], _ = await run.tell(owner_of(pair), pair["tell"])
                for pair in data["pairs"]:
                    wanted, shown, recalled = await run.ask(owner_of(pair), pair["ask"], kept_ids[pair["id"]])
                    steps = await replay(embedder, pair["tell"])
                    row = {
                        "id": pair["id"],
                        "lang": pair["lang"],
                        "tell": pair["tell"],
                        "ask": pair["ask"],
                        "kept": bool(kept_ids[pair["id"]]),
                        "contents": sorted(wanted),
                        "recalled": recalled,
                        "shown": shown[:3],
                        "steps": steps,
                    }
                    if not row["kept"]:
                        row["miss"] = kind_of(steps)
                    elif not recalled:
                        row["miss"] = "nothing shown" if not shown else "other shown"
                        whole = any(len(c) >= 0.9 * len(pair["tell"]) for c in wanted)
                        row["kept_whole"] = whole
                    rows.append(row)
            finally:
                await run.extraction.close()
    finally:
        await embedder.close()
        await engine.close()
    return rows


def best_clause(steps: dict[str, Any]) -> dict[str, Any]:
    """The clause nearest to being kept (the highest combined margin)."""
    return max(steps["clauses"], key=lambda c: c["margin"])


def held_back_by(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Of one language's tells lost with a clause (a combined head), how many each term alone would have
    kept had it scored its median over the kept tells (the best clause of each): the reading that held
    them back (stop 63: for Chinese the n-gram term, for English the tell term). A tell may count under
    several terms; ``none``: no single term would have."""
    scored = [r for r in rows if r["steps"]["clauses"] and r["steps"]["clauses"][0]["margin"] is not None]
    kept = [best_clause(r["steps"])["terms"] for r in scored if r["kept"]]
    if not kept:
        return {}
    typical = {t: float(np.median([k[t] for k in kept])) for t in kept[0]}
    counts: Counter[str] = Counter()
    for r in scored:
        if r["kept"]:
            continue
        clause = best_clause(r["steps"])
        short = [t for t, v in typical.items() if clause["margin"] + max(v - clause["terms"][t], 0.0) >= 0]
        counts.update(short or ["none"])
    return dict(sorted(counts.items()))


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of the kinds of misses per language (not kept; kept but not recalled)."""
    out: dict[str, Any] = {}
    for lang in sorted({r["lang"] for r in rows}):
        mine = [r for r in rows if r["lang"] == lang]
        lost = Counter(r["miss"] for r in mine if not r["kept"])
        unrecalled = Counter(r["miss"] for r in mine if r["kept"] and not r["recalled"])
        out[lang] = {
            "n": len(mine),
            "kept": sum(r["kept"] for r in mine),
            "recalled": sum(r["recalled"] for r in mine),
            "not_kept": {k: lost[k] for k in KINDS if lost[k]},
            "kept_not_recalled": dict(unrecalled),
            "kept_part_not_recalled": sum(
                1 for r in mine if r["kept"] and not r["recalled"] and not r.get("kept_whole", True)
            ),
            "held_back_by": held_back_by(mine),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.everyday_misses", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="an everyday file (a dev set)")
    parser.add_argument("--show", type=int, default=0, help="print this many misses of each kind")
    parser.add_argument("--rows", help="write every pair's row to this JSON file")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    data = load_everyday(Path(args.data))
    with scratch_memory(None) as target:
        rows = asyncio.run(diagnose(data, target))
    counts = summary(rows)
    print(f"{data.get('name', args.data)}: {json.dumps(counts, ensure_ascii=False)}")
    if args.show:
        shown: dict[str, int] = defaultdict(int)
        for r in rows:
            if "miss" in r and shown[f"{r['lang']}/{r['miss']}"] < args.show:
                shown[f"{r['lang']}/{r['miss']}"] += 1
                print(json.dumps(r, ensure_ascii=False))
    if args.rows:
        Path(args.rows).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.json:
        emit_json(counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
