"""Retrieval: Chinese and English recall, project partitions, ranking by decay, access bookkeeping,
Tier 3 events, and hostile query text that must never break the FTS5 query."""

from __future__ import annotations

import asyncio
import contextlib
import random
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.clock import to_db, utcnow
from memory.engine import MemoryEngine
from memory.records import Fact, Retrieved
from memory.text import tokenizer
from memory.writes import MAX_CONTENT_CHARS
from tests.support.sqlite_peek import sql as _sql

OWNER = "alice"


# ----------------------------------------------------------------- recall


async def test_chinese_query_finds_chinese_memory(engine: MemoryEngine) -> None:
    target = await engine.write(OWNER, Fact("用户在北京的一家互联网公司做后端开发"))
    other = await engine.write(OWNER, Fact("我喜欢喝咖啡"))
    hits = await engine.retrieve(OWNER, "我在哪家公司上班来着")  # shares 公司
    assert [h.id for h in hits] == [target.id]
    assert other.id not in {h.id for h in await engine.search(OWNER, "我在哪家公司上班来着")}


async def test_chinese_substring_word_is_found(engine: MemoryEngine) -> None:
    # jieba search mode also indexes the shorter words inside long ones (互联网 → 互联, 联网).
    target = await engine.write(OWNER, Fact("用户在北京的一家互联网公司做后端开发"))
    assert [h.id for h in await engine.search(OWNER, "北京")] == [target.id]
    assert [h.id for h in await engine.search(OWNER, "联网")] == [target.id]


async def test_english_stemming(engine: MemoryEngine) -> None:
    target = await engine.write(OWNER, Fact("He runs every morning"))
    await engine.write(OWNER, Fact("She swims on Sundays"))
    assert [h.id for h in await engine.retrieve(OWNER, "running")] == [target.id]
    assert [h.id for h in await engine.search(OWNER, "RUN")] == [target.id]


async def test_mixed_language_query(engine: MemoryEngine) -> None:
    target = await engine.write(OWNER, Fact("我用Python写了一个Telegram机器人"))
    assert [h.id for h in await engine.search(OWNER, "telegram bot")] == [target.id]
    assert [h.id for h in await engine.search(OWNER, "那个机器人还在跑吗")] == [target.id]


@pytest.mark.parametrize("message", ["how is myclaw going?", "MyClaw 的进展怎么样了", "MYCLAW???"])
async def test_known_project_partition(engine: MemoryEngine, message: str) -> None:
    in_project = await engine.write(OWNER, Fact("Deploy with docker compose and nginx", project="myclaw"))
    elsewhere = await engine.write(OWNER, Fact("Ansible playbooks live in the infra repo", project="alpha"))
    global_ = await engine.write(OWNER, Fact("User prefers vim keybindings"))
    hits = await engine.retrieve(OWNER, message)
    ids = [h.id for h in hits]
    assert ids == [in_project.id]
    assert elsewhere.id not in ids and global_.id not in ids
    assert hits[0].project == "myclaw"
    # Without naming the project the same memory shares no word with the message.
    assert await engine.retrieve(OWNER, "how is it going?") == []


async def test_project_rows_rank_with_text_matches(engine: MemoryEngine) -> None:
    p = await engine.write(OWNER, Fact("Deploy with docker compose and nginx", project="myclaw"))
    q = await engine.write(OWNER, Fact("The myclaw database is SQLite in WAL mode", project="myclaw"))
    hits = await engine.retrieve(OWNER, "which database does myclaw use?")
    assert [h.id for h in hits] == [q.id, p.id]  # the text match first, the rest of the partition after


async def test_retrieve_returns_at_most_k_with_fields(engine: MemoryEngine) -> None:
    subjects = ["espresso", "latte", "mocha", "cortado", "americano", "macchiato", "ristretto", "lungo"]
    written = {}
    for i, name in enumerate(subjects):
        r = await engine.write(
            OWNER,
            Fact(f"Coffee order {name} with {subjects[(i + 3) % 8]}", topic="drinks", category="decision"),
        )
        written[r.id] = f"Coffee order {name} with {subjects[(i + 3) % 8]}"
    assert len(written) == 8
    assert len(await engine.retrieve(OWNER, "coffee", k=3)) == 3
    hits = await engine.retrieve(OWNER, "coffee")
    assert len(hits) == 5  # default k
    assert len(await engine.search(OWNER, "coffee", k=20)) == 8
    for h in hits:
        assert isinstance(h, Retrieved)
        assert h.content == written[h.id]
        assert (h.tier, h.project, h.topic, h.category) == (2, "_global", "drinks", "decision")
        assert h.score > 0 and 0.0 <= h.match <= 1.0
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


