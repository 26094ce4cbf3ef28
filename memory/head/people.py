"""Statements about one's people and things, composed from parts (issue 35, round 5); Chinese first,
English beside it (``EN_KINDS``).

The persona corpora say what "I" am and like; they barely hold what a person says in a chat about the
people and things around them — a parent's age, a loan to a cousin, the cat's name, a food they cannot
stand said object-first, where the spare key is. The third blind set lost most of its Chinese tells of
these kinds, and the chit-chat the head learns "not kept" from (LCCC) is full of the same register. Each
statement here is a kind of fact (``KINDS``: a template per way of saying it, slots filled from general
word lists of relations, ages, sums, pets, foods, places — none taken from an evaluation set) in a chat
register (a lead, a particle, a moaning tail, with or without "我"); ``SMALL_TALK`` composes the other
side: remarks about the world, the weather, a show, the conversation itself, which say nothing lasting of
the speaker. Deterministic: the same seed gives the same sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from memory.head.people_words import (
    AGES,
    AMOUNTS,
    BRANDS,
    CITIES,
    DEBTS,
    EN_AGES,
    EN_AMOUNTS,
    EN_FOODS,
    EN_HABITS,
    EN_ILL,
    EN_ITEMS,
    EN_JOBS,
    EN_LIKES,
    EN_NEXT,
    EN_OWNED,
    EN_PAST,
    EN_PET_NAMES,
    EN_PETS,
    EN_PLACES,
    EN_PLANS,
    EN_RELATIONS,
    FOODS,
    HABITS,
    ILLNESSES,
    ITEMS,
    JOBS,
    LIKES,
    PET_NAMES,
    PETS,
    PLACES,
    PLANS,
    RELATIONS,
    THINGS_OWNED,
    WHEN_NEXT,
    WHEN_PAST,
)

_LEADS = ["", "", "", "", "对了，", "话说", "跟你说，", "哎，", "说起来，", "我跟你讲，", "嗯，"]
_TAILS = ["", "", "", "", "。", "呢", "哈", "啦", "了", "嘿嘿", "😂", "，愁死了", "，烦", "~", "哦", "呀"]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of statement: its category (``memory/text/category.py``'s guide) and ways of saying it."""

    category: str
    templates: tuple[str, ...]


KINDS: tuple[Kind, ...] = (
    Kind(
        "event",
        (
            "{rel}{age}了",
            "{rel}今年{age}",
            "{rel}{age}了，身体还行",
            "{rel}在{city}{job}",
            "{rel}退休前是{job}的",
            "{rel}{job}好多年了",
            "{rel}有{ill}，一直在吃药",
            "{rel}{when_past}查出来{ill}",
            "{rel}{when_past}做了个手术",
            "{rel}住在{city}，一年回来一次",
            "{rel}{when_past}刚生了二胎",
            "{rel}明年高考",
            "{rel}刚上初一",
            "{rel}在{city}读大学",
            "{rel}跟我们一起住",
            "{rel}{when_past}走了",
            "跟{rel}好几年没来往了",
            "{rel}下个月结婚",
        ),
    ),
    Kind(
        "event",
        (
            "家里养了只{pet}，叫{pname}",
            "{pname}是只{pet}",
            "{pname}今年{age}了",
            "养了两只{pet}",
            "{pname}{when_past}生了一窝小的",
            "{pname}是{when_past}捡回来的",
            "{pname}一见生人就叫",
            "{pname}只吃{like}味的",
            "{pname}前阵子刚打了疫苗",
        ),
    ),
    Kind(
        "config",
        (
            "{rel}借了我{amt}",
            "{rel}借了我{amt}，还没还",
            "借给{rel}{amt}，说年底还",
            "还欠{rel}{amt}呢",
            "{debt}还欠着{amt}",
            "{debt}每个月还{amt}",
            "每个月给{rel}{amt}生活费",
            "工资一个月{amt}",
            "退休金一个月{amt}",
        ),
    ),
    Kind(
        "config",
        (
            "{food}我是真受不了",
            "{food}我一口都不吃",
            "{food}我从来不碰",
            "{food}是真吃不来",
            "不吃{food}，闻着就难受",
            "{like}我是真爱吃",
            "{like}我一个礼拜要吃三回",
            "每天都得来点{like}",
            "{like}我能天天吃",
            "对{food}过敏，一吃就起疹子",
            "喝{food}会拉肚子",
            "{ill}好几年了",
            "有{ill}，每天早上吃药",
            "{ill}，一变天就难受",
            "牙不好，硬的咬不动",
            "眼睛老花，看手机得戴眼镜",
            "耳朵有点背，说话得大声点",
        ),
    ),
    Kind(
        "config",
        (
            "{habit}",
            "每天{habit}",
            "习惯{habit}",
            "雷打不动{habit}",
            "这么多年都是{habit}",
        ),
    ),
    Kind(
        "config",
        (
            "{item}放在{place}",
            "{item}在{place}放着",
            "手机用的{brand}的",
            "家里的电视是{brand}的",
            "车是{brand}的，开了七八年了",
            "有{owned}",
            "家里有{owned}",
            "{owned}是{when_past}买的",
            "住六楼，没电梯",
            "房子是租的，一个月两千五",
            "住的老小区，楼下就是菜市场",
        ),
    ),
    Kind(
        "decision",
        (
            "{when_next}打算{plan}",
            "想{when_next}{plan}",
            "{when_next}准备{plan}",
            "在考虑{when_next}{plan}",
            "等{rel}放假了，想{plan}",
            "跟{rel}商量好了，{when_next}{plan}",
            "一直想{plan}，还没顾上",
        ),
    ),
    Kind(
        "event",
        (
            "{when_past}去了趟{city}",
            "{when_past}把{owned}卖了",
            "{when_past}搬到{city}来的",
            "{when_past}丢了钱包，证件都补办了",
            "{when_past}摔了一跤，腿现在还疼",
            "{when_past}刚换了工作",
            "{when_past}退休的",
            "{when_past}跟{rel}吵了一架，现在还没和好",
        ),
    ),
    Kind(
        "identity",
        (
            "老家{city}的",
            "在{city}住了三十年了",
            "以前{job}，现在退休了",
            "{job}的，干了二十多年",
            "今年{age}了",
            "属马的，六六年生的",
            "初中毕业就出来{job}了",
        ),
    ),
)

