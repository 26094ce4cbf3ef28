"""The offline rules for everyday life: first-person statements about people, pets, health, work, home and
possessions, education, dates, routines and plans, in English and Chinese (``quick_rules.py`` holds the
older tables: names, where one lives and works, tastes, tools, decisions, events).

Each rule is a *form* of first-person statement, not an example sentence: "my/our <something> <verb> …",
"<name> is my <relation>", "I <verb of having, doing or being> … <a word of an everyday class>",
"I … every <day>", "I want to …". A form alone keeps nothing: the sentence must also name an everyday
class (``memory/text/category.py``), which is also what files it in a category that does not fade. The
rules see the normalised sentence of ``quick_extract.py`` (lower case, fillers and leading time words
removed, not a question, not about the assistant).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory.model.everyday_around import when_class
from memory.model.quick_rules import PREFERENCES_TOPIC, Match, Rules
from memory.records import GENERAL_TOPIC
from memory.text.category import CLASS_CATEGORY, everyday_class

_MANNER_CLASSES = frozenset({"tastes", "routines"})
_PLAN = Match(CLASS_CATEGORY["plans"])
_OCCUPATION = Match("identity", GENERAL_TOPIC, "occupation")
_Rule = Callable[[re.Match[str]], "Match | None"]


def _match_for(found: str | None) -> Match | None:
    if found is None:
        return None
    topic = PREFERENCES_TOPIC if found in _MANNER_CLASSES else GENERAL_TOPIC
    return Match(CLASS_CATEGORY[found], topic)


def _class_of(group: str, fallback: str | None = None) -> _Rule:
    """A rule keeping the sentence when ``group`` names an everyday class (else ``fallback``'s class)."""

    def rule(m: re.Match[str]) -> Match | None:
        return _match_for(everyday_class(m.group(group)) or fallback)

    return rule


def _whole(fallback: str | None = None) -> _Rule:
    """A rule keeping the sentence when it names an everyday class anywhere (else ``fallback``'s)."""

    def rule(m: re.Match[str]) -> Match | None:
        return _match_for(everyday_class(m.string) or fallback)

    return rule


def _class_or_when(group: str) -> _Rule:
    """A rule keeping the sentence when ``group`` names an everyday class, else when the sentence names a
    date or a weekly time ("My book club meets on the first Thursday of the month")."""

    def rule(m: re.Match[str]) -> Match | None:
        return _match_for(everyday_class(m.group(group)) or when_class(m.string))

    return rule


def _verb_class(m: re.Match[str]) -> Match | None:
    """ "I <verb> …": the object's class, else the class the verb itself says ("I drive a Lada")."""
    found = everyday_class(m.group("rest"))
    verb = m.group("verb")
    return _match_for(found or _VERB_CLASS.get(verb) or _VERB_CLASS.get(verb.split()[-1]))


_VERB_CLASS = {
    "drive": "home",
    "ride": "home",
    "own": "home",
    "teach": "work",
    "work": "work",
    "worked": "work",
    "volunteer": "work",
    "coach": "work",
    "study": "education",
    "studied": "education",
    "majored": "education",
    "graduated": "education",
    "attend": "education",
    "suffer": "health",
    "diagnosed": "health",
    "report to": "work",
    "take": None,
    "speak": "education",
    "earn": "work",
    "support": "tastes",
    "moved": "home",
    "pay": "home",
    "manage": "work",
    "failed": "education",
}

_NOT_HABITS = (
    r"think|thought|feel|felt|guess|mean|meant|know|knew|said|say|told|tell|asked|ask|wonder|hope|wish|"
    r"miss|missed|am|was|were|had|did|used|just|can't|cannot|can|could|should|would|will|won't|need|"
    r"see|saw|remember|forgot|forget|bet|suppose|agree|love|like|hate|want"
)
# The speaker as subject, also before a contraction ("i've got", "i'd like", "we've been").
_I = r"^(?:i|we|[a-z]+ and i)(?: |(?='))"
_EN_ADVERB = r"(?:also |still |now |currently |usually |normally |always |often |sometimes |really |)"
_BE_A_STATE = (
    r"married|divorced|engaged|widowed|separated|single|retired|self-employed|unemployed|pregnant|"
    r"diabetic|asthmatic|epileptic|anaemic|anemic|celiac|coeliac|colou?r-?blind|deaf|blind|"
    r"left-handed|right-handed|vegetarian|vegan|pescatarian|short-sighted|near-sighted|long-sighted|"
    r"[\w-]+ intolerant|allergic to .+|in (?:my )?(?:first|second|third|fourth|final|last) year\b.*|"
    r"in (?:year|grade) \w+.*|on (?:a |the )?[\w -]+ diet\b.*|on (?:[\w-]+ ){0,3}(?:medication|medicine|"
    r"meds|pills|tablets|thinners|blockers|inhibitors|antidepressants|antibiotics|steroids|statins|insulin|"
    r"the pill|hrt)\b.*"
)
_NAMED_DATE = (
    r"\d|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\bnext \w+|\btomorrow\b"
    r"|\bin \w+ (?:days|weeks|months)\b"
)

EVERYDAY_EN: Rules = [
    # "My best friend Marco is a firefighter", "Our wedding anniversary is …", "My boss is called Linda".
    (
        re.compile(
            r"^(?:my|our) (?P<noun>[\w'-]+(?: [\w'-]+){0,3}?) (?:is|are|was|were|has|have|had|lives|lived|"
            r"live|go|work|study|play|like|love|visit|come|speak|attend|take|"
            r"works|worked|studies|studied|teaches|likes|loves|hates|enjoys|goes|plays|turns|turned|takes|"
            r"drives|owns|runs|speaks|can|can't|cannot|doesn't|does|don't|will|just|recently|also|still|"
            r"always|never|usually|named|called|comes|came|moved|graduated|started|retired|passed|died|"
            r"sleeps|eats|needs|gets|got|belongs|stays|sits|starts|falls|weighs|expires|renews|meets|[a-z]{3,}s)\b"
            r"(?! (?:about to|going to|gonna|so|being|acting|driving me|dying|dead|broken|on fire)\b)"
        ),
        _class_or_when("noun"),
    ),
    # "Leo is my son", "Pepper is our cat", "Linda is my boss".
    (re.compile(r"^[\w' .-]{1,30}? (?:is|are|was) (?:my|our) (?P<rest>.+)$"), _class_of("rest")),
    # Where things are kept: "The spare key is under the flower pot", "I keep my passport in …".
    (
        re.compile(
            r"^(?:the|my|our) (?P<noun>[\w'-]+(?: [\w'-]+){0,3}?) (?:is|are) (?:always |usually |normally |"
            r"kept |stored |hidden |hanging |parked )*(?:in|inside|under|underneath|behind|on|next to|beside|"
            r"above|below|at|by) "
        ),
        _class_of("noun"),
    ),
    (
        re.compile(
            rf"{_I}(?:always |usually |normally )?(?:keep|store|hide|put|leave|park) "
            r"(?:my|our|the) (?P<rest>.+) (?:in|inside|under|behind|on|next to|beside|at|by) "
        ),
        _class_of("rest", "home"),
    ),
    # Being: "I'm a paramedic", "I'm married", "I'm gluten intolerant", "I'm on a low-salt diet".
    (
        re.compile(r"^i(?:'m| am|'ve been| have been| was) (?:also |now |still )?(?:a|an|the) (?P<rest>.+)$"),
        _class_of("rest"),
    ),
    (
        re.compile(rf"^i(?:'m| am) (?:also |now |still |very |severely |mildly )?(?P<rest>{_BE_A_STATE})$"),
        _class_of("rest", "health"),
    ),
    (
        re.compile(r"^i(?:'m| am) (?:taking|doing|attending|enrolled in|signed up for) (?P<rest>.+)$"),
        _class_of("rest"),
    ),
    # Having, doing, owning: "I have type 1 diabetes", "I drive a blue Golf", "I teach maths",
    # "I studied biology at Leeds", "I take metformin".
    (
        re.compile(
            rf"{_I}{_EN_ADVERB}(?P<verb>have|has|'ve got|have got|own|drive|ride|take|teach|study|"
            r"studied|majored|do|did|'ve worked|have worked|'ve lived|have lived|'ve had|have had|"
            r"'ve studied|graduated|work|worked|keep|play|practi[sc]e|attend|speak|volunteer|coach|"
            r"manage|look after|care for|walk|feed|support|hold|wear|use|suffer|was diagnosed|"
            r"'ve been diagnosed|have been diagnosed|got diagnosed|live|lived|finished|completed|earned|"
            r"report to|got|speak|earn|pay|moved|get|see|visit|passed|failed|had(?= .*(?:\b(?:19|20)\d\d\b|"
            r"when i was|as a (?:kid|child|teenager))))\b(?P<rest>.*)$"
        ),
        _verb_class,
    ),
    # Times and days: "I play the cello on Sundays", "we go swimming every Tuesday".
    (
        re.compile(
            rf"{_I}{_EN_ADVERB}(?!(?:{_NOT_HABITS})\b)[a-z']+ .*\b(?:every|each|daily|weekly|"
            r"monthly|twice|once|times a|on (?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends?|weekdays|"
            r"mornings|evenings|nights|at \d{1,2}(?::\d\d)? ?(?:am|pm|o'clock)|at \d{1,2}:\d\d|at lunchtime|"
            r"at bedtime|(?:before|after) (?:breakfast|lunch|dinner|work|school|bed)|(?:around|about|by) "
            r"(?:\d|half past|quarter (?:past|to))|at half \w+)\b"
        ),
        _whole("routines"),
    ),
    (
        re.compile(
            r"^(?:every|each|on) (?:day|morning|evening|night|week|weekend|month|"
            r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?)(?: (?:morning|afternoon|evening|night)s?)?,? "
            r"(?:i|we) "
        ),
        _whole("routines"),
    ),
    # Plans and goals: "I want to learn Japanese", "I'm saving up for a house".
    (
        re.compile(
            rf"{_I}(?:really |also |still |eventually |)(?:(?:want|would like|'d like|would love|'d love|"
            r"hope|wish|intend|aim|plan|am planning|'m planning|are planning|'re planning|am hoping|"
            r"'m hoping|am aiming|'m aiming|am determined|'m determined|am trying|'m trying|try) to |"
            r"(?:am|'m|are|'re) saving (?:up )?for |"
            r"dream of |(?:am|'m|are|'re) thinking (?:of|about) (?=\w+ing\b)|"
            r"(?:am|'m|are|'re) (?:planning|organi[sz]ing|arranging) (?!to\b))"
            r"(?!know|ask|say|tell|talk|check|see|understand|be honest|thank|go to bed|sleep|have a look|"
            r"hear|chat|stop|continue|add|make sure|point|clarify|mention|share|explain)\w"
        ),
        lambda _m: _PLAN,
    ),
    # Appointments: "I'm seeing the dentist next Tuesday", "I'm flying to Rome on the 3rd".
    (
        re.compile(
            r"^(?:i|we)(?:'m|'re| am| are) (?:seeing|meeting|visiting|flying|travell?ing|going|having|"
            r"getting|starting|moving|getting married|leaving)\b(?P<rest>.*)$"
        ),
        lambda m: _PLAN if re.search(_NAMED_DATE, m.group("rest")) else None,
    ),
    # Tastes the older table misses: "Jazz is my favourite music", "I'm not a fan of horror films".
    (re.compile(r"^.{2,40} (?:is|are) (?:my|our) (?:all-time )?(?:favou?rite|fave)\b"), _whole("tastes")),
    (
        re.compile(
            r"^i(?:'m| am) (?:not |not really |really |such |)(?:a |an )?(?:big |huge |massive |)"
            r"(?:[\w-]+ )?(?:fan|lover|enthusiast|addict)\b"
            r"|^i(?:'m| am) (?:not |really |very much |definitely |)(?:a|an) (?:morning|night|early|evening|"
            r"people|cat|dog|tea|coffee|beach|city|outdoors|indoors|summer|winter) person\b"
            r"|^i(?:'m| am) not (?:really )?(?:into|fond of|keen on)"
            r"|^i(?:'m| am) (?:really |very |)(?:crazy about|obsessed with|passionate about|interested in|"
            r"keen on)\b"
        ),
        _whole("tastes"),
    ),
    # What the body does not take: "I can't have dairy", "I can't digest onions".
    (
        re.compile(
            r"^i (?:can't|cannot|can not|don't|do not) (?:have|eat|drink|tolerate|digest|take) (?P<rest>.+)$"
        ),
        _class_of("rest", "health"),
    ),
    # How one takes things, what one finds tiring or pleasant: "I take my coffee with oat milk",
    # "I find crowded trains stressful".
    (
        re.compile(
            r"^i (?:take|have|drink|like) my [\w-]+ (?:black|white|strong|weak|with|without|no|rare|"
            r"medium|well)\b"
        ),
        lambda _m: _match_for("tastes"),
    ),
    (
        re.compile(
            r"^i find (?!it\b|this\b|that\b|you\b)[\w' -]{3,40} (?:exhausting|tiring|boring|relaxing|"
            r"stressful|annoying|calming|overwhelming|fun|hard|difficult|easy|draining|soothing)$"
        ),
        lambda _m: _match_for("tastes"),
    ),
    # Work without the word "job": "At work we use Trello", "I've been at the clinic for three years",
    # "I bike to work", "Before teaching I was a chef".
    (
        re.compile(
            r"^at work,? (?:i|we) |^i(?:'ve| have) been (?:at|with) [\w' -]{2,40} (?:for|since) \w+"
            r"|^i (?:\w+ ){1,2}to work\b|^(?:before|after|until) [\w' -]{2,30}?,? i (?:was|worked)\b"
        ),
        lambda _m: _match_for("work"),
    ),
]

