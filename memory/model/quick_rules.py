"""The rule tables of quick extraction (``quick_extract.py``): which first-person sentences state a
lasting fact, and the category, topic and predicate each gets (identity, preferences, decisions, events)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memory.records import GENERAL_TOPIC

PREFERENCES_TOPIC = "preferences"
_EN_DEICTIC = re.compile(r"^(?:it|this|that|these|those|them|him|her|one|so|too)\b")
_ZH_DEICTIC = re.compile(r"^(?:这个|那个|这样|那样|它|这些|那些|他|她|这|那)(?:[\s。.!！,，]|$)")


_JOBS_EN = (
    r"engineer|developer|programmer|designer|teacher|student|doctor|nurse|manager|scientist|researcher|"
    r"writer|lawyer|consultant|analyst|architect|accountant|founder|co-founder|ceo|cto|cfo|pm|"
    r"professor|lecturer|artist|musician|photographer|chef|driver|pilot|freelancer|intern|dentist|"
    r"pharmacist|journalist|editor|translator|sre|devops|administrator|admin|tester|marketer|salesperson"
)


_JOBS_ZH = (
    r"工程师|程序员|开发者|开发|设计师|老师|教师|学生|研究生|博士生?|本科生|医生|护士|经理|研究员|作家|律师|"
    r"顾问|分析师|架构师|会计|创始人|运维|测试|产品|运营|厨师|司机|记者|编辑|翻译|实习生|教授|画家|摄影师"
)


# "my <attribute> is …" attributes with one value at a time: (predicate, category).
_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "name": ("name", "identity"),
    "full name": ("name", "identity"),
    "first name": ("name", "identity"),
    "birthday": ("birthday", "identity"),
    "date of birth": ("birthday", "identity"),
    "email": ("email", "identity"),
    "email address": ("email", "identity"),
    "phone": ("phone", "identity"),
    "phone number": ("phone", "identity"),
    "job": ("occupation", "identity"),
    "occupation": ("occupation", "identity"),
    "profession": ("occupation", "identity"),
    "job title": ("occupation", "identity"),
    "title": ("occupation", "identity"),
    "role": ("occupation", "identity"),
    "age": ("age", "identity"),
    "hometown": ("from", "identity"),
    "home town": ("from", "identity"),
    "nationality": ("nationality", "identity"),
    "address": ("address", "identity"),
    "home address": ("address", "identity"),
    "employer": ("works_at", "identity"),
    "company": ("works_at", "identity"),
    "timezone": ("timezone", "config"),
    "time zone": ("timezone", "config"),
    "editor": ("editor", "config"),
    "shell": ("shell", "config"),
    "os": ("os", "config"),
    "operating system": ("os", "config"),
    "名字": ("name", "identity"),
    "姓名": ("name", "identity"),
    "生日": ("birthday", "identity"),
    "出生日期": ("birthday", "identity"),
    "邮箱": ("email", "identity"),
    "电子邮箱": ("email", "identity"),
    "电话": ("phone", "identity"),
    "手机": ("phone", "identity"),
    "手机号": ("phone", "identity"),
    "电话号码": ("phone", "identity"),
    "手机号码": ("phone", "identity"),
    "工作": ("occupation", "identity"),
    "职业": ("occupation", "identity"),
    "职位": ("occupation", "identity"),
    "年龄": ("age", "identity"),
    "家乡": ("from", "identity"),
    "老家": ("from", "identity"),
    "国籍": ("nationality", "identity"),
    "地址": ("address", "identity"),
    "住址": ("address", "identity"),
    "家庭住址": ("address", "identity"),
    "公司": ("works_at", "identity"),
    "时区": ("timezone", "config"),
    "编辑器": ("editor", "config"),
}


# "my <noun> is …" that is about the conversation, not the user's life.
_CONVERSATIONAL_NOUNS = frozenset(
    {"question", "point", "bad", "guess", "pleasure", "problem", "issue", "answer", "idea", "concern", "code"}
    | {"request", "goal here", "message", "thought", "opinion", "turn", "mistake", "fault", "understanding"}
    | {"问题", "意思", "想法", "看法", "错", "代码", "需求", "观点", "理解"}
)


_DATE_LIKE = re.compile(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|[一二三四五六七八九十]+[月日号]"
)


@dataclass(frozen=True, slots=True)
class Match:
    category: str
    topic: str = GENERAL_TOPIC
    predicate: str | None = None


_Rule = Callable[[re.Match[str]], "Match | None"]


Rules = list[tuple[re.Pattern[str], _Rule]]


def _fixed(category: str, topic: str = GENERAL_TOPIC, predicate: str | None = None) -> _Rule:
    result = Match(category, topic, predicate)
    return lambda _m: result


def _attribute(m: re.Match[str]) -> Match | None:
    """My <attribute> is …": a known single-valued attribute or a favourite; anything else is not ours."""
    attr = m.group("attr").strip()
    if m.group("fav"):
        return Match("config", PREFERENCES_TOPIC, f"favourite:{attr}")
    known = _ATTRIBUTES.get(attr)
    if known is None:
        return None
    predicate, category = known
    if predicate == "birthday" and not _DATE_LIKE.search(m.group("val")):
        return None  # "my birthday is tomorrow": not a date
    return Match(category, GENERAL_TOPIC, predicate)


