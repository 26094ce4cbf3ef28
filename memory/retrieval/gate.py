"""``should_retrieve``: does this message need long-term memory? Pure rules, no I/O, microseconds.

The design (docs/architecture.md, "Retrieval") asks memory whenever a message carries a personal
reference (我的/我之前/你记得), a time reference (上次/之前/昨天), a known project, a question, or a
preference/config word, and skips short messages, code and bare acknowledgements.
We keep those families and add what that list misses:

* recall is the gate's first duty (a missed memory costs the user far more than a 2 ms lookup), so a
  substantive first-person message — the user telling about their life, feelings or plans — fires even
  without an explicit cue: that is exactly when an assistant should remember what it knows about them;
* a question fires when it is about someone or something specific (a name, a past event, the user's own
  things), not for every "how are you?" of small talk, which is most of what chit-chat questions are;
* a person asks their own assistant about themselves, however short: first-person questions ("Where do
  I live?", "What am I allergic to?", "我住在哪？"), questions about what the assistant knows of them
  ("what do you know about me", "你记得我什么") and requests to be reminded ("remind me…", "tell me
  again…", "提醒我…"). Offers and permission questions ("Can I help you?", "May I ask…") stay small talk.
  Retrieval is cheap; what keeps chit-chat clean is the relevance floor on what is injected
  (docs/architecture.md, "Retrieval");
* everyday questions come in every form (issue 26, measured with ``bench.everyday``): yes/no about
  oneself ("can I eat …?", "am I …?", "我能吃…吗", "我是不是…"), about the household ("our …", "do we …",
  "我们的…"), "anything I should avoid?" / "有什么我该注意的", short forms ("my boss?", "我老板？"), and
  questions about the everyday things and people of a life without a possessive ("how old is the cat?",
  "狗怕什么？", "王磊是干什么的？").

The rules are families of words, not sentences from any data set; bench/gate.py measures them.
"""

from __future__ import annotations

import re

# Messages shorter than this (in characters, stripped) never need memory (the original design: len < 5).
MIN_CHARS = 5
# A Chinese message says in three characters what English says in five ("我住哪").
ZH_MIN_CHARS = 3
# A first-person Chinese message with at least this many Han characters is a personal narrative.
ZH_NARRATIVE_HAN = 12
# A short first-person Chinese message with a question word asks, even without a question mark.
ZH_SHORT_HAN = 8
# An English message about the user's own things ("my …") with this many words is a personal narrative.
EN_NARRATIVE_WORDS = 10

# Bare acknowledgements and commands (the whole message, case-insensitive).
_ACKS = frozenset(
    {"继续", "好的", "好", "确认", "嗯", "嗯嗯", "哦", "行", "可以", "收到", "谢谢", "多谢", "明白", "知道了"}
    | {"没问题", "ok", "okay", "yes", "no", "yep", "nope", "sure", "thanks", "thank you", "thx", "cool"}
    | {"nice", "great", "continue", "go on", "next", "done", "right", "alright", "fine", "got it"}
)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_CODE_LINE = re.compile(
    r"^\s*(?:[{}()\[\];]|(?:def|class|import|from|return|if|for|while|func|var|let|const)\b)"
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)