async def test_retrieve_touches_and_search_does_not(engine: MemoryEngine) -> None:
    r = await engine.write(OWNER, Fact("User's cat is called Miso"))
    before = await engine.get(OWNER, r.id)
    assert before is not None and before.access_count == 0

    await engine.search(OWNER, "cat Miso")
    assert await engine.get(OWNER, r.id) == before

    await engine.retrieve(OWNER, "what is my cat called?", touch=False)
    assert await engine.get(OWNER, r.id) == before

    later = utcnow() + timedelta(days=3)
    assert [h.id for h in await engine.retrieve(OWNER, "what is my cat called?", later)] == [r.id]
    after = await engine.get(OWNER, r.id)
    assert after is not None
    assert after.access_count == 1
    assert after.last_accessed == to_db(later) != before.last_accessed
    await engine.retrieve(OWNER, "Miso the cat", later + timedelta(hours=1))
    again = await engine.get(OWNER, r.id)
    assert again is not None and again.access_count == 2


async def test_retrieve_touches_only_the_hits(engine: MemoryEngine) -> None:
    hit = await engine.write(OWNER, Fact("User's cat is called Miso"))
    miss = await engine.write(OWNER, Fact("User plays the cello"))
    await engine.retrieve(OWNER, "cat")
    miss_mem = await engine.get(OWNER, miss.id)
    hit_mem = await engine.get(OWNER, hit.id)
    assert miss_mem is not None and miss_mem.access_count == 0
    assert hit_mem is not None and hit_mem.access_count == 1


async def test_archived_and_superseded_never_returned(engine: MemoryEngine) -> None:
    archived = await engine.write(OWNER, Fact("User's cat is called Miso", project="pets"))
    assert await engine.archive(OWNER, archived.id)
    old = await engine.write(OWNER, Fact("User's dog is called Rex", subject="dog", predicate="name"))
    new = await engine.write(OWNER, Fact("User's dog is called Bolt", subject="dog", predicate="name"))
    for query in ("cat Miso", "what are my pets called", "dog Rex", "pets"):
        ids = {h.id for h in await engine.retrieve(OWNER, query)} | {
            h.id for h in await engine.search(OWNER, query)
        }
        assert archived.id not in ids and old.id not in ids
    assert [h.id for h in await engine.search(OWNER, "dog Rex")] == [new.id]


async def test_tier1_only_in_search(engine: MemoryEngine) -> None:
    profile = await engine.write(OWNER, Fact("User's name is Alice Zhang", tier=1, category="identity"))
    assert await engine.retrieve(OWNER, "what is Alice's name?") == []
    hits = await engine.search(OWNER, "what is Alice's name?")
    assert [(h.id, h.tier) for h in hits] == [(profile.id, 1)]
    assert await engine.search(OWNER, "Alice", tiers=(2,)) == []


async def test_decay_ranks_old_temp_below_fresh(engine: MemoryEngine) -> None:
    now = utcnow()
    fresh = await engine.write(
        OWNER, Fact("Debug port for the staging server is 9001", category="temp", importance=0.8)
    )
    old = await engine.write(
        OWNER,
        Fact(
            "Debug port for the staging server is 9002",
            category="temp",
            importance=0.8,
            created_at=now - timedelta(days=40),
        ),
    )
    assert old.id > fresh.id  # on a score tie the newer id would win: only decay can put fresh first
    hits = await engine.retrieve(OWNER, "debug port of the staging server", now, touch=False)
    assert [h.id for h in hits] == [fresh.id, old.id]
    assert hits[0].match == pytest.approx(hits[1].match)
    assert hits[0].score > hits[1].score