def _born(m: re.Match[str]) -> Match:
    return Match("identity", GENERAL_TOPIC, "birthday" if _DATE_LIKE.search(m.group("val")) else "birthplace")


_NOT_A_WORKPLACE = re.compile(
    r"^(?:家|家里|努力|认真|拼命|远程|加班|外地|外面|线上|这里|那里|这边|那边|home|myself|the moment|"
    r"night|nights|weekends?)$"
)


def _works_at(m: re.Match[str]) -> Match | None:
    if _NOT_A_WORKPLACE.match(m.group("val").strip()):
        return None
    return Match("identity", GENERAL_TOPIC, "works_at")


def _with_object(category: str, topic: str) -> _Rule:
    """A rule whose object must say something by itself ("I like it" does not)."""

    def rule(m: re.Match[str]) -> Match | None:
        obj = m.group("obj").strip()
        if not obj or _EN_DEICTIC.match(obj) or _ZH_DEICTIC.match(obj):
            return None
        return Match(category, topic)

    return rule


def _unless_conversational(m: re.Match[str]) -> Match | None:
    return None if m.group("noun") in _CONVERSATIONAL_NOUNS else Match("event")


_preference = _with_object("config", PREFERENCES_TOPIC)


_tool = _with_object("config", GENERAL_TOPIC)


_name = _fixed("identity", predicate="name")


_ZH_ADV = r"(?:很|真的|真|非常|特别|超级?|最|也|还|比较|更|都|挺|蛮|一直|从小就?|向来)*"


_EN_ADV = r"(?:really |also |just |absolutely |totally |kind of |kinda |generally |personally |still |do )*"


# The user telling what to call them: may address the assistant ("you can call me Al").
NAME_RULES: Rules = [
    (re.compile(r"^(?:you can |please )?call me (?P<val>\S.{0,30})$"), _name),
    (re.compile(r"^(?:你可以|你就|请|以后)?(?:叫我|称呼我为?)(?P<val>[^，,\s]{1,12})"), _name),
]