# What small talk says instead: the world, the weather, a show, the conversation — nothing of a life.
SMALL_TALK = (
    "今天这天气热死人了",
    "外面下大雨了",
    "这个电视剧越看越没意思",
    "{city}的房价又涨了",
    "现在的年轻人都不爱结婚了",
    "这球踢得太臭了",
    "菜价又涨了",
    "哈哈哈笑死我了",
    "你说的有道理",
    "那也没办法啊",
    "这事儿以后再说吧",
    "随便吧都行",
    "这个视频挺搞笑的",
    "{like}好像挺多人爱吃的",
    "听说{city}那边地震了",
    "{brand}又出新手机了",
    "今年冬天好冷啊",
    "这新闻是真的吗",
    "太离谱了吧",
    "我也是刚听说",
    "那个明星又上热搜了",
    "周末人肯定多",
    "你这话说的",
    "行吧行吧",
    "就这样吧，不说了",
    "好久没下雪了",
    "这个价格还挺划算",
    "堵车堵得要命",
    "这首歌挺好听的",
    "看着就好吃",
)


EN_KINDS: tuple[Kind, ...] = (
    Kind(
        "event",
        (
            "{rel} is {age}",
            "{rel} turned {age} last month",
            "{rel} works as {job}",
            "{rel} used to be {job}",
            "{rel} has {ill}",
            "{rel} lives up in Glasgow",
            "{rel} had a hip op {when_past}",
            "{rel} passed away {when_past}",
            "{rel} starts uni in september",
            "haven't spoken to {rel} in years",
            "{rel} is getting married in june",
            "{rel}'s expecting again",
        ),
    ),
    Kind(
        "event",
        (
            "we've got a {pet} called {pname}",
            "{pname}'s a {pet}",
            "{pname} is {age} now",
            "{pname} only eats the chicken one",
            "{pname} hates the hoover",
            "got {pname} from the rescue {when_past}",
        ),
    ),
    Kind(
        "config",
        (
            "lent {rel} {amt}",
            "{rel} still owes me {amt}",
            "owe {rel} {amt}",
            "still paying off {amt} on the credit card",
            "rent's {amt} a month",
            "council tax comes out on the 1st",
            "can't stand {food}",
            "{food}, can't stand it",
            "never touch {food}",
            "{food} makes me ill",
            "allergic to {food}",
            "love {like}",
            "{like} every friday without fail",
            "got {ill}",
            "been on tablets for {ill} for years",
            "deaf in one ear so speak up",
            "{habit}",
            "always {habit}",
            "{item}'s {place}",
            "keep {item} {place}",
            "drive {owned}",
            "got {owned}",
            "phone's an old samsung",
            "bins go out on a wednesday",
        ),
    ),
    Kind(
        "decision",
        (
            "want to {plan} {when_next}",
            "thinking of trying to {plan}",
            "planning to {plan} {when_next}",
            "we're going to {plan} {when_next}",
            "hoping to {plan} before I'm 70",
            "booked in at the doctor's next tuesday",
        ),
    ),
    Kind(
        "event",
        (
            "went to Spain {when_past}",
            "sold {owned} {when_past}",
            "moved here {when_past}",
            "had a fall {when_past}, knee's still not right",
            "retired {when_past}",
            "fell out with {rel} {when_past}",
        ),
    ),
    Kind(
        "identity",
        (
            "I'm {age}",
            "was {job} for 30 years",
            "retired now, used to be {job}",
            "born and bred in Hull",
            "left school at 16",
            "been in this house since 1988",
        ),
    ),
)

