"""The synthetic people of the throughput benchmark: owners with memories, profile facts and messages in
English and Chinese, the store and workspace they start with, and the config file of a run."""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np

from bench.throughput_embedding import (
    Embedding,
)
from bench.vector_cache import load_vector_cache, prefill_cache, save_vector_cache
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors.cache import CachedEmbedder, build_cached_embedder, text_hash
from memory.vectors.embedding import EmbeddingSettings

PROFILE_FACTS = 4  # Tier 1 facts per owner (always in the system prompt)


PRELOAD_EMBED_CHUNK = 256  # texts per embed call while preloading (progress is printed after each)

CHANNEL = "bench"

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
    db_path: str | Path,
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
        cached = build_cached_embedder(embedding, engine.store.vectors) if embedding is not None else None
        engine.embedder = cached
        try:
            if cached is not None:
                await _embed_preload(engine, cached, plan, vector_cache, result)
            for owner, facts in plan:
                await engine.write_many(owner.owner, facts, now=now)
            if cached is not None:
                result.missing = await engine.vectors.count_missing_embeddings(cached.model_key)
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


def write_config(
    tmp: Path, base_url: str, *, memory: bool, embedding: Embedding | None = None, database_url: str = ""
) -> Path:
    """A config file for the run (temp workspace and database — or ``database_url`` —, the stub as
    provider, ``embedding``)."""
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
            "databaseUrl": database_url,
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