# Who the user is. These hold even beside "today"/"现在" ("I moved to Paris today", "我现在住在杭州").
IDENTITY_RULES: Rules = [
    (re.compile(r"^i(?:'m| am) called (?P<val>\S.{0,30})$"), _name),
    (
        re.compile(r"^我(?:的名字|名字)?叫(?!了|过|着|做|醒|来|去|外卖|车|人|他|她)(?P<val>[^，,\s]{1,12})"),
        _name,
    ),
    (
        re.compile(r"^my (?P<fav>favou?rite )?(?P<attr>[a-z][a-z -]{0,24}?)(?: is| are|'s) (?P<val>.+)$"),
        _attribute,
    ),
    (
        re.compile(
            r"^我的?(?P<fav>最喜欢的|最爱的)?(?P<attr>[\u4e00-\u9fffa-z]{1,8}?)(?:是|叫|为|:)(?P<val>.+)$"
        ),
        _attribute,
    ),
    (re.compile(r"^i(?:'m| am) (?:very |severely |mildly )?allergic to (?P<val>.+)$"), _fixed("identity")),
    (re.compile(r"^i (?:have|'ve got) (?:a |an )?(?P<val>[\w -]+) allergy$"), _fixed("identity")),
    (re.compile(r"^我对(?P<val>.+?)过敏"), _fixed("identity")),
    (
        re.compile(
            r"^i (?:currently |now |still )?(?:live|reside|am living|'m living|am staying|'m staying) in "
            r"(?P<val>.+)$"
        ),
        _fixed("identity", predicate="lives_in"),
    ),
    (
        re.compile(
            r"^(?:i|we)(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) to (?P<val>.+)$"
        ),
        _fixed("identity", predicate="lives_in"),
    ),
    (
        re.compile(r"^i(?:'m| am) (?:now |currently )?based in (?P<val>.+)$"),
        _fixed("identity", predicate="lives_in"),
    ),
    (
        re.compile(r"^我(?:现在|目前|一直)?(?:住在|居住在|定居在|生活在)(?P<val>.+)$"),
        _fixed("identity", predicate="lives_in"),
    ),
    (
        re.compile(r"^我(?:们)?(?:刚刚?|已经|最近)?(?:搬(?:到|去)了?|搬家到了?)(?P<val>.+)$"),
        _fixed("identity", predicate="lives_in"),
    ),
    (
        re.compile(r"^i (?:currently |now |still )?(?:work|am working|'m working) (?:at|for) (?P<val>.+)$"),
        _works_at,
    ),
    (re.compile(r"^i(?:'m| am) (?:employed|working) (?:at|by|for) (?P<val>.+)$"), _works_at),
    (re.compile(r"^我(?:现在|目前|一直)?在(?P<val>[^，,]{1,20}?)(?:工作|上班|任职|就职)"), _works_at),
    (re.compile(r"^我(?:现在|目前)?就职于(?P<val>.+)$"), _works_at),
    # "我在杭州做后端开发", "我做前端开发", "我从事教学工作": the work itself, with or without a place.
    (
        re.compile(
            rf"^我(?:现在|目前|一直)?(?:在[^，,]{{1,10}}?)?(?:做|从事|搞|当)[^，,]{{0,10}}?(?:{_JOBS_ZH}|工作|设计|研究|销售|教学)$"
        ),
        _fixed("identity", predicate="occupation"),
    ),
    (re.compile(r"^i (?:was )?born (?:on|in) (?P<val>.+)$"), _born),
    (re.compile(r"^我(?:是)?(?:出生于|出生在|生于)(?P<val>.+)$"), _born),
    (
        re.compile(rf"^i(?:'m| am) (?!not\b|no longer\b)(?:a |an )?(?:[\w-]+ ){{0,3}}(?:{_JOBS_EN})s?\b"),
        _fixed("identity", predicate="occupation"),
    ),
    (
        re.compile(rf"^i work as (?:a |an )?(?:[\w-]+ ){{0,3}}(?:{_JOBS_EN})\b"),
        _fixed("identity", predicate="occupation"),
    ),
    (
        re.compile(rf"^我(?:现在|目前)?(?:是|当)(?:一名|一个|一位|个|名)?[^，,]{{0,12}}?(?:{_JOBS_ZH})$"),
        _fixed("identity", predicate="occupation"),
    ),
    (re.compile(r"^i(?:'m| am) (?:originally )?from (?P<val>.+)$"), _fixed("identity", predicate="from")),
    (re.compile(r"^我(?:来自|老家在|老家是)(?P<val>[^，,]{1,12})$"), _fixed("identity", predicate="from")),
    # "我是北京人"; the bare "我是…" is far too loose to read ("我是开玩笑的").
    (re.compile(r"^我是(?P<val>[^，,的]{1,8})人$"), _fixed("identity", predicate="from")),
    (re.compile(r"^i (?:grew up|was raised) in (?P<val>.+)$"), _fixed("identity", predicate="grew_up_in")),
]