_ZH_POSSESSOR = (
    r"^(?:我们|咱们|我|咱)(?:家的?|们家的?|的)?(?:最好的|最要好的|好|大|小|二|三|亲|前|现在的|新)?"
    r"(?![在是有去要想不没很也都就还又会能可刚已正把被给跟和对从到用开骑学读上教带戴考拿毕弹拉练每今明昨前后这那一])"
)
_ZH_CHATTER = re.compile(
    r"说(?!话)|觉得|认为|问我|让我|骂|催|唠叨|吵架|生气|开心|难过|哭了|笑死|气死|烦死|无聊|快没|没电|坏了|丢了|找不到|不见了"
)
_ZH_FUTURE = (
    r"明天|后天|下周[一二三四五六日天]|下周|下个?星期|下个?礼拜|下个?月|下半年|明年|年底|月底|月初|周[一二三四五六日天]|星期[一二三四五六日天]|"
    r"\d+[号日月点]|[一二三四五六七八九十]+[月号日点]|国庆|春节|元旦|五一|中秋|端午|清明|寒假|暑假"
)
_ZH_WHEN = (
    rf"{_ZH_FUTURE}|以后|将来|未来|今年|年内|早日|尽快|有一天|这辈子|退休后"
    r"|(?:\d+|[一二三四五六七八九十]+)岁(?:之前|以前|前|之后|以后)?"
)
_ZH_LIFE_GOAL = (
    r"学会|学|考|成为|存钱|攒钱|买房|买车|留学|创业|移民|转行|跑马拉松|减肥|戒烟|戒酒|环游|出国|种|报名"
)
_ZH_GOAL = (
    r"学|考|成为|存钱|攒钱|买|换|搬|减|戒|申请|读|留学|创业|移民|跑|养|生|结婚|旅游|旅行|环游|拿到|通过|"
    r"升职|转行|开一家|开个|写一本|出版"
)


