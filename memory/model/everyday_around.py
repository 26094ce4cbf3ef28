"""The offline rules for what is around the speaker: statements whose subject is not "I" but someone or
something of theirs — a person or pet by name ("Biscuit is a beagle", "豆豆在读幼儿园大班"), a name's
belongings and dates ("Mia's birthday is 22 November", "陈静的婚礼定在十一月二号"), a thing of the household
and where it is kept or when it is due ("The boiler was serviced in October", "车每年三月年检"), in English
and Chinese. ``everyday_rules.py`` holds the first-person forms.

A name cannot be told from a word in lower case, so each form here pairs a bare subject with a predicate
that only says something lasting about a person, pet or thing (an age, a weight, a fear, a school year, a
date, a day of the week) or with a word of an everyday class (``memory/text/category.py``), which also files
the fact where it does not fade. The rules see the normalised sentence of ``quick_extract.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory.model.quick_rules import PREFERENCES_TOPIC, Match, Rules
from memory.records import GENERAL_TOPIC
from memory.text.category import CLASS_CATEGORY, everyday_class

_Rule = Callable[[re.Match[str]], "Match | None"]
_MANNER_CLASSES = frozenset({"tastes", "routines"})

# Words that start a sentence without naming someone or something of the speaker's.
_NOT_A_NAME = (
    r"it|this|that|these|those|there|here|what|who|which|where|when|why|how|he|she|they|we|you|i|"
    r"everyone|everybody|nobody|somebody|someone|something|nothing|everything|anything|today|tomorrow|"
    r"tonight|yesterday|life|time|weather|let|one|mine|nothing|all|each|every|some|any|no|a|an|the|my|"
    r"our|your|his|her|their|mum|mom|dad|traffic|work|dinner|lunch|breakfast"
)
_NAME = rf"(?!(?:{_NOT_A_NAME})\b)[a-z][a-z-]+"
# What is said in passing about a thing or person ("Sarah's car is broken", "the bus is late again").
_PASSING = (
    r"about to|going to|gonna|so|too|really|very|being|driving me|dying|dead|broken|late|early|ready|"
    r"cold|hot|empty|full|closed|open|off|on fire|acting|annoying|in a mood|not working|out of"
)
_MONTH = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_EN_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH})|(?:{_MONTH}) \d{{1,2}}(?:st|nd|rd|th)?|"
    rf"(?:in|by|until|since|from|every|each|next|last) (?:{_MONTH})|(?:19|20)\d\d|"
    r"(?:on|by|every) (?:mon|tues|wednes|thurs|fri|satur|sun)days?|the (?:first|second|third|last) "
    r"\w+ of)\b"
)
_EN_ROUTINE = re.compile(
    r"\b(?:on (?:mon|tues|wednes|thurs|fri|satur|sun)days|every|weekly|daily|monthly|fortnightly|"
    r"at (?:lunchtime|bedtime)|(?:before|after) (?:breakfast|lunch|dinner|work|school|bed))\b"
)
_ZH_NUM = r"[\d一二三四五六七八九十两半]"
_ZH_DATE = re.compile(
    rf"{_ZH_NUM}+月(?:{_ZH_NUM}+[号日])?|{_ZH_NUM}+[号日]|\d{{4}}年|周[一二三四五六日天]|星期[一二三四五六日天]|"
    r"每[天日晚周年月]|每个?[月星礼]|国庆|春节|元旦|五一|中秋|端午|寒假|暑假|明年|下个?月"
)
_ZH_NOT_A_NAME = (
    r"(?!我|你|您|他|她|它|这|那|今|明|昨|后|前|大家|有人|谁|什么|哪|天气|时间|每|上|下|去|来|刚|别|就|又|还|也|都|"
    r"真|好|太|总|终于|唉|哎|啊|又是|就是|不是|可能|应该)"
)


def _kept(found: str | None) -> Match | None:
    if found is None:
        return None
    topic = PREFERENCES_TOPIC if found in _MANNER_CLASSES else GENERAL_TOPIC
    return Match(CLASS_CATEGORY[found], topic)


def when_class(text: str) -> str | None:
    """ "dates" when the text names a date, "routines" when it names a weekly or daily time, else None."""
    if _EN_ROUTINE.search(text) or "每" in text:
        return "routines"
    return "dates" if _EN_DATE.search(text) or _ZH_DATE.search(text) else None


def _class_or_when(fallback: str | None = None) -> _Rule:
    """Keep the sentence when it names an everyday class, a date ("dates") or a weekly time
    ("routines"); else ``fallback``'s class (None: not kept)."""

    def rule(m: re.Match[str]) -> Match | None:
        return _kept(everyday_class(m.string) or when_class(m.string) or fallback)

    return rule


