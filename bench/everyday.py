"""The everyday loop: a person says something once, days later asks for it in their own words.

    python -m bench.everyday [--data bench/data/everyday.json] [--mode ask|tell] [--embedding none|local]
        [--json]

The data (``bench/data/everyday.json``, written for this project, and its held-out twin
``everyday_holdout.json``): ``{"name", "pairs": [{"id", "lang", "kind", "tell", "ask", "owner"?}],
"chitchat": [{"lang", "text"}]}``. Pairs without ``owner`` belong to one person per language, so a
question has to find its fact among all of that person's facts.

* ``--mode ask``: every ``tell`` is written through the engine's clean-write path, then every ``ask`` and
  every chit-chat line of the owner's language goes through the real message path (the same driver as
  ``bench.conversation_recall``: identity, gate, retrieval, relevance rule, prompt) with a model that
  records its request. ``recall``: the request carries the fact; ``top1``: it is the first memory shown;
  ``chitchat_injection``: share of chit-chat lines whose request got any memory.
* ``--mode tell``: what ``tierclaw chat`` does without an API key. Each ``tell`` is said to the assistant
  with the offline stand-in as the main model and the offline memory model, and extracted (a flush, as
  ``/quit`` does); the memories that appeared or changed are that pair's kept facts. Then, in a new chat,
  every ``ask`` and chit-chat line is sent. ``kept``: share of pairs with a kept fact; ``kept_fading``:
  kept pairs filed in a fading category (event, conversation, temp, debug: they fade to 10 % or less,
  ``memory.retrieval.decay``), ``kept_slow_decay`` those filed where they fade slowly to 30 % (decision,
  solution: where plans and goals go); ``false_acknowledged``:
  statements the stand-in acknowledged although nothing was kept; ``chitchat_acknowledged``: chit-chat
  lines it acknowledged; ``recall``/``top1`` as above, over all pairs (a fact not kept is a miss).

JSON keys: ``recall``, ``top1``, ``kept``, ``kept_fading``, ``false_acknowledged``, ``chitchat_injection``,
``chitchat_acknowledged``, ``by_lang``, ``by_kind``, ``n`` (``kept*``/``*acknowledged`` are null in ask
mode), plus ``kept_slow_decay``, ``mode``, ``embedding``, ``store``, ``chitchat_n``, ``p95_ms``; and, for
a set whose pairs name their forms (``tell_form``, ``ask_form``: blind14 on), ``by_tell_form`` and
``by_ask_form`` (keys ``<lang>/<form>``, each with recall, top1, kept, n).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.conversation_recall import run as run_message_path
from bench.database_option import add_database_option, scratch_memory, store_name
from bench.embedding_option import add_embedding_args, attach_embedder, embedding_settings
from bench.everyday_measures import (
    CORPORA,
    category_accuracy,
    corpus_lines,
    false_keeps,
    head_load_ms,
    load_categories,
)
from bench.report import emit_json, percentile, require_file, table
from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.app import relevance_floor
from gateway.assistant import Assistant, AssistantSettings
from gateway.config import Config
from gateway.offline_chat import OfflineChatModel
from memory.clock import to_db, utcnow
from memory.engine import MemoryEngine
from memory.model.keeper import FactKeeper
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.retrieval.decay import FAST_DECAY, MEDIUM_DECAY, SLOW_DECAY
from memory.sessions import SessionStore
from memory.vectors.embedding import EmbeddingSettings

DEFAULT_DATA = Path(__file__).parent / "data" / "everyday.json"
# The stand-in's acknowledgement, old wording and new ("Noted." / "已记下。", "I'll remember: …"
# / "记住了：…").
ACKNOWLEDGEMENT = re.compile(r"\bNoted\.|\bI'll remember\b|\bI will remember\b|已记下|记住了", re.I)
# Facts are asked about days after they were said.
TOLD_DAYS_AGO = 7
TELL_CHANNEL = "console"  # as `tierclaw chat`: the offline notice is printed at start, not in replies


def load_everyday(path: Path) -> dict[str, Any]:
    """The everyday file, checked: every pair has id, lang, kind, tell and ask; ids are unique."""
    data = json.loads(require_file(path, "everyday file").read_text(encoding="utf-8"))
    seen: set[str] = set()
    for pair in data.get("pairs", []):
        missing = [k for k in ("id", "lang", "kind", "tell", "ask") if not pair.get(k)]
        if missing:
            raise ValueError(f"pair {pair.get('id', '?')} lacks {', '.join(missing)}")
        if pair["id"] in seen:
            raise ValueError(f"pair id {pair['id']} appears twice")
        seen.add(pair["id"])
    if not seen:
        raise ValueError(f"{path} has no pairs")
    return data


def owner_of(pair: dict[str, Any]) -> str:
    """The person a pair belongs to: its ``owner``, else one person per language."""
    return str(pair.get("owner") or pair["lang"])


def as_dataset(data: dict[str, Any]) -> dict[str, Any]:
    """The pairs in the generic retrieval-benchmark format (bench/README.md), one block per owner; each
    query's kind is ``lang/kind`` so the results can be split both ways."""
    told = to_db(utcnow() - timedelta(days=TOLD_DAYS_AGO))
    blocks: dict[str, dict[str, Any]] = {}
    for pair in data["pairs"]:
        block = blocks.setdefault(owner_of(pair), {"owner": owner_of(pair), "memories": [], "queries": []})
        block["memories"].append({"id": pair["id"], "content": pair["tell"], "created_at": told})
        block["queries"].append(
            {"id": f"q:{pair['id']}", "text": pair["ask"], "relevant": [pair["id"]], "kind": _key(pair)}
        )
    return {"name": data.get("name", "everyday"), "owners": list(blocks.values())}


