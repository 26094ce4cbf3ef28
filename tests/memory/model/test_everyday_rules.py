"""The offline rules keep everyday first-person facts of every class, in English and Chinese, and file
them where they do not fade; chit-chat and passing remarks are not kept (memory/model/everyday_rules.py)."""

from __future__ import annotations

import pytest

from memory.model.quick_extract import quick_facts
from memory.retrieval.decay import MEDIUM_DECAY

FADING = MEDIUM_DECAY | {"temp", "debug"}

# (statement, the category it must be filed in), grouped by class.
KEPT = {
    "people": [
        ("My son is called Leo", "identity"),
        ("My best friend Marco is a firefighter", "identity"),
        ("Sophie is my niece", "identity"),
        ("I've got two daughters", "identity"),
        ("我女儿叫小雨", "identity"),
        ("我老公在银行工作", "identity"),
        ("我最好的朋友叫阿杰", "identity"),
        ("乐乐是我儿子", "identity"),
        ("我和我老公结婚十年了", "identity"),
    ],
    "pets": [
        ("We have a cat named Pepper", "identity"),
        ("Our dog Rufus is a beagle", "identity"),
        ("我家的狗叫旺财", "identity"),
        ("我家有一只叫咪咪的猫", "identity"),
        ("我们家的鹦鹉会说话", "identity"),
    ],
    "health": [
        ("I have type 1 diabetes", "identity"),
        ("I've been diagnosed with asthma", "identity"),
        ("I'm gluten intolerant", "identity"),
        ("I take metformin", "identity"),
        ("I don't eat pork", "config"),
        ("我有高血压", "identity"),
        ("我乳糖不耐受", "identity"),
        ("I suffer from back pain", "identity"),
        ("I'm on blood thinners", "identity"),
        ("我在吃降血脂的药", "identity"),
        ("我吃素", "config"),
    ],
    "work": [
        ("I work as a paramedic", "identity"),
        ("I teach maths at a high school", "identity"),
        ("My manager is Priya", "identity"),
        ("I've worked at the bank for ten years", "identity"),
        ("我是做会计的", "identity"),
        ("我在一家外企做财务", "identity"),
        ("我的领导姓李", "identity"),
        ("I report to Sarah, the head of marketing", "identity"),
        ("I've been a software engineer for eight years", "identity"),
        ("我们部门经理姓王", "identity"),
    ],
    "home": [
        ("I drive a red Toyota Corolla", "identity"),
        ("My car is a grey Skoda", "identity"),
        ("I keep my passport in the top drawer", "identity"),
        ("The spare key is under the flower pot", "identity"),
        ("我开一辆白色的本田", "identity"),
        ("我用的是华为手机", "config"),
        ("家里的备用钥匙在鞋柜里", "identity"),
        ("车钥匙挂在门口", "identity"),
        ("The passports are in the safe in the study", "identity"),
        ("我平时把车停在地下车库", "config"),
    ],
    "routines": [
        ("I play the cello on Sundays", "identity"),
        ("I go swimming on Tuesdays", "config"),
        ("Every Friday I have lunch with my dad", "identity"),
        ("I usually get up at 6:30", "config"),
        ("我每周日下午练书法", "config"),
        ("我周末弹钢琴", "identity"),
        ("每周六我都去游泳", "config"),
        ("每个周日我都给奶奶打电话", "identity"),
    ],
    "dates": [
        ("My birthday is on the 14th of July", "identity"),
        ("Our wedding anniversary is October 3rd", "identity"),
        ("我的生日是三月八号", "identity"),
        ("我们的结婚纪念日是五月二十号", "identity"),
    ],
    "appointments": [
        ("I have a dentist appointment on May 12th", "decision"),
        ("I'm seeing the physio next Thursday", "decision"),
        ("我下周二要去看牙医", "decision"),
    ],
    "plans": [
        ("I want to learn Japanese next year", "decision"),
        ("I'd like to run a half marathon", "decision"),
        ("My goal is to save enough for a house", "decision"),
        ("我想今年学会游泳", "decision"),
        ("我的目标是今年减肥十斤", "decision"),
        ("我想三十岁之前买房", "decision"),
    ],
    "tastes": [
        ("I can't stand horror movies", "config"),
        ("Coffee is my favourite drink", "config"),
        ("I'm a huge fan of Studio Ghibli films", "config"),
        ("我讨厌香菜", "config"),
        ("我对摄影很感兴趣", "config"),
    ],
    "education": [
        ("I studied biology at the University of Leeds", "identity"),
        ("I have a master's degree in economics", "identity"),
        ("I'm taking an evening course in photography", "identity"),
        ("我是北京大学毕业的", "identity"),
        ("我学的是计算机专业", "identity"),
        ("我在上日语课", "identity"),
        ("我2015年毕业于清华大学", "identity"),
    ],
}
CASES = [(kind, text, category) for kind, items in KEPT.items() for text, category in items]


@pytest.mark.parametrize(("kind", "text", "category"), CASES)
def test_an_everyday_statement_is_kept_where_it_does_not_fade(kind: str, text: str, category: str) -> None:
    facts = quick_facts(text)
    assert len(facts) == 1, (kind, text, [f.content for f in facts])
    assert facts[0].content == text  # as said, never rewritten
    assert facts[0].category == category, (kind, text)
    assert facts[0].category not in FADING


@pytest.mark.parametrize(
    "text",
    [
        *("I'm so tired.", "I think it's going to rain.", "I just saw a funny video.", "I guess so."),
        *("My phone is about to die lol", "I have no idea.", "I'm bored out of my mind.", "I need a coffee."),
        *("I saw a cute dog on the way home today.", "I'm at the station now.", "I'm hungry."),
        *("我今天好累啊", "我觉得要下雨了", "我刚看了个搞笑视频", "我也不知道", "我手机快没电了"),
        *("我无聊死了", "我开玩笑的", "我到车站了", "我饿了", "我妈说我胖了", "我马上回来"),
        *("书放在桌上", "我吃火锅", "我腰好酸啊", "我跟他认识很久了", "I report bugs to the team"),
    ],
)
def test_chit_chat_and_passing_remarks_are_not_kept(text: str) -> None:
    assert quick_facts(text) == []


@pytest.mark.parametrize(
    ("text", "contents"),
    [
        # The clause after a named pet or person describes it: it stays with it (never "我叫橙子").
        ("我养了一只橘猫，叫橙子", ["我养了一只橘猫，叫橙子"]),
        ("我女儿叫小雨，今年五岁", ["我女儿叫小雨，今年五岁"]),
        (
            "My wife Anna works as a pharmacist and loves hiking",
            ["My wife Anna works as a pharmacist and loves hiking"],
        ),
        # The speaker's own clauses still split, also after ", and".
        (
            "I live in Lyon, and I play the cello on Sundays",
            ["I live in Lyon", "I play the cello on Sundays"],
        ),
    ],
)
def test_a_clause_about_someone_else_keeps_its_subject(text: str, contents: list[str]) -> None:
    assert [f.content for f in quick_facts(text)] == contents