# --- Chinese families -------------------------------------------------------------------------------
_ZH_MEMORY_CUE = re.compile(
    "我的|我之前|我以前|我上次|你记得|还记得|记不记得|记得吗|你忘了|我说过|我提过|告诉过你|跟你说过|我们聊过|"
    "上次|之前|以前|昨天|前天|前几天|上周|上个?星期|上个月|去年|那次|那天|当时|最近|一直|又"
)
_ZH_PERSONAL_TOPIC = re.compile(
    "喜欢|最爱|爱好|讨厌|偏好|习惯|梦想|目标|计划|打算|设置|配置|密码|账号|地址|生日|名字|项目|"
    "家人|妈妈|爸爸|父母|老婆|老公|孩子|朋友|同学|同事|老师|宠物|学校|公司|工作|考试|比赛"
)
_ZH_FIRST_PERSON = re.compile("我|咱")
_ZH_QUESTION = re.compile(r"[?？]|什么|怎么|为什么|哪|谁|几|多少|吗|呢|是不是|有没有")
# A question word that asks for a thing (not 吗/呢, which end most small-talk questions).
_ZH_WH = re.compile("什么|啥|哪|谁|几[个次年岁点天]?|多少|多大|多久|一共|总共")
_ZH_QUESTION_END = re.compile(r"[?？]\s*$")
_ZH_ASKS = re.compile(
    r"[?？]|[吗嘛呢]\s*$|什么|啥|哪|谁|几|多少|多大|多久|多重|多远|没有|是不是|有没有|能不能|可不可以"
)
# The everyday things and people of a life, asked about without 我的 ("狗怕什么？", "车险哪天到期？").
_ZH_EVERYDAY = re.compile(
    "狗|猫|车|宠物|鹦鹉|兔子|仓鼠|金鱼|钥匙|护照|驾照|身份证|户口本|信用卡|银行卡|物业|水电|房租|房贷|租约|"
    "租房|保险|车险|年检|保养|疫苗|体检|复查|医生|药|孩子|儿子|女儿|老公|老婆|男朋友|女朋友|外婆|外公|"
    "奶奶|爷爷|姥姥|姥爷|舅舅|姑姑|叔叔|阿姨|闺蜜|领导|上司|老板|同事|工资|家里|我们家|"
    "国庆|暑假|寒假|过年|春节|纪念日|婚礼|家长会|被子|冰箱|宽带|电梯|车位|卷子|客厅|卧室|厨房|阳台|车库"
)
# What is asked about a person: their job, age, school year, where they live or work ("王磊是干什么的？").
_ZH_PERSON_ATTRIBUTE = re.compile(
    "是?(?:干|做)(?:什么|啥)的|做哪一?行|干哪一?行|职业|多大了|几岁|多大年纪|岁数|几年级|在哪(?:儿|里)?(?:上学|上班|工作|读书)|"
    "住(?:在)?哪|在哪个(?:国家|城市)|上学了"
)
# What the assistant knows of the user, and requests to be reminded.
_ZH_ABOUT_ME = re.compile(
    "关于我|你知道我|你了解我|你记得我|我跟你说过|我和你说过|我告诉过你|提醒我|再说一遍我"
)