EN_SMALL_TALK = (
    "terrible weather today",
    "did you see the match last night",
    "prices in the shops are shocking",
    "that programme's gone downhill",
    "the trains are a nightmare again",
    "funny how things turn out",
    "can't argue with that",
    "fair enough",
    "ha that's brilliant",
    "they say it'll snow next week",
    "everyone's got a phone glued to their hand these days",
    "not sure about that one",
    "that's the way it goes",
    "the news is depressing",
    "they're digging up the road again",
)

_EN_LEADS = ["", "", "", "", "oh and ", "btw ", "also ", "fyi ", "well ", "ok so "]
_EN_TAILS = ["", "", "", "", ".", " lol", " haha", "!", " tbh", " mind", " to be fair", " 😂"]


def _fill(template: str, rng: random.Random) -> str:
    slots = {
        "rel": RELATIONS,
        "age": AGES,
        "city": CITIES,
        "job": JOBS,
        "ill": ILLNESSES,
        "amt": AMOUNTS,
        "debt": DEBTS,
        "pet": PETS,
        "pname": PET_NAMES,
        "food": FOODS,
        "like": LIKES,
        "brand": BRANDS,
        "item": ITEMS,
        "place": PLACES,
        "when_past": WHEN_PAST,
        "when_next": WHEN_NEXT,
        "plan": PLANS,
        "habit": HABITS,
        "owned": THINGS_OWNED,
    }
    return template.format(**{name: rng.choice(words) for name, words in slots.items()})


def _fill_en(template: str, rng: random.Random) -> str:
    slots = {
        "rel": EN_RELATIONS,
        "age": EN_AGES,
        "job": EN_JOBS,
        "ill": EN_ILL,
        "amt": EN_AMOUNTS,
        "pet": EN_PETS,
        "pname": EN_PET_NAMES,
        "food": EN_FOODS,
        "like": EN_LIKES,
        "item": EN_ITEMS,
        "place": EN_PLACES,
        "when_past": EN_PAST,
        "when_next": EN_NEXT,
        "plan": EN_PLANS,
        "habit": EN_HABITS,
        "owned": EN_OWNED,
    }
    return template.format(**{name: rng.choice(words) for name, words in slots.items()})


def _typed(text: str, lang: str, rng: random.Random) -> str:
    """As typed in a chat: a lead and a tail (a particle, a laugh, a moan)."""
    if lang == "en":
        return (rng.choice(_EN_LEADS) + text + rng.choice(_EN_TAILS)).strip()
    tail = rng.choice(_TAILS)
    if tail in ("了",) and text.endswith("了"):
        tail = ""
    return rng.choice(_LEADS) + text + tail


def statements(per_template: int = 3, lang: str = "zh") -> list[tuple[str, str]]:
    """(text, category) of every kind of ``lang``, ``per_template`` sentences per template,
    deterministic."""
    rng = random.Random(f"people-{lang}")
    fill = _fill if lang == "zh" else _fill_en
    out: dict[str, str] = {}
    for kind in KINDS if lang == "zh" else EN_KINDS:
        for template in kind.templates:
            for _ in range(per_template):
                out.setdefault(_typed(fill(template, rng), lang, rng), kind.category)
    return list(out.items())


def small_talk(per_template: int = 3, lang: str = "zh") -> list[str]:
    """Chit-chat in the same register, saying nothing lasting of the speaker."""
    rng = random.Random(f"people-{lang}-small-talk")
    fill, lines = (_fill, SMALL_TALK) if lang == "zh" else (_fill_en, EN_SMALL_TALK)
    return list(dict.fromkeys(_typed(fill(t, rng), lang, rng) for t in lines for _ in range(per_template)))
