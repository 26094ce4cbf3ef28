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
  (docs/architecture.md, "Retrieval").

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


def _zh_rules(prose: str) -> bool:
    if _ZH_MEMORY_CUE.search(prose) or _ZH_PERSONAL_TOPIC.search(prose) or _ZH_ABOUT_ME.search(prose):
        return True
    first_person = _ZH_FIRST_PERSON.search(prose) is not None
    han = len(_HAN.findall(prose))
    if first_person and han >= ZH_NARRATIVE_HAN:
        return True
    if first_person and _ZH_WH.search(prose) and (_ZH_QUESTION_END.search(prose) or han <= ZH_SHORT_HAN):
        return True  # 我住在哪？ 我对什么过敏 我几点的飞机
    return first_person and _ZH_QUESTION.search(prose) is not None and han >= ZH_NARRATIVE_HAN // 2


def _en_rules(prose: str) -> bool:
    words = _EN_WORD.findall(prose)
    if len(words) < 3:
        return False
    if _EN_MEMORY_CUE.search(prose) or _EN_PERSONAL_TOPIC.search(prose):
        return True
    possessive = _EN_POSSESSIVE.search(prose) is not None
    past_question = _EN_PAST_QUESTION.search(prose) is not None
    question = "?" in prose or past_question
    asks = question or _EN_QUESTION_START.match(prose) is not None  # "where do I live" without the "?"
    if _EN_ABOUT_ME.search(prose) or (asks and _EN_FIRST_PERSON_QUESTION.search(prose)):
        return True
    # A question about a name, a past event, or the user's own things.
    if question and (past_question or possessive or _EN_NAME.search(prose)):
        return True
    if _EN_I.search(prose) and _EN_LIFE.search(prose):
        return True
    return possessive and len(words) >= EN_NARRATIVE_WORDS