AROUND_EN: Rules = [
    # A name's belongings and dates: "Mia's birthday is 22 November", "Biscuit's vet is Dr Ahmed".
    (
        re.compile(
            rf"^{_NAME}'s? (?:[\w'-]+ ){{0,3}}?(?:is|are|was|were|has|have|renews|expires|starts|ends|"
            r"meets|falls|lives|works|goes|takes|gets)\b"
            rf"(?! (?:{_PASSING})\b)"
        ),
        _class_or_when(),
    ),
    # Someone or some pet by name: "Biscuit is a beagle", "Pebble is twelve years old",
    # "Mia has ballet on Tuesdays at 5", "Priya is a software tester at a bank".
    (
        re.compile(
            rf"^{_NAME}(?: and {_NAME})? (?:is|are) (?:\w+ )?(?:years? old|months? old|allergic to|"
            r"scared of|afraid of|terrified of|frightened of|in (?:year|grade|reception|nursery)|"
            r"at (?:school|nursery|university|college)|deaf|blind|diabetic|vegetarian|vegan|"
            r"neutered|spayed|chipped)\b"
            rf"|^{_NAME} weighs \w+ (?:kilos?|kg|pounds|lbs|stone|grams)\b"
        ),
        lambda _m: _kept("people"),
    ),
    (
        re.compile(rf"^{_NAME}(?: and {_NAME})? (?:only eats|won't eat|doesn't eat|can't eat|can't have) "),
        _class_or_when("health"),
    ),
    (
        re.compile(
            rf"^{_NAME}(?: and {_NAME})? (?:is|are|has|have|goes to|go to|eats|sleeps|wants|needs|"
            r"loves|hates|likes|plays|works|teaches|studies|"
            r"lives|takes|gets|walks|waters|looks after|feeds|picks up|drops off|comes|visits) "
        ),
        _class_or_when(),
    ),
    # Things of the household and where or when: "The cat sleeps on the shelf above the radiator",
    # "The car insurance renews on 1 June", "The fuse box is in the cupboard under the stairs".
    (
        re.compile(
            r"^the (?:[\w'-]+ ){0,3}?[\w'-]+ (?:is|are|was|were|gets|get|sleeps|renews|expires|"
            r"is due|was serviced|needs|meets|lives|stays|goes|comes|sits|hangs)\b"
            rf"(?! (?:{_PASSING})\b)"
        ),
        _class_or_when(),
    ),
    # A household thing or person of the speaker's and a date: "The kids go back to school on 4 September".
    (
        re.compile(r"^(?:the|our|my) (?P<noun>[\w'-]+(?: [\w'-]+){0,2}) (?!is\b|are\b)[a-z']+ [\w' -]*$"),
        lambda m: _kept(everyday_class(m.group("noun"))) if when_class(m.string) else None,
    ),
    # "Bin day is Tuesday": a named day of the household.
    (
        re.compile(r"^[\w ]{2,20} day is (?:on )?(?:mon|tues|wednes|thurs|fri|satur|sun)day"),
        lambda _m: _kept("home"),
    ),
    # "Shellfish makes me ill": what the body does not take.
    (
        re.compile(
            r"^[\w' -]{2,30} (?:doesn't|does not|don't|do not) agree with me\b"
            r"|^[\w' -]{2,30} (?:makes|make|gives|give) me (?:an? )?(?:stomach \w+|\w+ ?aches?|ill|"
            r"sick|itchy|itch|"
            r"sneeze|bloated|nauseous|"
            r"a rash|hives|migraines?|headaches?|heartburn|a headache)\b"
        ),
        lambda _m: _kept("health"),
    ),
]