def _key(pair: dict[str, Any]) -> str:
    return f"{pair['lang']}/{pair['kind']}"


@dataclass(slots=True)
class Extras:
    """What is measured beside the pairs (``bench/everyday_measures.py``)."""

    corpora: list[dict[str, str]] = field(default_factory=list)
    categories: list[dict[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class Outcome:
    """One message's measurement: a question (``kind`` = lang/kind) or a chit-chat line."""

    lang: str
    kind: str  # "chitchat" for chit-chat
    recalled: bool = False
    top1: bool = False
    injected: bool = False  # chit-chat: the request got memories
    kept: bool | None = None  # tell mode
    fading: bool = False  # filed where it fades to 10 % or less (event, conversation, temp, debug)
    categories: tuple[str, ...] = ()  # tell mode: the categories its kept facts were filed in
    expected: str | None = None  # the pair's labelled category, when the set has one
    slow: bool = False  # filed where it fades slowly, to 30 % (decision, solution: plans, goals)
    acknowledged: bool | None = None  # tell mode: the stand-in's reply to the statement / chit-chat
    times_ms: list[float] = field(default_factory=list)
    forms: tuple[str, str] = ("", "")  # the pair's tell_form and ask_form, when the set names them


def forms_of(pair: dict[str, Any] | None) -> tuple[str, str]:
    """A pair's form of telling and of asking (blind14 on), so misses can be split by form."""
    return (str(pair.get("tell_form") or ""), str(pair.get("ask_form") or "")) if pair else ("", "")


async def run_ask(
    data: dict[str, Any], db_path: Path | str, embedding: EmbeddingSettings | None, extras: Extras
) -> tuple[list[Outcome], list[float], dict[str, Any]]:
    """Ask mode through ``bench.conversation_recall``'s driver (the real message path); the chit-chat
    corpora's lines, when given, follow the set's own chit-chat lines of their language."""
    chitchat = data.get("chitchat", []) + extras.corpora
    sent, times_ms, _ = await run_message_path(
        as_dataset(data),
        chitchat,
        db_path,
        embedding,
        per_owner=len(chitchat),
        floor=relevance_floor(Config()),
    )
    outcomes: list[Outcome] = []
    pairs = {f"q:{pair['id']}": pair for pair in data["pairs"]}
    own_lines = {lang: sum(1 for c in data.get("chitchat", []) if c["lang"] == lang) for lang in ("en", "zh")}
    seen = {"en": 0, "zh": 0}
    owner_lang = ""  # the driver sends each person's questions, then chit-chat of that person's language
    for s in sent:
        if s.kind == "chitchat":
            # the line's language is its person's ("emo了", mostly Latin letters, is a Chinese line)
            lang = owner_lang or ("zh" if s.chinese else "en")
            seen[lang] += 1
            kind = "chitchat" if seen[lang] <= own_lines[lang] else "corpus"
            outcomes.append(Outcome(lang, kind, injected=bool(s.request.memories)))
            continue
        lang, kind = s.kind.split("/", 1)
        owner_lang = lang
        first = s.request.memories[0].content if s.request.memories else None
        outcome = Outcome(lang, kind, s.recalled(), first in s.relevant_contents)
        outcome.forms = forms_of(pairs.get(s.ident))
        outcomes.append(outcome)
    extra: dict[str, Any] = {}
    corpus = [o for o in outcomes if o.kind == "corpus"]
    for source, lang in CORPORA:
        mine = [o.injected for o in corpus if o.lang == lang]
        if mine:
            extra.setdefault("corpora_injection", {})[source] = {
                "injection": sum(mine) / len(mine),
                "n": len(mine),
            }
    return [o for o in outcomes if o.kind != "corpus"], times_ms, extra


class RecordingStandIn(OfflineChatModel):
    """The offline stand-in, unchanged, keeping the memories of the last request it answered."""

    def __init__(self, keeper: FactKeeper | None = None) -> None:
        super().__init__(keeper)
        self.shown: list[str] = []
        self.system = ""

    async def reply(self, request: ChatRequest) -> str:
        self.shown = [m.content for m in request.memories]
        self.system = request.system  # the profile (tier 1) a real model would also see
        return await super().reply(request)


class TellRun:
    """Tell mode: the assistant of ``tierclaw chat`` with the offline stand-in, on a fresh database."""

    def __init__(self, engine: MemoryEngine, workspace: Path) -> None:
        self.engine = engine
        # One keeper for the stand-in and the memory model, on the engine's embedder, as the gateway does.
        self.keeper = FactKeeper(engine.embedder)
        self.model = RecordingStandIn(self.keeper)
        self.extraction = ExtractionService(
            engine,
            ExtractionBuffer(engine.store.buffer),
            OfflineMemoryModel(keeper=self.keeper),
            ExtractionSettings(quiet_gap=86_400.0),
        )
        self.assistant = Assistant(
            engine=engine,
            sessions=SessionStore(engine.store.sessions),
            chat_model=self.model,
            settings=AssistantSettings(workspace=workspace, floor=relevance_floor(Config())),
            extraction=self.extraction,
        )
        self._count = 0

    async def say(self, sender: str, chat: str, text: str) -> str:
        """Send one message; the reply text (``model.shown``: the memories its request carried)."""
        self._count += 1
        self.model.shown, self.model.system = [], ""
        message = InboundMessage(
            channel=TELL_CHANNEL, chat_id=chat, sender_id=sender, text=text, message_id=str(self._count)
        )
        return await self.assistant.handle(message) or ""

    async def tell(self, sender: str, text: str) -> tuple[str, list[int], dict[int, tuple[str, str]]]:
        """Say ``text`` in the "tell" chat and extract it: the reply, the ids of the owner's memories it
        made or changed, and the owner's memories after it (``snapshot``)."""
        owner = f"{TELL_CHANNEL}:{sender}"
        before = await self.snapshot(owner)
        reply = await self.say(sender, "tell", text)
        await self.extraction.flush(owner, force=True)
        after = await self.snapshot(owner)
        return reply, [i for i, row in after.items() if before.get(i) != row], after

    async def ask(self, sender: str, text: str, kept: list[int]) -> tuple[set[str], list[str], bool]:
        """Ask ``text`` in the "ask" chat: what the ``kept`` memories hold now, the memories the reply's
        request carried, and whether one of them (or the profile it was given) held a kept one."""
        owner = f"{TELL_CHANNEL}:{sender}"
        wanted = {c for c in [await self.current(owner, i) for i in kept] if c}
        await self.say(sender, "ask", text)
        shown = list(self.model.shown)
        return wanted, shown, bool(wanted.intersection(shown)) or any(c in self.model.system for c in wanted)

    async def snapshot(self, owner: str) -> dict[int, tuple[str, str]]:
        """id -> (content, category) of the owner's live memories."""
        rows = await self.engine.list(owner, limit=100_000)
        return {m.id: (m.content, m.category) for m in rows}

    async def current(self, owner: str, memory_id: int) -> str | None:
        """A kept memory's content now, following a merge into another memory."""
        for _ in range(10):
            memory = await self.engine.get(owner, memory_id)
            if memory is None:
                return None
            if not memory.is_archived:
                return memory.content
            if memory.superseded_by is None:
                return None
            memory_id = memory.superseded_by
        return None


async def run_tell(
    data: dict[str, Any], db_path: Path | str, embedding: EmbeddingSettings | None, extras: Extras
) -> tuple[list[Outcome], list[float], dict[str, Any]]:
    """Tell mode: say each fact, extract, then ask everything in a new chat."""
    engine = await MemoryEngine.open(db_path)
    embedder = attach_embedder(engine, embedding) if embedding is not None else None
    outcomes: list[Outcome] = []
    extra: dict[str, Any] = {}
    try:
        if embedder is not None:
            await embedder.embed_query("warm up")
        with tempfile.TemporaryDirectory() as workspace:
            run = TellRun(engine, Path(workspace))
            try:
                kept_ids: dict[str, list[int]] = {}
                for pair in data["pairs"]:
                    reply, new, after = await run.tell(owner_of(pair), pair["tell"])
                    kept_ids[pair["id"]] = new
                    categories = {after[i][1] for i in new}
                    outcome = Outcome(
                        pair["lang"], pair["kind"], kept=bool(new), expected=pair.get("category")
                    )
                    outcome.categories = tuple(sorted(categories))
                    outcome.forms = forms_of(pair)
                    outcome.fading = bool(categories & (MEDIUM_DECAY | FAST_DECAY))
                    outcome.slow = bool(categories & SLOW_DECAY)
                    outcome.acknowledged = ACKNOWLEDGEMENT.search(reply) is not None
                    outcomes.append(outcome)
                for pair, outcome in zip(data["pairs"], outcomes, strict=True):
                    wanted, shown, outcome.recalled = await run.ask(
                        owner_of(pair), pair["ask"], kept_ids[pair["id"]]
                    )
                    outcome.top1 = bool(shown) and shown[0] in wanted
                for line in data.get("chitchat", []):
                    reply = await run.say(line["lang"], "ask", line["text"])
                    shown = run.model.shown
                    outcomes.append(
                        Outcome(
                            line["lang"],
                            "chitchat",
                            injected=bool(shown),
                            acknowledged=ACKNOWLEDGEMENT.search(reply) is not None,
                        )
                    )
                times = list(run.assistant.memory_timing.samples_ms)
                if extras.corpora:
                    extra["corpora_false_keeps"] = await false_keeps(run.keeper, extras.corpora)
                if extras.categories:
                    extra["category_accuracy"] = await category_accuracy(run.keeper, extras.categories)
            finally:
                await run.extraction.close()
    finally:
        if embedder is not None:
            await embedder.close()
        await engine.close()
    return outcomes, times, extra


def _rate(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise(outcomes: list[Outcome], mode: str) -> dict[str, Any]:
    """The --json keys over all outcomes, per language and per kind."""
    result = _measures(outcomes, mode)
    langs = sorted({o.lang for o in outcomes})
    result["by_lang"] = {lang: _measures([o for o in outcomes if o.lang == lang], mode) for lang in langs}
    result["by_kind"] = _by([o for o in outcomes if o.kind != "chitchat"], lambda o: o.kind, mode)
    pairs = [o for o in outcomes if o.kind not in ("chitchat", "corpus")]
    if any(o.forms[0] or o.forms[1] for o in pairs):
        # keys "<lang>/<form>": a form's misses differ by language (bench/README.md, blind14's run)
        result["by_tell_form"] = _by(pairs, lambda o: f"{o.lang}/{o.forms[0] or '-'}", mode)
        result["by_ask_form"] = _by(pairs, lambda o: f"{o.lang}/{o.forms[1] or '-'}", mode)
    return result


def _by(pairs: list[Outcome], key: Callable[[Outcome], str], mode: str) -> dict[str, dict[str, Any]]:
    """Recall, top-1, kept (tell mode) and n of the pairs, grouped by ``key``."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in pairs:
        groups[key(o)].append(o)
    return {
        name: {
            "recall": _rate([o.recalled for o in group]),
            "top1": _rate([o.top1 for o in group]),
            "kept": _rate([bool(o.kept) for o in group]) if mode == "tell" else None,
            "n": len(group),
        }
        for name, group in sorted(groups.items())
    }


def _measures(outcomes: list[Outcome], mode: str) -> dict[str, Any]:
    pairs = [o for o in outcomes if o.kind != "chitchat"]
    chat = [o for o in outcomes if o.kind == "chitchat"]
    tell = mode == "tell"
    return {
        "recall": _rate([o.recalled for o in pairs]),
        "top1": _rate([o.top1 for o in pairs]),
        "kept": _rate([bool(o.kept) for o in pairs]) if tell else None,
        "kept_fading": sum(1 for o in pairs if o.kept and o.fading) if tell else None,
        "kept_slow_decay": sum(1 for o in pairs if o.kept and o.slow) if tell else None,
        "false_acknowledged": sum(1 for o in pairs if o.acknowledged and not o.kept) if tell else None,
        "chitchat_injection": _rate([o.injected for o in chat]),
        "chitchat_acknowledged": sum(1 for o in chat if o.acknowledged) if tell else None,
        "kept_identity_share": _identity_share(pairs) if tell else None,
        "kept_categories": dict(Counter(c for o in pairs if o.kept for c in o.categories)) if tell else None,
        "kept_category_agrees": _rate([o.expected in o.categories for o in pairs if o.kept and o.expected])
        if tell
        else None,
        "n": len(pairs),
        "chitchat_n": len(chat),
    }


def _identity_share(pairs: list[Outcome]) -> float | None:
    """Share of the kept pairs' facts filed as identity (issue 35: at most 0.3)."""
    filed = [c for o in pairs if o.kept for c in o.categories]
    return sum(1 for c in filed if c == "identity") / len(filed) if filed else None


def _show(value: Any) -> Any:
    return "-" if value is None else value


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.everyday", description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="the everyday file (default: the repo's)")
    parser.add_argument("--mode", choices=("ask", "tell"), default="ask")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument(
        "--corpora", help="the shared data folder: measure the held-out LCCC/DailyDialog lines"
    )
    parser.add_argument("--corpora-lines", type=int, default=500, help="lines of each corpus (default 500)")
    parser.add_argument("--categories", help="a labelled category file (tell mode): accuracy per category")
    add_embedding_args(parser)
    add_database_option(parser)
    args = parser.parse_args(argv)
    try:
        data = load_everyday(Path(args.data))
        settings = embedding_settings(args)
        extras = Extras(
            corpora=corpus_lines(require_file(Path(args.corpora), "data folder"), args.corpora_lines)
            if args.corpora
            else [],
            categories=load_categories(Path(args.categories)) if args.categories else [],
        )
    except ValueError as exc:
        parser.error(str(exc))
    embedding = settings if args.embedding != "none" else None
    runner = run_ask if args.mode == "ask" else run_tell
    started = time.perf_counter()
    with scratch_memory(args.database) as target:
        outcomes, times_ms, extra = asyncio.run(runner(data, target, embedding, extras))
    result = summarise(outcomes, args.mode)
    result.update(extra)
    result.update(
        store=store_name(args.database),
        mode=args.mode,
        embedding=args.embedding,
        p95_ms=percentile(times_ms, 95) if times_ms else 0.0,
        wall_s=round(time.perf_counter() - started, 1),
    )
    if embedding is not None:
        result["head_load_ms"] = round(head_load_ms(), 1)
    print(f"{data.get('name', args.data)}: mode {args.mode}, embedding {args.embedding}")
    headers = ["", "recall", "top1", "kept", "fading", "false ack", "chit-chat shown", "chit-chat ack", "n"]
    keys = ["recall", "top1", "kept", "kept_fading", "false_acknowledged", "chitchat_injection"]
    keys += ["chitchat_acknowledged", "n"]
    rows = [["all", *(_show(result[k]) for k in keys)]]
    rows += [[lang, *(_show(m[k]) for k in keys)] for lang, m in result["by_lang"].items()]
    print(table(headers, rows))
    kinds = [
        [k, _show(m["recall"]), _show(m["top1"]), _show(m["kept"]), m["n"]]
        for k, m in result["by_kind"].items()
    ]
    print(table(["kind", "recall", "top1", "kept", "n"], kinds))
    if args.mode == "tell":
        share = _show(result["kept_identity_share"])
        print(f"identity share of kept facts: {share}; filed: {result['kept_categories']}")
    if "head_load_ms" in result:
        print(f"head load (cold, median of 3): {result['head_load_ms']} ms")
    for key in ("corpora_false_keeps", "corpora_injection", "category_accuracy"):
        if key in result:
            shown = {k: {m: v for m, v in d.items() if m != "examples"} for k, d in result[key].items()}
            print(f"{key}: {json.dumps(shown, ensure_ascii=False)}")
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
