"""Everyday relations (memory/retrieval/relations.py): a question in other words finds its statement,
keyword-only, in both languages; ask-only forms do not search for their own words."""

from __future__ import annotations

import pytest

from memory.engine import MemoryEngine
from memory.records import Fact
from memory.retrieval.ranking import RELATED_WEIGHT, group_match
from memory.retrieval.relations import expand, relations
from memory.text import tokenizer

OWNER = "alice"


def _groups(text: str) -> tuple[tuple[str, ...], ...]:
    lowered = text.lower()
    return expand(lowered, tokenizer.query_terms(lowered))


def test_the_data_file_loads_and_every_group_has_terms() -> None:
    table = relations()
    assert len(table.groups) >= 40
    assert all(g.terms for g in table.groups)


def test_for_a_living_searches_for_work_not_for_live() -> None:
    groups = _groups("What do I do for a living?")
    flat = {t for g in groups for t in g}
    assert "work" in flat and "job" in flat
    assert "live" not in flat  # "living" stems to "live": the ask form takes it out


def test_a_tell_form_stays_a_term_and_brings_its_group() -> None:
    groups = _groups("Who is my boss?")
    assert any("boss" in g and "manag" in g for g in groups)


def test_chinese_forms_expand_and_one_character_needs_a_whole_word() -> None:
    assert any("领导" in g for g in _groups("我老板是谁？"))
    assert any("工作" in g for g in _groups("王磊的工作怎么样？"))
    assert not any("车" in g for g in _groups("今天很开心"))  # 开 inside 开心 is not "drive"
    assert any("驾驶" in g or "开" in g for g in _groups("车怎么样了？"))  # 车 alone is a word


@pytest.mark.parametrize(
    ("fact", "other", "question"),
    [
        ("I work as a nurse at the General", "I live in Lyon with my partner", "What do I do for a living?"),
        ("My manager is Karen", "My sister is called Karen too", "My boss?"),
        ("I drive a blue Yaris", "Blue is my favourite colour", "Which car have I got?"),
        ("我的领导姓赵", "我姓林", "我老板是谁？"),
        ("我在一家银行上班", "我住在杭州", "我的工作是什么？"),
    ],
)
async def test_a_question_in_other_words_finds_its_statement_keyword_only(
    engine: MemoryEngine, fact: str, other: str, question: str
) -> None:
    target = await engine.write(OWNER, Fact(fact))
    await engine.write(OWNER, Fact(other))
    hits = await engine.search(OWNER, question, k=2)
    assert hits and hits[0].id == target.id


@pytest.mark.parametrize(
    ("own", "related", "question"),
    [
        ("My boss is Karen", "The shop manager is Tom", "Who is my boss?"),
        ("我老板姓王", "楼下超市的经理姓李", "我老板姓什么？"),
    ],
)
async def test_the_question_s_own_word_outranks_a_related_one(
    engine: MemoryEngine, own: str, related: str, question: str
) -> None:
    target = await engine.write(OWNER, Fact(own))
    other = await engine.write(OWNER, Fact(related))
    hits = await engine.search(OWNER, question, k=2)
    assert [h.id for h in hits] == [target.id, other.id]
    assert hits[0].match > hits[1].match > 0  # the related word counts, less than the word itself


def test_group_match_counts_a_related_word_at_its_share() -> None:
    group, own = frozenset({"boss", "manag"}), frozenset({"boss"})
    assert group_match(group, own, {"boss"}) == 1.0
    assert group_match(group, own, {"manag"}) == RELATED_WEIGHT
    assert group_match(group, frozenset(), {"manag"}) == 1.0  # named only by an ask form
    assert group_match(group, own, {"karen"}) == 0.0


@pytest.mark.parametrize(
    ("fact", "question"), [("My manager is Karen", "Who is my boss?"), ("我的领导姓赵", "我老板是谁？")]
)
async def test_without_related_words_only_the_question_s_own_words_count(
    engine: MemoryEngine, fact: str, question: str
) -> None:
    target = await engine.write(OWNER, Fact(fact))
    assert [h.id for h in await engine.retrieve(OWNER, question, touch=False)] == [target.id]
    assert await engine.retrieve(OWNER, question, touch=False, related=False) == []


def test_a_group_finds_its_kinds_but_one_kind_does_not_find_another() -> None:
    assert any("yoga" in g and "swim" in g for g in _groups("Do I exercise at all?"))
    assert any("瑜伽" in g for g in _groups("我平时运动吗？"))
    assert not any("swim" in g for g in _groups("Do I go running?"))
    assert not any("游泳" in g for g in _groups("我跑步吗？"))