AROUND_ZH: Rules = [
    # A name's belongings and dates: "豆豆的生日是二月三号", "陈静的婚礼定在十一月二号".
    (
        re.compile(
            rf"^{_ZH_NOT_A_NAME}[\u4e00-\u9fff]{{1,4}}的[^，,]{{1,6}}?(?:是|在|定在|定于|打算|准备|计划)"
        ),
        _class_or_when(),
    ),
    # Someone or some pet by name and a lasting attribute: "旺财是一只柯基", "胖虎今年三岁了",
    # "旺财怕打雷", "旺财体重十二斤".
    (
        re.compile(
            rf"^{_ZH_NOT_A_NAME}[\u4e00-\u9fff]{{2,3}}(?:是一[只条头匹]|今年{_ZH_NUM}+岁|{_ZH_NUM}+岁了|怕|"
            r"特别怕|很怕|体重|对.{1,6}过敏|做过|打过|打了|吃不了|不能吃|只吃|不吃)"
        ),
        lambda m: _class_or_when("people")(m),
    ),
    (
        re.compile(
            rf"^{_ZH_NOT_A_NAME}[\u4e00-\u9fff]{{2,3}}(?:特别|很|最|超|非常|只)?(?:在读|在上|在一家|在一所|每天|每周|周[一二三四五六日天]|"
            r"喜欢|想养|想要|上个?月)"
        ),
        _class_or_when(),
    ),
    # "旺财是前年抱回家的": when a pet or thing came to the household.
    (
        re.compile(
            rf"^{_ZH_NOT_A_NAME}[\u4e00-\u9fff]{{2,3}}是.{{0,10}}(?:抱回家|领养|领回家|捡回来|接回家)的"
        ),
        lambda _m: _kept("pets"),
    ),
    # "教导主任负责排我的课": someone of the speaker's and what they do for them.
    (
        re.compile(r"^(?P<noun>[^，,我]{2,8}?)(?:负责|管着?|帮我|给我|替我)"),
        lambda m: _kept(everyday_class(m.group("noun"))),
    ),
    # Things of the household and when: "车每年三月年检", "房贷每个月还六千五", "冰箱是去年买的".
    (
        re.compile(
            rf"^(?P<noun>{_ZH_NOT_A_NAME}[^，,]{{1,6}}?)(?:每年|每个?月|每周|每天|是.{{0,8}}买的|在.{{1,8}}买的|{_ZH_NUM}+月|\d{{4}}年|明年|下个?月)"
        ),
        lambda m: _kept(everyday_class(m.group("noun")) or ("routines" if "每" in m.string else None)),
    ),
    # What the body does not take: "虾吃多了我就过敏", "牛奶会让我肚子疼".
    (
        re.compile(
            r"^[^，,]{1,10}?(?:吃多了|一吃就?|吃了就?|喝了就?|一喝就?|会让我|让我)我?(?:会|就)?"
            r"(?:胃疼|胃痛|肚子疼|拉肚子|过敏|起疹子|头疼|头痛|偏头痛|恶心|不舒服|难受)"
        ),
        lambda _m: _kept("health"),
    ),
    # "<something> needs to be handed in by Friday": "…要在周五前交给…".
    (re.compile(r"^[^，,我]{2,12}?(?:要在|得在|必须在).{0,6}(?:前|之前|以前)"), _class_or_when()),
]

AROUND_RULES: Rules = AROUND_EN + AROUND_ZH