async def test_identity_does_not_decay_in_ranking(engine: MemoryEngine) -> None:
    now = utcnow()
    fresh = await engine.write(OWNER, Fact("Staging server hostname is kite", category="identity"))
    old = await engine.write(
        OWNER,
        Fact("Staging server hostname is hawk", category="identity", created_at=now - timedelta(days=400)),
    )
    hits = await engine.retrieve(OWNER, "staging server hostname", now, touch=False)
    assert {h.id for h in hits} == {fresh.id, old.id}
    assert hits[0].score == pytest.approx(hits[1].score)


async def test_min_match_filters_weak_hits(engine: MemoryEngine) -> None:
    coffee = await engine.write(OWNER, Fact("User likes coffee"))
    await engine.write(OWNER, Fact("User drinks green tea"))
    await engine.write(OWNER, Fact("Fresh orange juice every morning"))
    weak = await engine.retrieve(OWNER, "coffee tea juice", touch=False)
    assert len(weak) == 3
    assert all(h.match < 0.5 for h in weak)
    assert await engine.retrieve(OWNER, "coffee tea juice", min_match=0.5) == []
    strong = await engine.retrieve(OWNER, "coffee", min_match=0.5)
    assert [(h.id, h.match) for h in strong] == [(coffee.id, pytest.approx(1.0))]


# ----------------------------------------------------------------- tier 3 events


async def test_events_by_date_range_and_keyword(engine: MemoryEngine) -> None:
    feb = await engine.events.add(OWNER, "Bought a new espresso machine", event_date="2024-02-29")
    mar1 = await engine.events.add(OWNER, "Discussed the deployment plan for myclaw", event_date="2024-03-01")
    mar31 = await engine.events.add(OWNER, "今天讨论了数据库迁移方案", event_date=date(2024, 3, 31))
    apr = await engine.events.add(OWNER, "Deployed myclaw to production", event_date="2024-04-01")

    march = await engine.events.find(OWNER, since="2024-03-01", until="2024-03-31")
    assert {e.id for e in march} == {mar1, mar31}
    assert {e.id for e in await engine.events.find(OWNER, since="2024-04-01")} == {apr}
    assert {e.id for e in await engine.events.find(OWNER, until="2024-02-29")} == {feb}
    assert [e.id for e in await engine.events.find(OWNER)] == [apr, mar31, mar1, feb]  # newest first

    assert {e.id for e in await engine.events.find(OWNER, query="deployment")} == {mar1, apr}
    assert {e.id for e in await engine.events.find(OWNER, query="myclaw deploy", until="2024-03-31")} == {
        mar1
    }
    assert [e.id for e in await engine.events.find(OWNER, query="数据库迁移")] == [mar31]
    assert [e.id for e in await engine.events.find(OWNER, query="迁移")] == [mar31]
    assert await engine.events.find(OWNER, query="espresso", since="2024-03-01") == []
    got = (await engine.events.find(OWNER, query="espresso"))[0]
    assert (got.owner, got.event_date, got.summary) == (OWNER, "2024-02-29", "Bought a new espresso machine")


@pytest.mark.parametrize("bad", ["2024-13-01", "2024-02-30", "yesterday", "03/01/2024", "2024-3-1x"])
async def test_add_event_rejects_bad_dates(engine: MemoryEngine, bad: str) -> None:
    with pytest.raises(ValueError):
        await engine.events.add(OWNER, "Something happened", event_date=bad)
    assert await engine.events.find(OWNER) == []


async def test_add_event_rejects_empty_summary(engine: MemoryEngine) -> None:
    with pytest.raises(ValueError):
        await engine.events.add(OWNER, "   ", event_date="2024-03-01")
    assert await engine.events.find(OWNER) == []


# ----------------------------------------------------------------- hostile input

HOSTILE = [
    '"',
    '""',
    "'",
    'coffee" OR "x',
    "*",
    "coffee*",
    "OR",
    "AND",
    "NOT",
    "coffee OR",
    "AND coffee",
    "NOT coffee",
    "NEAR(",
    "NEAR(coffee tea)",
    "NEAR(coffee tea, 2)",
    "-",
    "-coffee",
    "^",
    "^coffee",
    ":",
    "search_text:coffee",
    "{}",
    "{search_text}: coffee",
    "(",
    ")",
    "coffee)",
    "+",
    "\x00",
    "coffee\x00tea",
    "😀",
    "😀🎉🔥",
    "",
    " ",
    "\t\n \r ",
    '咖啡" OR "',
    "0001-01-01",
    "9999-12-31",
    "1 January, 0001",
    "December 9999",
    "0000年13月",
]