DECISION = re.compile(
    r"^(?:we|i|our team|the team)(?:'ve| have| had|'d)? (?:finally |just |already |all )?"
    r"(?:decided|agreed|chose|chosen|settled on|picked|went with)\b"
    r"|^(?:we|our team|the team)(?:'re| are| will|'ll) (?:go|going) with\b"
    r"|^let's go with\b"
    r"|^(?:我们?|咱们|团队|大家)[^，,]{0,8}?(?:决定|敲定|定下来|选定|商定)"
)


UNDECIDED = re.compile(
    r"[没未不]有?(?:决定|敲定|定下来|选定)|还在(?:考虑|犹豫)"
    r"|\b(?:haven't|have not|hasn't|not yet|didn't|did not)\b"
)


# Likes, dislikes, habits and tools: stated preferences (config, never decays).
PREFERENCE_RULES: Rules = [
    (
        re.compile(
            rf"^i {_EN_ADV}(?:like|love|enjoy|adore|hate|dislike|detest|prefer|can't stand|cannot stand|"
            r"don't like|do not like|don't eat|do not eat|never eat|don't drink|do not drink|"
            r"can't eat|cannot eat|avoid) (?P<obj>.+)$"
        ),
        _preference,
    ),
    (
        re.compile(
            r"^i(?:'m| am) (?:really |also |very )?(?:into|(?:a )?(?:big |huge )?fan of|fond of) (?P<obj>.+)$"
        ),
        _preference,
    ),
    (re.compile(r"^i(?:'d| would) (?:rather|prefer) (?P<obj>.+)$"), _preference),
    (
        re.compile(
            r"^i(?:'m| am) (?:a )?(?P<obj>vegetarian|vegan|pescatarian|teetotal|lactose intolerant)\b"
        ),
        _preference,
    ),
    (
        re.compile(
            r"^i (?:always|never|usually|normally|typically|rarely|tend to|prefer to) "
            r"(?!said|say|told|tell|asked|ask|meant|mean|did|do|got|get|thought|think|know|knew|forget)"
            r"(?P<obj>.+)$"
        ),
        _preference,
    ),
    (
        re.compile(
            rf"^我{_ZH_ADV}(?:喜欢|爱喝|爱吃|爱|讨厌|不喜欢|不爱|偏好|偏爱|受不了|习惯|热爱|迷上了?)(?P<obj>.+)$"
        ),
        _preference,
    ),
    (re.compile(r"^我(?:从来?|平时|一般|基本)?(?:不|从不|不能|不会)(?:吃|喝|抽)(?P<obj>.+)$"), _preference),
    (re.compile(r"^我(?P<obj>吃素|是素食者|不抽烟|不喝酒|戒酒了?|戒烟了?)"), _preference),
    (
        re.compile(
            r"^我(?:总是|从不|从来不|每天都?|每周都?|平时都?|通常|一般都?)(?!在想|想|说|觉得|知道)(?P<obj>.+)$"
        ),
        _preference,
    ),
    (
        re.compile(
            r"^(?:i|we|our team|the team) (?:mostly |usually |mainly |primarily |always |now |currently )?"
            r"(?:use|uses|am using|'m using|are using|'re using|code in|write in|program in|work with|"
            r"switched to|have switched to|'ve switched to) (?P<obj>.+)$"
        ),
        _tool,
    ),
    (
        re.compile(
            r"^(?:我们?|团队)(?:一般|通常|平时|主要|一直|都|现在|目前)*(?:用|使用|在用|换成了?|改用)(?![了过])(?P<obj>.+)$"
        ),
        _tool,
    ),
]