def _zh_possessed(m: re.Match[str]) -> Match | None:
    """ "我女儿叫小雨", "我家的狗叫旺财", "我们的结婚纪念日是…": an everyday noun right after the
    possessor, then something said about it (not what that person said or felt)."""
    said = m.string[m.start("head") :]
    found = everyday_class(m.group("head"))
    exclaimed = m.string.endswith(("啊", "呀", "哦", "吧", "嘛", "啦"))  # "我腰好酸啊": a passing complaint
    if len(said) < 3 or exclaimed or _ZH_CHATTER.search(m.string) or found in _MANNER_CLASSES:
        return None
    return _match_for(found)


_ZH_STORE = re.compile(r"箱|柜|抽屉|床底|盒|袋|架|门后|门口|墙上|保险")


def _zh_kept_in(m: re.Match[str]) -> Match | None:
    """ "钥匙挂在门口", "被子收在床底的收纳箱里": a thing of the household and where it is kept, told by
    its class, by a verb of putting away (收/藏/锁/贴), or by a place of storage — not "书放在桌上" (just
    lying there)."""
    stored = m.group("verb") != "放在" or _ZH_STORE.search(m.group("place"))
    return _match_for(everyday_class(m.group("noun")) or ("home" if stored else None))


EVERYDAY_ZH: Rules = [
    (re.compile(_ZH_POSSESSOR + r"(?P<head>[\u4e00-\u9fff]{1,4})"), _zh_possessed),
    # "我和我老公结婚十年了", "我跟女朋友在一起三年了".
    (
        re.compile(r"^我(?:和|跟)(?:我的?)?(?P<rest>[^，,]{1,4}?)(?:结婚|在一起|认识|交往|恋爱|离婚|订婚)"),
        _class_of("rest"),
    ),
    # "小雨是我女儿", "旺财是我们家的狗".
    (re.compile(r"^[^，,。]{1,8}?是(?:我|我们|咱们)(?:家)?的?(?P<rest>.+)$"), _class_of("rest")),
    # Where things are kept: "家里的备用钥匙在鞋柜里", "车钥匙挂在门口", "我把护照放在抽屉里".
    (
        re.compile(r"^(?P<noun>[^，,我]{1,6}?)(?P<verb>放在|收在|藏在|挂在|停在|锁在|贴在)(?P<place>.+)$"),
        _zh_kept_in,
    ),
    (
        re.compile(
            r"^(?:家里的?|我家的?|我们家的?)(?P<noun>[^，,]{1,8}?)(?:放在|收在|藏在|挂在|停在|贴在|在|从|由|每|是)"
        ),
        _class_of("noun", "home"),
    ),
    (
        re.compile(
            r"^我(?:一般|平时|都|总是|通常)*把(?P<noun>[^，,]{1,10}?)(?:放在|收在|藏在|挂在|停在|锁在)"
        ),
        _class_of("noun", "home"),
    ),
    # "我家有一只叫咪咪的猫", "我们家里养了两条狗".
    (re.compile(r"^我(?:们)?家里?(?:有|养了?)(?P<rest>.+)$"), _class_of("rest")),
    (re.compile(r"^(?:我们?|咱们?)家(?:里)?是(?P<rest>.+)$"), _class_of("rest", "home")),
    # "我在一家外企做财务": a job at a kind of workplace.
    (
        re.compile(
            r"^我(?:现在|目前|一直)?在(?:一家|家|一所|所)?[^，,]{0,10}?(?:公司|外企|国企|央企|企业|厂|医院|学校|"
            r"大学|银行|店|馆|机构|单位|部门|集团|工作室|事务所)(?:做|当|干|任|负责)(?P<rest>.{1,12})$"
        ),
        lambda _m: _OCCUPATION,
    ),
    # Health without a measure word: "我有高血压", "我乳糖不耐受", "我确诊了哮喘".
    (
        re.compile(r"^我(?:有|得了|患有|患了|确诊了?|查出了?)(?P<rest>.+)$"),
        _class_of("rest"),
    ),
    (
        re.compile(r"^我.{0,6}(?:不耐受|过敏|近视|色盲|怀孕了?|吃素|素食|糖尿病|高血压|哮喘|痛风)"),
        _whole("health"),
    ),
    # Owning, driving, using, studying: "我开一辆白色的本田", "我用的是华为手机", "我是北大毕业的".
    (re.compile(r"^我(?:现在|平时|一直)?(?:开|骑)(?:着|的是)?(?:一|两)?(?:辆|台)"), _whole("home")),
    (
        re.compile(
            r"^我(?:们)?(?:现在|平时|一直|目前|\d{2,4}年|去年|前年|以前|小时候|正在|在网上|还|也|又)*(?P<verb>用的是|用的|养了?|是|学的是|"
            r"学的|学|读的是|读|在读|在学|在考|在上|上|教|带|戴|考了?|拿到了?|毕业于|会|弹|拉|练|在吃|吃)(?P<rest>.+)$"
        ),
        _class_of("rest"),
    ),
    (re.compile(r"^我是(?:做|搞|干)(?P<rest>.{1,8})的$"), lambda _m: _OCCUPATION),
    (re.compile(r"^我(?:会说|会讲|能说|说得一口|讲得一口|会一点)"), lambda _m: _match_for("education")),
    # Tastes by degree: "我不太喜欢吃甜的", "我特别怕冷".
    (
        re.compile(
            r"^我(?:不太|不怎么|不是很|不大|挺|蛮|超|特别|非常|很|最|一直|从小就?)(?:喜欢|爱|讨厌|怕|受不了)"
        ),
        _whole("tastes"),
    ),
    # Learning and exams: "我正在学日语", "我数学考过满分", "我读研的时候…", "我2010年高中毕业".
    (
        re.compile(r"^我(?:正在|在)?(?:网上|业余|自己)?(?:学|自学)[a-z\u4e00-\u9fff]"),
        lambda _m: _match_for("education"),
    ),
    (
        re.compile(r"^我[^，,]{0,6}?(?:过了|考了|考过|学过|考上了?|考取了?|拿了)[^，,]{1,12}$"),
        _whole("education"),
    ),
    (
        re.compile(
            r"^我(?:\d{2,4}年|大[一二三四]|研[一二三]|高[一二三]|初[一二三]|读书|上学|读研|读大学)"
            r"(?:的时候|那年)?(?P<rest>.+)$"
        ),
        _class_of("rest", "education"),
    ),
    # Holding back for health: "我在控糖", "我一直在戒糖".
    (re.compile(r"^我(?:一直|最近)?(?:在|正在)(?:控|戒|忌|少吃|调理|吃药)"), lambda _m: _match_for("health")),
    # Places one goes to: "我们常去的菜市场是…", "我常看的牙医姓刘".
    (re.compile(r"^我(?:们)?(?:常去|常用|常看|常找|平时去|一直去)的(?P<rest>.+)$"), _class_of("rest")),
    # Days and times: "我周末弹钢琴", "我每周三晚上去打羽毛球", "每周六我都去游泳".
    (
        re.compile(r"^(?:每天|每日|每晚|每个?周.?|每个?星期.?|每个?礼拜.?|每个?月|每年|周末)[^，,]{0,6}?我"),
        _whole("routines"),
    ),
    (
        re.compile(
            r"^我(?:们)?[^，,]{0,6}?(?:每天|每日|每晚|每早|每周|每星期|每个?礼拜|每个?月|每年|每逢|周末|工作日|"
            r"周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|\d+点|[一二三四五六七八九十]+点)"
            r"(?!说|想)"
        ),
        _whole("routines"),
    ),
    # Plans, goals and appointments: "我打算明年考研", "我想今年学会游泳", "我下周二要去看牙医".
    (
        re.compile(
            rf"^我(?:们)?(?:{_ZH_WHEN})*(?:真的|一直|很)?(?:打算|计划|准备|决定|梦想)(?:能|在)?(?:{_ZH_WHEN})*"
            rf"(?:{_ZH_GOAL})"
        ),
        lambda _m: _PLAN,
    ),
    (
        re.compile(
            rf"^我(?:们)?(?:{_ZH_WHEN})*(?:真的|一直|很)?(?:想要?|希望)(?:能|在[^，,]{{1,6}}?)?(?:(?:{_ZH_WHEN})+.{{0,4}}?(?:{_ZH_GOAL})|"
            rf"(?:{_ZH_LIFE_GOAL}))"
        ),
        lambda _m: _PLAN,
    ),
    (
        re.compile(rf"^我(?:们)?(?:{_ZH_FUTURE})+.{{0,4}}?(?:要|得|会|约了|预约了?|安排了|有)"),
        lambda _m: _PLAN,
    ),
    (re.compile(rf"^我(?:们)?(?:要|得|约了|预约了?)[^，,]{{0,6}}?(?:{_ZH_FUTURE})"), lambda _m: _PLAN),
    (
        re.compile(rf"^(?:{_ZH_FUTURE}|上午|下午|晚上|早上|中午)+我(?:们)?(?:要|得|会|约了|预约了?)"),
        lambda _m: _PLAN,
    ),
    (re.compile(rf"^我(?:们)?(?:很|一直|真的)?(?:想|想要|希望)(?=.*(?:{_ZH_WHEN}))"), lambda _m: _PLAN),
    (re.compile(r"^我(?:们)?(?:在|正在|一直在)(?:攒钱|存钱|备孕|装修|找房|看房|备考)"), lambda _m: _PLAN),
    (re.compile(r"^我(?:们)?[^，,]{0,4}的(?:目标|梦想|愿望|计划|新年愿望)是"), lambda _m: _PLAN),
    # Tastes the older table misses: "我对摄影很感兴趣", "我是周杰伦的歌迷".
    (
        re.compile(r"^我对(?P<obj>.+?)(?:很|特别|非常|超级?|比较|不|没|有)*(?:感兴趣|兴趣|着迷|上瘾)"),
        _whole("tastes"),
    ),
    (re.compile(r"^我是(?:个|一个)?.{1,10}(?:迷|粉|粉丝|控)$"), _whole("tastes")),
]

EVERYDAY_RULES: Rules = EVERYDAY_EN + EVERYDAY_ZH