@pytest.fixture
async def stocked(engine: MemoryEngine) -> tuple[MemoryEngine, int]:
    coffee = await engine.write(OWNER, Fact("User likes coffee and green tea", project="myclaw"))
    await engine.write(OWNER, Fact("我喜欢喝咖啡"))
    await engine.events.add(OWNER, "Talked about coffee beans", event_date="2024-03-01")
    return engine, coffee.id


@pytest.mark.parametrize("query", HOSTILE)
async def test_hostile_queries_never_raise(stocked: tuple[MemoryEngine, int], query: str) -> None:
    engine, coffee_id = stocked
    retrieved = await engine.retrieve(OWNER, query)
    searched = await engine.search(OWNER, query)
    events = await engine.events.find(OWNER, query=query)
    assert isinstance(retrieved, list) and isinstance(searched, list) and isinstance(events, list)
    if "coffee" in query.lower():
        # Quoted, the word still matches; syntax around it is ignored rather than interpreted.
        assert coffee_id in {h.id for h in searched}
        assert len(events) == 1


@pytest.mark.parametrize("query", ["\ud800", "coffee\udfff", "\udc00\ud800咖啡"])
async def test_lone_surrogates_do_not_break_queries(stocked: tuple[MemoryEngine, int], query: str) -> None:
    engine, _ = stocked
    for call in (
        lambda: engine.retrieve(OWNER, query),
        lambda: engine.search(OWNER, query),
        lambda: engine.events.find(OWNER, query=query),
    ):
        # An explicit refusal (ValueError) is acceptable; any other exception is not.
        with contextlib.suppress(ValueError):
            assert isinstance(await call(), list)


def _random_chinese(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(n))


ENGLISH_VOCAB = ("coffee", "deployment", "infrastructure", "OR", "NEAR(", '"', "*", "running", "tea", "-x")


def _random_english(min_bytes: int, seed: int, vocab: tuple[str, ...] = ENGLISH_VOCAB) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = -1  # the joined text has one separator fewer than words
    while size < min_bytes:
        word = rng.choice(vocab)
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


