"""memory/merge_guard.py: the lexical veto on semantic dedup, rule by rule, and its use in the engine.

The guard only sees the tokens an embedding barely notices (numbers, dates, names, roles, kinship words,
《titles》, negations); each rule gets a restatement it must allow and a different fact it must veto. The
engine tests give a real MemoryEngine an embedder with hand-picked vectors, so the cosine of each pair is
exactly what the test needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.records import Fact
from memory.text.merge_guard import anchors, guard_allows_merge, identifiers
from memory.writes import SEMANTIC_DUP_COSINE

# ------------------------------------------------------------------------------------------ the rules

# Restatements of one fact: merging them loses nothing.
ALLOWED = [
    ("plain en", "The user likes coffee.", "The user loves drinking coffee."),
    ("plain zh", "用户喜欢喝咖啡。", "用户爱喝咖啡。"),
    ("number word = digits", "Audrey has four dogs.", "Audrey has 4 dogs."),
    ("thousands separator", "Tim has read 2,000 pages.", "Tim has read 2000 pages."),
    ("ordinal word = ordinal digits", "Nate won first place.", "Nate won 1st place."),
    ("zh numeral with classifier", "Lisa养了两只猫。", "Lisa家里有两只猫。"),
    ("zh numeral = digits", "Bart跑了一百米。", "Bart跑了100米。"),
    ("zh ordinal 第", "Bart获得了第一名。", "Bart拿了第一名。"),
    (
        "zh article 一 and 十分 are no numbers",
        "Bart养了一只小乌龟，一直十分开心。",
        "Bart养了只小乌龟，很开心。",
    ),
    ("same month", "Caroline went to a support group in May.", "Caroline attended a support group in May."),
    ("lower-case may is no month", "Melanie may go hiking.", "Melanie might go hiking."),
    ("same weekday", "Melanie ran a race on Saturday.", "On Saturday Melanie ran a race."),
    ("same zh weekday", "Lisa星期五去了动物园。", "Lisa星期五去动物园玩了。"),
    ("same last week", "Jon went hiking last week.", "Last week Jon went hiking."),
    ("same zh week", "Lisa上周去了动物园。", "上周Lisa去动物园玩了。"),
    ("same name", "Caroline's best friend is Melanie.", "Caroline says Melanie is her best friend."),
    ("same name zh", "Lisa的好朋友是Sophia。", "Lisa说Sophia是她最好的朋友。"),
    ("same roles", "Sam appreciates Evan's support.", "Sam is grateful for Evan's support."),
    ("sentence-initial word is no name", "Painting relaxes Maria.", "Maria finds painting relaxing."),
    ("mom = mother", "Deborah visits her mom every week.", "Deborah visits her mother every week."),
    ("妈妈 = 母亲", "Bart和妈妈一起去游乐园。", "Bart跟母亲去了游乐园。"),
    ("same title", "Lisa喜欢读《小王子》。", "Lisa爱看《小王子》。"),
    ("same negation en", "John doesn't like spicy food.", "John does not like spicy food."),
    ("same negation zh", "Bart不喜欢吃青菜。", "Bart不想吃青菜。"),
    ("迫不及待 is no negation", "Bart迫不及待地想去游乐园。", "Bart很想去游乐园。"),
]

# Different facts that an embedding scores as near-identical: merging would lose one.
VETOED = [
    ("number", "Tim has read 12 fantasy novels.", "Tim has read 30 fantasy novels."),
    ("number word", "Audrey has four dogs.", "Audrey has two dogs."),
    ("number word vs digits", "Audrey has four dogs.", "Audrey has 2 dogs."),
    ("ordinal word", "Nate won first place in the tournament.", "Nate won third place in the tournament."),
    ("zh numeral with classifier", "Lisa养了两只猫。", "Lisa养了三只猫。"),
    ("zh ordinal 第", "Bart在运动会上获得了第一名。", "Bart在运动会上获得了第六名。"),
    (
        "date",
        "Caroline went to a support group on 7 May 2023.",
        "Caroline went to a support group on 7 June 2023.",
    ),
    ("month", "Caroline went to a support group in May.", "Caroline went to a support group in June."),
    ("zh date", "Lisa在2023年5月7日参加了绘画比赛。", "Lisa在2023年6月2日参加了绘画比赛。"),
    ("weekday", "Melanie ran a charity race last Saturday.", "Melanie ran a charity race last Sunday."),
    ("zh weekday", "Lisa星期五去了动物园。", "Lisa星期六去了动物园。"),
    ("last vs next week", "Jon went hiking last week.", "Jon went hiking next week."),
    ("zh last vs next week", "Lisa上周去了动物园。", "Lisa下周去动物园。"),
    ("time word", "Jon went hiking yesterday.", "Jon went hiking today."),
    ("name", "Caroline's best friend is Melanie.", "Caroline's best friend is Jessica."),
    ("name in zh text", "Lisa的好朋友是Sophia。", "Lisa的好朋友是Emma。"),
    ("name missing", "Gina moved to Chicago for work.", "Gina moved for work."),
    ("swapped roles", "Sam appreciates Evan's support.", "Evan appreciates Sam's support."),
    ("mom vs dad", "Deborah visits her mom every Sunday.", "Deborah visits her dad every Sunday."),
    ("妈妈 vs 爸爸", "Bart和妈妈一起去游乐园。", "Bart和爸爸一起去游乐园。"),
    ("kinship", "Deborah visits her mother every Sunday.", "Deborah visits her sister every Sunday."),
    ("《titles》", "Lisa喜欢读《小王子》。", "Lisa喜欢读《夏洛的网》。"),
    ("not", "John likes spicy food.", "John does not like spicy food."),
    ("n't", "John likes spicy food.", "John doesn't like spicy food."),
    ("never", "Maria has been to Japan.", "Maria has never been to Japan."),
    ("不", "Bart喜欢吃青菜。", "Bart不喜欢吃青菜。"),
    ("没有", "Lisa参加了学校的绘画比赛。", "Lisa没有参加学校的绘画比赛。"),
    ("不想 vs 迫不及待", "Bart迫不及待地想去游乐园。", "Bart不想去游乐园。"),
]


@pytest.mark.parametrize(("a", "b"), [p[1:] for p in ALLOWED], ids=[p[0] for p in ALLOWED])
def test_guard_allows_restatements(a: str, b: str) -> None:
    assert guard_allows_merge(a, b)
    assert guard_allows_merge(b, a)


@pytest.mark.parametrize(("a", "b"), [p[1:] for p in VETOED], ids=[p[0] for p in VETOED])
def test_guard_vetoes_different_facts(a: str, b: str) -> None:
    assert not guard_allows_merge(a, b)
    assert not guard_allows_merge(b, a)


def test_anchors_read_numbers_times_names_people_titles_negations() -> None:
    en = anchors("Sam didn't give Evan two books last Saturday for his mom's birthday.")
    assert en.numbers == {"2"}
    assert {"sat", "last sat", "birthday"} <= en.times
    assert en.names == ("sam", "evan")
    assert en.people == {"mother"}
    assert en.negations == 1
    zh = anchors("Lisa上周没有读完《小王子》的第三章，看了两本书。")
    assert zh.numbers == {"3", "2"}
    assert "上周" in zh.times
    assert zh.names == ("lisa",)
    assert zh.titles == {"小王子"}
    assert zh.negations == 1


def test_idiom_with_不_is_not_a_negation() -> None:
    assert anchors("Bart迫不及待地想去游乐园。").negations == 0
    assert anchors("Bart不想去游乐园。").negations == 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Bart吃青菜。", "Bart不吃青菜。"),
        ("Bart去了游乐园。", "Bart没去游乐园。"),
        ("我喝酒。", "我从来不喝酒。"),
    ],
    ids=["不吃", "没去", "从来不"],
)
def test_negation_fused_into_a_verb_vetoes(a: str, b: str) -> None:
    # jieba keeps 不吃 / 没去 / 从来不 as one word; they still count as negations
    assert not guard_allows_merge(a, b)


def test_words_that_only_start_with_a_negation_character_are_not_negations() -> None:
    assert anchors("这部电影不错。").negations == 0
    assert anchors("别人的未来。").negations == 0


# ------------------------------------------------------------------------------------- in the engine

DIM = 8
OWNER = "alice"


def _axis(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def _at_cosine(cosine: float, base: int = 0, other: int = 1) -> np.ndarray:
    """A unit vector whose cosine with ``_axis(base)`` is ``cosine``."""
    v = np.zeros(DIM, dtype=np.float32)
    v[base], v[other] = cosine, math.sqrt(1.0 - cosine * cosine)
    return v


class FixedEmbedder:
    """The engine's embedder interface, answering a fixed unit vector per text (unknown text: KeyError)."""

    model_key = "test:fixed@8"
    uses_local_cores = False

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors
        self.embedded: list[str] = []

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += texts
        return np.stack([self.vectors[t] for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    async def close(self) -> None:
        pass


LIKES = "The user likes coffee."
LOVES = "The user loves drinking coffee."
MAY = "Caroline went to a support group on 7 May 2023."
JUNE = "Caroline went to a support group on 2 June 2023."


def test_engine_pairs_get_past_the_other_rules() -> None:
    """The pairs below are not exact or Dice duplicates: only semantic dedup can merge them."""
    assert guard_allows_merge(LIKES, LOVES)
    assert not guard_allows_merge(MAY, JUNE)
    assert SEMANTIC_DUP_COSINE == 0.99
    assert float(_axis(0) @ _at_cosine(0.995)) >= SEMANTIC_DUP_COSINE > float(_axis(0) @ _at_cosine(0.98))


async def test_engine_merges_a_restatement_at_high_cosine(engine: MemoryEngine) -> None:
    embedder = FixedEmbedder({LIKES: _axis(0), LOVES: _at_cosine(0.995)})
    engine.embedder = embedder
    first = await engine.write(OWNER, Fact(LIKES, source_ref="tg:1:1"))
    second = await engine.write(OWNER, Fact(LOVES, source_ref="tg:1:2"))
    assert embedder.embedded == [LIKES, LOVES]
    assert first.action == "inserted"
    assert (second.action, second.id) == ("merged", first.id)
    rows = await engine.list(OWNER)
    assert [m.content for m in rows] == [LIKES]  # the older row's text is kept
    assert await engine.refs(OWNER, [first.id]) == {first.id: ["tg:1:1", "tg:1:2"]}


async def test_engine_keeps_a_different_date_apart_at_high_cosine(engine: MemoryEngine) -> None:
    engine.embedder = FixedEmbedder({MAY: _axis(0), JUNE: _at_cosine(0.995)})
    await engine.write(OWNER, Fact(MAY, source_ref="tg:1:1"))
    second = await engine.write(OWNER, Fact(JUNE, source_ref="tg:1:2"))
    assert second.action == "inserted"
    assert sorted(m.content for m in await engine.list(OWNER)) == sorted([MAY, JUNE])


async def test_engine_keeps_pairs_below_the_threshold_apart(engine: MemoryEngine) -> None:
    engine.embedder = FixedEmbedder({LIKES: _axis(0), LOVES: _at_cosine(0.98)})
    await engine.write(OWNER, Fact(LIKES))
    second = await engine.write(OWNER, Fact(LOVES))
    assert second.action == "inserted"
    assert sorted(m.content for m in await engine.list(OWNER)) == [LIKES, LOVES]


async def test_engine_never_merges_across_owners(engine: MemoryEngine) -> None:
    engine.embedder = FixedEmbedder({LIKES: _axis(0), LOVES: _axis(0)})
    await engine.write(OWNER, Fact(LIKES, source_ref="tg:1:1"))
    other = await engine.write("bob", Fact(LOVES, source_ref="tg:2:1"))
    assert other.action == "inserted"
    assert [m.content for m in await engine.list(OWNER)] == [LIKES]
    assert [m.content for m in await engine.list("bob")] == [LOVES]
    assert await engine.refs("bob", [other.id]) == {other.id: ["tg:2:1"]}


async def test_engine_never_merges_across_tiers(engine: MemoryEngine) -> None:
    engine.embedder = FixedEmbedder({LIKES: _axis(0), LOVES: _axis(0)})
    profile = await engine.write(OWNER, Fact(LIKES, tier=1))
    other = await engine.write(OWNER, Fact(LOVES, tier=2))
    assert other.action == "inserted" and other.id != profile.id
    assert [m.content for m in await engine.list(OWNER, tier=1)] == [LIKES]
    assert [m.content for m in await engine.list(OWNER, tier=2)] == [LOVES]


async def test_engine_never_merges_into_a_row_edited_by_another_process(engine: MemoryEngine) -> None:
    # This engine holds the owner's vectors; another process (tierclaw memory edit) rewrites the row, which
    # clears its stored vector. A new fact close to the OLD text must not be merged into the new one.
    embedder = FixedEmbedder({LIKES: _axis(0), LOVES: _at_cosine(0.995)})
    engine.embedder = embedder
    first = await engine.write(OWNER, Fact(LIKES))
    assert await engine.vectors.of_owner(OWNER) is not None  # loaded, with the old vector of LIKES
    other = await MemoryEngine.open(engine.path)
    try:
        await other.edit(OWNER, first.id, content="The user now drinks only green tea.")
    finally:
        await other.close()

    # Make the cached matrix miss that change (as between its load and a check): the row is then the judge.
    async def nobody_else_committed(*, force: bool = False) -> None:
        return None

    engine.store.changes.refresh = nobody_else_committed  # type: ignore[method-assign]
    second = await engine.write(OWNER, Fact(LOVES))
    assert second.action == "inserted" and second.id != first.id


async def test_purge_forgets_the_cached_vector_of_the_text(engine: MemoryEngine) -> None:
    from memory.vectors.cache import CachedEmbedder

    cached = CachedEmbedder(FixedEmbedderAsInner({LIKES: _axis(0)}), engine.store.vectors)
    engine.embedder = cached
    written = await engine.write(OWNER, Fact(LIKES))
    assert await cached.stats()
    assert await engine.purge(OWNER, written.id)
    assert await cached.stats() == {}


class FixedEmbedderAsInner(FixedEmbedder):
    """FixedEmbedder with the inner-embedder side of the protocol (``dim``, ``embed_queries``)."""

    dim = DIM

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("My colleague Paul14 likes jazz", "My colleague Paul15 likes jazz"),
        ("我的同事Paul14喜欢爵士乐", "我的同事Paul15喜欢爵士乐"),
        ("My parking space is B12", "My parking space is B14"),
        ("The router is model AX3000", "The router is model AX1800"),
    ],
)
def test_different_identifiers_are_never_merged(a: str, b: str) -> None:
    assert not guard_allows_merge(a, b)


def test_the_same_identifier_restated_may_merge() -> None:
    assert guard_allows_merge("My colleague Paul14 likes jazz", "my colleague Paul14 loves jazz")
    assert identifiers("I had COVID-19; my flat is B12, since the 1990s.") == {"covid-19", "b12"}


async def test_engine_keeps_near_duplicates_with_different_identifiers_apart(engine: MemoryEngine) -> None:
    long_a = "My colleague Paul14 likes jazz and plays the saxophone in a band on Fridays"
    long_b = long_a.replace("Paul14", "Paul15")
    await engine.write(OWNER, Fact(long_a))
    second = await engine.write(OWNER, Fact(long_b))
    assert second.action == "inserted"
    assert sorted(m.content for m in await engine.list(OWNER)) == sorted([long_a, long_b])