# --- English families -------------------------------------------------------------------------------
_EN_MEMORY_CUE = re.compile(
    r"\b(?:remember|recall|remind|forgot|forget|last (?:time|week|month|year|night|weekend)|yesterday|"
    r"ago|earlier|previously|used to|told you|mentioned|talked about|we discussed)\b",
    re.I,
)
_EN_PERSONAL_TOPIC = re.compile(
    r"\b(?:favou?rite|prefer(?:s|red|ence)?|settings?|config(?:uration)?|password|birthday|"
    r"address|project|hobby|hobbies)\b",
    re.I,
)
# The people and parts of life a personal assistant remembers, and feelings about them.
_EN_LIFE = re.compile(
    r"\b(?:mom|mum|dad|mother|father|parents?|wife|husband|son|daughter|kids?|sister|brother|family|"
    r"friends?|girlfriend|boyfriend|boss|teacher|school|exam|class|job|pet|dog|cat|"
    r"feel|feeling|felt|sad|upset|worried|nervous|scared|excited|happy|lonely|angry|tired)\b",
    re.I,
)
_EN_I = re.compile(r"\b(?:i|i'm|i've|i'd|me)\b", re.I)
# A question about the asker: an auxiliary before "I" ("do I", "am I", "have I"), or a wh-question with
# I/me/my/mine in it. "Can/could/may/shall I" are offers and requests in small talk, so they are not.
_EN_FIRST_PERSON_QUESTION = re.compile(
    r"\b(?:am|do|did|don't|didn't|have|haven't|had|was|were|will|would)\s+i\b"
    r"|\b(?:what|when|where|who|whom|whose|which|why|how)\b.*\b(?:i|me|my|mine|i'm|i've|i'd)\b",
    re.I,
)
_EN_QUESTION_START = re.compile(
    r"\s*(?:what|when|where|who|whom|whose|which|why|how|am|do|did|have|was|were)\b", re.I
)
_EN_ABOUT_ME = re.compile(
    r"\b(?:about me|know me|remember me|remind me|tell me again|what was (?:my|it|that) again|"
    r"(?:what|which|who|where|when)\b.*\bagain\s*\?|my (?:own )?(?:details|profile|info(?:rmation)?))\b",
    re.I,
)
_EN_PAST_QUESTION = re.compile(
    r"\b(?:what|when|where|who|whom|which|why|how)\b[^?]*\b(?:did|was|were|has|have|had)\b",
    re.I,
)
# The user's own things and people ("my sister", "my project"): what memory is about. Bare "I" is not
# enough: "May I help you?" and "I think so" are the bulk of small talk.
_EN_POSSESSIVE = re.compile(r"\b(?:my|mine)\b", re.I)
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# A yes/no question about oneself with a modal ("can I eat …?", "should I order …?"): personal, unless it
# is the offer or permission of small talk ("Can I help you?", "May I ask…", "What should I call you?").
_EN_MODAL_I = re.compile(r"\b(?:can|could|should|shall|may|must|might)\s+i\s+(\w+)", re.I)
_EN_SMALL_TALK_VERBS = frozenset(
    {"help", "ask", "say", "tell", "call", "get", "offer", "talk", "speak", "come", "see", "sit", "join"}
    | {"borrow", "interrupt", "know", "be", "do", "go", "leave", "try", "use", "pay", "put", "make"}
    | {"have", "take", "turn", "move", "look", "bring", "start", "order", "check", "change"}
)
# The household's own: "our vet", "do we …", "are we getting …", "for me", "anything I …", "any … I can't".
_EN_OURS = re.compile(
    r"\b(?:our|ours)\b|\b(?:do|did|are|were|have|had|will|should|can)\s+we\b|\bfor (?:me|myself)\b|"
    r"\b(?:anything|something|any\s+\w+|a\s+\w+)\s+(?:i|i'm|i've|i'd)\b|\bat (?:work|home|school)\b",
    re.I,
)
# The everyday things and people of a life, asked about without a possessive ("how old is the cat?").
_EN_EVERYDAY = re.compile(
    r"\b(?:the|our|my)\s+(?:dog|dogs|cat|cats|puppy|kitten|pets?|parrot|bird|rabbit|hamster|fish|"
    r"goldfish|vet|kids|children|baby|car|bike|house|flat|rent|mortgage|landlord|(?:spare\s+)?keys?|"
    r"boiler|bins|wifi|broadband|fridge|garden|passports?|insurance|bills|doctor|dentist|gp|"
    r"school|homework|boss|manager|office|report|deadline|salary|shift|anniversary|wedding|"
    r"party|trip|flight|holiday|tenancy|lease|plants|grandma|gran|nan|grandpa|mum|mom|dad|"
    r"kitchen|bedroom|living room|garage|loft|shed)\b",
    re.I,
)
# A person named as the subject of a question: "is Mia", "does Hannah", "Mia's".
_EN_SOMEONE = re.compile(r"\b(?:is|does|did|was|has|will)\s+[A-Z][a-z]+\b|\b[A-Z][a-z]+'s\b")
# A sentence that ends before the message does.
_EN_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)(?=\S)")
_EN_YOU = re.compile(r"\b(?:you|your|yours|you're|you've)\b", re.I)
# A capitalised word that is not sentence-initial and not "I": a name (Caroline, Berlin, Postgres).
_EN_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b(?!I\b|I'|OK\b)[A-Z][a-z]+")


# A person asking for everything the assistant knows of them: answered with the profile and the memories
# that weigh most, not with text matches for "know" and "me".
_EN_OVERVIEW = re.compile(
    r"\bwhat (?:do|did) you (?:know|remember|recall) about me\b|\bwhat have i told you\b|"
    r"\btell me (?:about|what you know about) (?:me|myself)\b|\bwhat do you know of me\b|"
    r"\bhow (?:well|much) do you know (?:about )?me\b|\bwho am i\b",
    re.I,
)
_ZH_OVERVIEW = re.compile(
    "你(?:都|还)?(?:记得|知道|了解)(?:关于)?我(?:的)?(?:什么|哪些|多少|些什么)|关于我你(?:都|还)?(?:知道|记得|了解)|"
    "我(?:都|之前)?(?:跟|和|对)你说过(?:些)?(?:什么|哪些)|你对我(?:有多|的)?了解|你了解我(?:吗|多少)|我是谁"
)


def asks_about_themselves(text: str) -> bool:
    """True for "what do you know about me?" / "你记得我什么？": a request for an overview of the person."""
    return bool(_EN_OVERVIEW.search(text) or _ZH_OVERVIEW.search(text))


# A Chinese question ends as one: a question mark or a question particle ("我有猫吗", "我老板？").
_ZH_ASKED = re.compile(r"(?:[?？]|[吗嘛么]|没有|了没)[\s~～。.!！]*$")
_ZH_SENTENCE_END = re.compile(r"[。！？!?~～…]+(?=[^\s。！？!?~～…])")
# "Any/all" and not a question: 我什么都知道, 哪个都行, 谁都可以.
_ZH_ANY = re.compile("(?:什么|哪个|哪儿|哪里|哪|谁)都")
# Asking the listener for something: 给我推荐…, 帮我…, 告诉我….
_ZH_FOR_ME = re.compile("^(?:给我|帮我|告诉我|教我)|[给帮]我(?:推荐|点|来|讲|说|找|想|看看)")
# A question about one's own life is short: longer messages are conversation with a question in it.
PERSONAL_QUESTION_WORDS = 20
PERSONAL_QUESTION_HAN = 30


def personal_question(text: str) -> bool:
    """True for a short question about the person's own life ("can I eat prawns?", "who's our vet?", "my
    boss?", "我老板？", "狗怕什么？"): memory is wanted, so the relevance floor may keep a memory that stands
    out from the rest of the person's memories (``RelevanceFloor.hybrid_lift``)."""
    prose = text.strip()
    if _HAN.search(prose):
        if len(_HAN.findall(prose)) > PERSONAL_QUESTION_HAN or prose.startswith("你"):
            return False
        if _ZH_SENTENCE_END.search(prose):
            return False  # several sentences: conversation with a question in it
        first_person = _ZH_FIRST_PERSON.search(prose) is not None
        asks = _ZH_ASKED.search(prose) or (len(_HAN.findall(prose)) <= ZH_SHORT_HAN and _ZH_WH.search(prose))
        if not asks or _ZH_ANY.search(prose) or _ZH_FOR_ME.search(prose) or _zh_asks_the_listener(prose):
            return False
        if "你" in prose and not _ZH_ABOUT_ME.search(prose):
            return False  # what the listener knows, thinks or does
        return first_person or _zh_everyday_question(prose, first_person)
    words = _EN_WORD.findall(prose)
    if not words or len(words) > PERSONAL_QUESTION_WORDS or _EN_SENTENCE_END.search(prose):
        return False  # several sentences: conversation with a question in it
    question = "?" in prose or _EN_QUESTION_START.match(prose) is not None
    if not question:
        return False
    if _en_short_question(prose, words) or _EN_FIRST_PERSON_QUESTION.search(prose):
        return True
    if _EN_SOMEONE.search(prose) and not _EN_YOU.search(prose):
        return True  # "How old is Mia?": someone of the person's life, not the listener's
    return _EN_POSSESSIVE.search(prose) is not None or _en_everyday_question(prose, question)


def _strip_code(text: str) -> tuple[str, bool]:
    """The message without fenced code, and whether code made up most of it."""
    without = _FENCE.sub(" ", text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    code_lines = sum(1 for ln in lines if _CODE_LINE.match(ln))
    mostly_code = len(without.strip()) < 0.4 * len(text.strip()) or (
        len(lines) >= 3 and code_lines > len(lines) / 2
    )
    return without, mostly_code


def should_retrieve(text: str, known_projects: frozenset[str] | set[str] = frozenset()) -> bool:
    """True when the message may need long-term memory. Pure, fast; errs on the side of recall."""
    stripped = text.strip()
    if len(stripped) < (ZH_MIN_CHARS if _HAN.search(stripped) else MIN_CHARS):
        return False
    if stripped.lower().strip(" .!。！~～") in _ACKS:
        return False
    prose, mostly_code = _strip_code(stripped)
    if mostly_code:
        return False
    lowered = prose.lower()
    if any(p.lower() in lowered for p in known_projects if p):
        return True
    if _HAN.search(prose):
        return _zh_rules(prose)
    return _en_rules(prose)


def _zh_everyday_question(prose: str, first_person: bool) -> bool:
    """我有猫吗？/ 我腰不好吗 (a yes/no question about oneself), 狗怕什么？ (the everyday things of a life),
    王磊是干什么的？ (what is asked about a person); not what is asked of the listener (你多大了？)."""
    if not _ZH_ASKS.search(prose) or prose.lstrip().startswith("你"):
        return False
    han = len(_HAN.findall(prose))
    # Not a bare 我呢？ or 说我吗？: three characters ask only as a short form ("我老板？").
    own_question = first_person and (
        han > ZH_MIN_CHARS or (han == ZH_MIN_CHARS and not _ZH_PARTICLE_END.search(prose))
    )
    if own_question and _ZH_QUESTION.search(prose):
        return True
    if _ZH_PERSON_ATTRIBUTE.search(prose):
        return True
    # A thing of the household as the topic, at the start ("狗怕什么？", "家里的备用钥匙在哪？"), not a
    # word in passing; and not "what is X?" (猫驴子是什么？), which asks for general knowledge.
    if _ZH_WHAT_IS.search(prose):
        return False
    return any(thing.start() <= ZH_TOPIC_CHARS for thing in _ZH_EVERYDAY.finditer(prose))


# Where the topic of a short Chinese question sits: within its first characters (狗怕什么,
# 家里的备用钥匙在哪).
ZH_TOPIC_CHARS = 4
_ZH_PARTICLE_END = re.compile(r"[吗嘛呢么][?？\s]*$")
_ZH_WHAT_IS = re.compile(r"是(?:什么|啥)(?:东西)?[?？\s]*$")


# Asking the listener's opinion or a favour: "你觉得呢", "能帮我个忙吗".
_ZH_TO_THE_LISTENER = re.compile("你觉得|你认为|你说呢|你能不能|你可以|能帮我|可以帮我|帮我个忙")


def _zh_asks_the_listener(prose: str) -> bool:
    """你叫什么名字？/ 你喜欢音乐吗？/ 我该怎么称呼你？: a question about the assistant, not the person."""
    bare = prose.strip().rstrip("?？!！。~～ ")
    if not _ZH_QUESTION.search(prose) or _ZH_ABOUT_ME.search(prose):
        return False
    if len(_HAN.findall(bare)) > ZH_NARRATIVE_HAN or "\n" in bare:
        return False  # a longer message tells something of the person's own, whatever it asks
    if bare.startswith("你") and "我" not in bare:
        return True
    if _ZH_TO_THE_LISTENER.search(bare):
        return True
    return bare.endswith("你") and "我的" not in bare


def _zh_rules(prose: str) -> bool:
    if _ZH_MEMORY_CUE.search(prose) or _ZH_ABOUT_ME.search(prose):
        return True
    if _zh_asks_the_listener(prose):
        return False
    if _ZH_PERSONAL_TOPIC.search(prose):
        return True
    first_person = _ZH_FIRST_PERSON.search(prose) is not None
    if _zh_everyday_question(prose, first_person):
        return True
    han = len(_HAN.findall(prose))
    if first_person and han >= ZH_NARRATIVE_HAN:
        return True
    if first_person and _ZH_WH.search(prose) and (_ZH_QUESTION_END.search(prose) or han <= ZH_SHORT_HAN):
        return True  # 我住在哪？ 我对什么过敏 我几点的飞机
    return first_person and _ZH_QUESTION.search(prose) is not None and han >= ZH_NARRATIVE_HAN // 2


def _en_short_question(prose: str, words: list[str]) -> bool:
    """ "My boss?", "Our vet?", "The dog's name?": a short question about one's own things."""
    return prose.rstrip().endswith("?") and bool(words) and words[0].lower() in {"my", "our", "the"}


def _en_everyday_question(prose: str, question: bool) -> bool:
    """A yes/no question about oneself, the household's things, or the everyday things of a life."""
    modal = _EN_MODAL_I.search(prose)
    if question and modal and modal.group(1).lower() not in _EN_SMALL_TALK_VERBS:
        return True
    return question and (_EN_OURS.search(prose) is not None or _EN_EVERYDAY.search(prose) is not None)


def _en_rules(prose: str) -> bool:
    words = _EN_WORD.findall(prose)
    if len(words) < 3:
        return len(words) >= 2 and _en_short_question(prose, words)
    if _EN_MEMORY_CUE.search(prose) or _EN_PERSONAL_TOPIC.search(prose):
        return True
    possessive = _EN_POSSESSIVE.search(prose) is not None
    past_question = _EN_PAST_QUESTION.search(prose) is not None
    question = "?" in prose or past_question
    asks = question or _EN_QUESTION_START.match(prose) is not None  # "where do I live" without the "?"
    if _EN_ABOUT_ME.search(prose) or (asks and _EN_FIRST_PERSON_QUESTION.search(prose)):
        return True
    if _en_everyday_question(prose, asks):
        return True
    # A question about a name, a past event, or the user's own things.
    if question and (past_question or possessive or _EN_NAME.search(prose)):
        return True
    if _EN_I.search(prose) and _EN_LIFE.search(prose):
        return True
    return possessive and len(words) >= EN_NARRATIVE_WORDS
