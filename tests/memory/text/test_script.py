"""Traditional → Simplified for matching (``memory/text/script.py``), and the matchers that read it: the
tokenizer, the gate, the question detector and the offline stand-in's clauses (issue 35)."""

from __future__ import annotations

import pytest

from memory.model.keeper import FactKeeper
from memory.retrieval import gate, question
from memory.text import tokenizer
from memory.text.script import restore, to_simplified

# (Traditional, its Simplified twin): questions and statements of a life.
TWINS = [
    ("你記得我什麼？", "你记得我什么？"),
    ("我女兒幾歲了？", "我女儿几岁了？"),
    ("我的車是什麼顏色？", "我的车是什么颜色？"),
    ("你還記得我上次去哪裡旅行嗎？", "你还记得我上次去哪里旅行吗？"),
    ("我兒子在哪個學校讀書？", "我儿子在哪个学校读书？"),
    ("我們上週去了臺灣的夜市", "我们上周去了台湾的夜市"),
    ("我一共去過幾次醫院？", "我一共去过几次医院？"),
]


@pytest.mark.parametrize(("traditional", "simplified"), TWINS)
def test_to_simplified_gives_the_twin_of_the_same_length(traditional: str, simplified: str) -> None:
    assert to_simplified(traditional) == simplified
    assert len(to_simplified(traditional)) == len(traditional)
    assert to_simplified(simplified) == simplified


def test_text_without_han_is_returned_as_it_is() -> None:
    for text in ["hello, how are you?", "café ☕ über", "", "😀🎉"]:
        assert to_simplified(text) is text


@pytest.mark.parametrize(("traditional", "simplified"), TWINS)
def test_the_tokenizer_indexes_and_asks_both_alike(traditional: str, simplified: str) -> None:
    assert tokenizer.index_text(traditional) == tokenizer.index_text(simplified)
    assert tokenizer.query_terms(traditional) == tokenizer.query_terms(simplified)


@pytest.mark.parametrize(("traditional", "simplified"), TWINS)
def test_the_gate_treats_a_traditional_message_like_its_simplified_twin(
    traditional: str, simplified: str
) -> None:
    for judge in (
        gate.should_retrieve,
        gate.personal_question,
        gate.topic_question,
        gate.asks,
        gate.to_listener,
        gate.asks_about_themselves,
    ):
        assert judge(traditional) == judge(simplified), judge.__name__
    assert question.memories_wanted(traditional, 5) == question.memories_wanted(simplified, 5)


def test_an_overview_request_in_traditional_is_one() -> None:
    assert gate.asks_about_themselves("你記得我什麼？")
    assert gate.should_retrieve("你記得我什麼？")


def test_restore_puts_the_typed_characters_back() -> None:
    typed = "我女兒叫小美，她在臺北讀書"
    assert restore("我女儿叫小美", typed) == "我女兒叫小美"
    assert restore("我在台北读书", typed) == "我在臺北讀書"  # "我" added, the rest as typed
    assert restore("anything", "plain ascii") == "anything"


async def test_the_offline_keeper_keeps_the_fact_as_typed() -> None:
    typed = "我女兒叫小美，今年五歲了"
    facts = await FactKeeper().facts(typed)
    simplified = await FactKeeper().facts(to_simplified(typed))
    assert [to_simplified(f.content) for f in facts] == [f.content for f in simplified]
    assert facts and all(f.content == restore(to_simplified(f.content), typed) for f in facts)
    assert any("女兒" in f.content for f in facts)


# Northern Mandarin's first person (``script._REGIONAL``): read as 我 by every matcher, kept as typed.
REGIONAL = [
    ("俺家闺女今年上初一了", "我家闺女今年上初一了"),
    ("俺老婆叫啥来着？", "我老婆叫啥来着？"),
    ("俺们下个月搬到郑州去", "我们下个月搬到郑州去"),
]


@pytest.mark.parametrize(("regional", "standard"), REGIONAL)
def test_the_northern_first_person_is_read_as_wo(regional: str, standard: str) -> None:
    assert to_simplified(regional) == standard
    assert tokenizer.index_text(regional) == tokenizer.index_text(standard)
    for judge in (gate.should_retrieve, gate.personal_question, gate.asks):
        assert judge(regional) == judge(standard), judge.__name__


async def test_the_keeper_keeps_a_fact_told_with_an_as_typed() -> None:
    typed = "俺在郑州送外卖，干了三年了"
    facts = await FactKeeper().facts(typed)
    assert facts and all("我" not in f.content for f in facts)
    assert any(f.content.startswith("俺在郑州") for f in facts)