@pytest.mark.parametrize("kind", ["chinese", "english"])
async def test_megabyte_queries_never_raise_and_are_cut_before_segmentation(
    stocked: tuple[MemoryEngine, int], kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, _ = stocked
    text = _random_chinese(350_000, 1) if kind == "chinese" else _random_english(1_000_000, 2)
    assert len(text.encode("utf-8")) >= 1_000_000
    jieba = tokenizer.warm_up()
    segmented: list[int] = []  # the length of each text handed to jieba: what costs seconds on 1 MB
    cut_for_search = jieba.lcut_for_search

    def recording(sentence: str, *args: object, **kwargs: object) -> list[str]:
        segmented.append(len(sentence))
        return cut_for_search(sentence, *args, **kwargs)

    monkeypatch.setattr(jieba, "lcut_for_search", recording)
    assert isinstance(await engine.retrieve(OWNER, text), list)
    assert isinstance(await engine.search(OWNER, text), list)
    assert isinstance(await engine.events.find(OWNER, query=text), list)
    assert segmented and max(segmented) <= tokenizer.MAX_QUERY_CHARS  # cut first, whatever the machine


@pytest.mark.parametrize(
    "content",
    [q for q in HOSTILE if q.replace("\x00", "").strip()] + ["a" * 10 + "\x00" + "b"],
)
async def test_hostile_content_can_be_written(engine: MemoryEngine, content: str) -> None:
    result = await engine.write(OWNER, Fact(content))
    assert result.action == "inserted"
    mem = await engine.get(OWNER, result.id)
    assert mem is not None and mem.content == content.replace("\x00", "").strip()
    assert [m.id for m in await engine.list(OWNER)] == [result.id]


@pytest.mark.parametrize("content", ["\ud800", "before\udfffafter"])
async def test_lone_surrogate_content_is_stored_or_refused_with_value_error(
    engine: MemoryEngine, content: str
) -> None:
    try:
        result = await engine.write(OWNER, Fact(content))
    except ValueError:
        assert _sql(engine, "SELECT COUNT(*) FROM memories") == [(0,)]
    else:
        assert await engine.get(OWNER, result.id) is not None
    # Whatever happened, the engine is still usable.
    assert (await engine.write(OWNER, Fact("User likes coffee"))).action == "inserted"


@pytest.mark.parametrize("kind", ["chinese", "english"])
async def test_megabyte_content_is_refused_and_the_longest_allowed_is_written(
    engine: MemoryEngine, kind: str
) -> None:
    if kind == "chinese":
        # Common words (random CJK code points make jieba's HMM take ~10 s per megabyte).
        rng = random.Random(3)
        words = [
            "我们",
            "今天",
            "讨论",
            "部署",
            "方案",
            "数据库",
            "缓存",
            "接口",
            "用户",
            "喜欢",
            "咖啡",
            "，",
            "。",
        ]
        text = "".join(rng.choice(words) for _ in range(200_000))
    else:
        text = _random_english(1_000_000, 4, tuple(w for w in ENGLISH_VOCAB if w != "coffee"))
    assert len(text.encode("utf-8")) >= 1_000_000
    with pytest.raises(ValueError, match="at most"):
        await engine.write(OWNER, Fact(text))
    assert _sql(engine, "SELECT COUNT(*) FROM memories") == [(0,)]
    text = text[: MAX_CONTENT_CHARS - 20].strip() + " 数据库 infrastructure"
    result = await engine.write(OWNER, Fact(text))
    assert result.action == "inserted"
    mem = await engine.get(OWNER, result.id)
    assert mem is not None and mem.content == text
    query = "数据库" if kind == "chinese" else "infrastructure"
    assert result.id in {h.id for h in await engine.search(OWNER, query)}


# ----------------------------------------------------------------- property: search never raises


@pytest.fixture(scope="module")
def search_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small database file shared (read-only) by the hypothesis examples."""
    path = str(tmp_path_factory.mktemp("search") / "memory.db")

    async def fill() -> None:
        async with await MemoryEngine.open(path) as eng:
            await eng.write(OWNER, Fact("User likes coffee and green tea", project="myclaw"))
            await eng.write(OWNER, Fact("用户在北京的一家互联网公司做后端开发"))
            await eng.write(OWNER, Fact("我用Python写了一个Telegram机器人", project="bot"))
            await eng.write(OWNER, Fact("User's name is Alice", tier=1, category="identity"))
            await eng.events.add(OWNER, "Talked about coffee beans", event_date="2024-03-01")

    asyncio.run(fill())
    return path


@settings(max_examples=100, deadline=None)
@given(text=st.text())
def test_search_never_raises_for_any_text(search_db: str, text: str) -> None:
    async def body() -> None:
        async with await MemoryEngine.open(search_db) as eng:
            for hit in await eng.search(OWNER, text):
                assert hit.tier in (1, 2)
            assert isinstance(await eng.retrieve(OWNER, text, touch=False), list)
            assert isinstance(await eng.events.find(OWNER, query=text), list)

    try:
        asyncio.run(body())
    except UnicodeEncodeError:
        # Only lone surrogates may be refused, and only as a ValueError.
        assert any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


async def test_a_word_first_seen_after_a_query_is_found_at_once(engine: MemoryEngine) -> None:
    """Term frequencies are cached between queries; a newly written word must not stay invisible."""
    await engine.write(OWNER, Fact("User likes green tea"))
    assert await engine.search(OWNER, "kombucha") == []
    written = await engine.write(OWNER, Fact("User brews kombucha at home"))
    assert [h.id for h in await engine.search(OWNER, "kombucha")] == [written.id]


async def test_a_query_of_only_very_common_words_still_finds_matches(engine: MemoryEngine) -> None:
    """When every query word is in most memories the engine samples the newest matches, not nothing."""
    facts = [Fact(f"Project alpha note number {i} about deployment step {i * 7}") for i in range(300)]
    await engine.write_many(OWNER, facts)
    hits = await engine.retrieve(OWNER, "alpha deployment", k=5)
    assert len(hits) == 5
    assert all("alpha" in h.content.lower() for h in hits)