_EVENT_VERBS_EN = (
    r"went|visited|bought|adopted|started|finished|graduated|married|got married|got engaged|joined|left|"
    r"quit|travell?ed|met|completed|launched|released|passed|lost|won|signed up|enrolled|learned|learnt|"
    r"began|built|wrote|sold|retired|broke|hired|got promoted|got a|got an|received|published|"
    r"became|attended|flew|changed|booked"
)


# Things that happened to the user, and their plans (event, fades to a 10 % floor).
EVENT_RULES: Rules = [
    (
        re.compile(
            rf"^(?:i|we)(?:'ve| have| had)? (?:just |recently |finally |already )?(?:{_EVENT_VERBS_EN})\b"
        ),
        _fixed("event"),
    ),
    (
        re.compile(
            r"^i (?:have|'ve got|have got|own) (?:a|an|one|two|three|four|five|six|\d+|some|several|twin) "
            r"(?!question|problem|issue|idea|doubt|request|suggestion|minute|second|moment)"
        ),
        _fixed("event"),
    ),
    (
        re.compile(r"^i(?:'m| am) (?:planning|going|about|hoping) to (?!ask|say|try|check|think|be honest)"),
        _fixed("event"),
    ),
    (re.compile(r"^i plan to (?!ask|say)"), _fixed("event")),
    (
        re.compile(
            r"^i(?:'m| am) (?:learning|studying|training for|preparing for|working on|writing|building) "
        ),
        _fixed("event"),
    ),
    (
        re.compile(
            r"^(?:i|we)(?:'ve| have) been (?:learning|studying|working on|building|writing|using|living) "
        ),
        _fixed("event"),
    ),
    (re.compile(r"^i used to "), _fixed("event")),
    (
        re.compile(
            r"^我(?:们)?(?:昨天|前天|上周|上个?星期|上个月|去年|前几天|最近|刚刚?|已经|终于|今年|上午|下午|晚上)*"
            r"(?:去了|买了|养了|参加了|完成了|毕业了?|结婚了?|订婚了?|搬家了?|换了|学了|考了|考上了?|开始|报名了?|"
            r"入职了?|辞职了?|离职了?|拿到了|生了|领养了|升职了?|上线了?|发布了?|通过了|认识了|去过|学过|做过)"
        ),
        _fixed("event"),
    ),
    (
        re.compile(r"^我(?:们)?有(?:一|两|三|四|五|六|几|\d+)(?:个|只|条|辆|套|位|名|本|台|部|家|间|所|匹)"),
        _fixed("event"),
    ),
    (
        re.compile(r"^我(?:们)?(?:打算|计划|准备|正在学|在学|在准备|在写|在做)(?!好|一下|问|说)"),
        _fixed("event"),
    ),
    (re.compile(r"^我(?:以前|之前|曾经)(?!说|问|提|告诉)"), _fixed("event")),
    (
        re.compile(
            r"^my (?P<noun>[a-z][a-z'-]*(?: [a-z][a-z'-]*)?) "
            r"(?:is|are|was|were|has|have|lives|works|just|got) "
        ),
        _unless_conversational,
    ),
    (re.compile(r"^我的(?P<noun>[\u4e00-\u9fff]{1,6}?)(?:是|在|叫|住在|有|喜欢|刚)"), _unless_conversational),
]


REPLY_LANGUAGE = re.compile(
    r"^(?:please |i(?:'d| would)? prefer (?:you to |that you )?|i want you to |from now on,? )*(?:always )?"
    r"(?:reply|answer|respond|talk|speak|write)(?: to me)? in (?:english|chinese|mandarin|german|french|"
    r"spanish|japanese|korean)\b"
    r"|^(?:请|以后|之后|麻烦)?(?:都|请)?(?:用|使用)(?:中文|英文|英语|汉语|日语|德语|法语)(?:回复|回答|跟我说|和我说|交流|聊)"
)


FIRST_PERSON_START = re.compile(r"^(?:i|i'm|i've|i'd|my|we|we're|our)\b|^(?:我|咱)")
